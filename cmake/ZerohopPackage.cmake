# The installed product: libzerohop.so (SOVERSION, hidden symbols but the ZEROHOP_API ones), the
# public headers of the parts this build has, zerohopConfig.cmake with zerohop::zerohop (and a
# component per optional part), zerohop.pc, the CLI and the emulated camera.
# Included from the top-level CMakeLists.txt once every stage library exists.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Every stage library goes into the one shared library, whole (the share's CUDA transport registers
# itself from a static initialiser). Its parts keep their hidden visibility; cmake/libzerohop.map
# exports only zerohop's own names.
set(_zerohop_parts zerohop_core zerohop_source zerohop_capture zerohop_share zerohop_capi zerohop_gpu_path)
set(ZEROHOP_HAS_GPU_01 0)
set(ZEROHOP_HAS_STREAM_01 0)
if(TARGET zerohop_gpu)
  list(APPEND _zerohop_parts zerohop_gpu zerohop_share_cuda)
  set(ZEROHOP_HAS_GPU_01 1)
endif()
if(ZEROHOP_WITH_MEDIA)
  list(APPEND _zerohop_parts zerohop_rtsp zerohop_nvenc_probe zerohop_convert zerohop_encode zerohop_audio zerohop_stream
    zerohop_record zerohop_pipeline)
  list(APPEND _zerohop_parts zerohop_ffmpeg)  # AVFrames in and out (include/zerohop/ffmpeg.hpp)
  set(ZEROHOP_HAS_STREAM_01 1)
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/version.h.in ${PROJECT_BINARY_DIR}/include/zerohop/version.h @ONLY)

add_library(zerohop_lib SHARED ${PROJECT_SOURCE_DIR}/src/capi/library.cpp)
add_library(zerohop::zerohop ALIAS zerohop_lib)
# The parts' archives whole (their objects all go in), then the parts as ordinary link items for
# their own dependencies (FFmpeg, GStreamer, the CUDA runtime, ...). CMake's WHOLE_ARCHIVE feature
# cannot be used: the parts also reach the link line through each other's dependencies.
set(_zerohop_whole "LINKER:--whole-archive")
foreach(_part IN LISTS _zerohop_parts)
  list(APPEND _zerohop_whole "$<TARGET_FILE:${_part}>")
endforeach()
list(APPEND _zerohop_whole "LINKER:--no-whole-archive")
target_link_options(zerohop_lib PRIVATE ${_zerohop_whole})
target_link_libraries(zerohop_lib PRIVATE ${_zerohop_parts})
target_include_directories(zerohop_lib INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(zerohop_lib INTERFACE cxx_std_20)
set_target_properties(zerohop_lib PROPERTIES
  OUTPUT_NAME zerohop EXPORT_NAME zerohop VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/libzerohop.map)
target_link_options(zerohop_lib PRIVATE "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/libzerohop.map"
  "LINKER:-z,defs" "LINKER:--exclude-libs,libcudart_static.a")

# ---- install ----------------------------------------------------------------------------------
set(_zerohop_headers buffer_pool.hpp capture.hpp clock.hpp codec.hpp encoded_unit.hpp error.hpp export.h frame.hpp
  frame_input.hpp latency.hpp log.hpp pixel_format.hpp setting_error.hpp share.hpp sinks.hpp
  source.hpp timecode.hpp zerohop.h)
if(ZEROHOP_HAS_GPU_01)
  list(APPEND _zerohop_headers gpu.hpp gpu_convert.hpp gpu_decode.hpp gpu_jpeg.hpp)
endif()
if(ZEROHOP_HAS_STREAM_01)
  list(APPEND _zerohop_headers camera_server.hpp encoder.hpp frame_stream.hpp nvenc.hpp pipeline.hpp sound_decoder.hpp
    stream_server.hpp webrtc_session.hpp)
endif()
# OpenCV views: header-only and opt-in (it includes OpenCV's headers; nothing else includes it).
list(APPEND _zerohop_headers opencv.hpp)
# Vulkan import of host-ring frames: header-only and opt-in too (it includes <vulkan/vulkan.h>; docs/textures.md).
list(APPEND _zerohop_headers vulkan.hpp vulkan_device.hpp)
if(ZEROHOP_HAS_STREAM_01)
  list(APPEND _zerohop_headers ffmpeg.hpp)  # declares AVFrame; includes no FFmpeg header
endif()
list(TRANSFORM _zerohop_headers PREPEND ${PROJECT_SOURCE_DIR}/include/zerohop/)
install(FILES ${_zerohop_headers} ${PROJECT_BINARY_DIR}/include/zerohop/version.h
              ${PROJECT_BINARY_DIR}/include/zerohop/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/zerohop COMPONENT development)
install(TARGETS zerohop_lib EXPORT zerohopTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT development)
install(EXPORT zerohopTargets NAMESPACE zerohop:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/zerohop
        COMPONENT development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/zerohopConfig.cmake.in
  ${PROJECT_BINARY_DIR}/zerohopConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/zerohop)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/zerohopConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/zerohopConfig.cmake ${PROJECT_BINARY_DIR}/zerohopConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/zerohop COMPONENT development)
file(RELATIVE_PATH ZEROHOP_PC_PREFIX_FROM_PCDIR ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
configure_file(${PROJECT_SOURCE_DIR}/cmake/zerohop.pc.in ${PROJECT_BINARY_DIR}/zerohop.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/zerohop.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT development)

if(TARGET gstzerohop)  # the GStreamer plugin (docs/gstreamer.md)
  install(TARGETS gstzerohop LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/gstreamer-1.0 COMPONENT runtime)
endif()
if(TARGET zerohop_nvrtc_compat)  # NVRTC for GStreamer 1.22's CUDA elements on CUDA 13 (docs/gstreamer.md)
  install(TARGETS zerohop_nvrtc_compat LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/zerohop COMPONENT runtime)
endif()

# The emulated camera: the launcher in bin/, its LD_PRELOAD shim under lib/zerohop/ (the launcher
# looks there, relative to itself, when the shim is not beside it as in the build tree).
install(TARGETS zerohop-camemu RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(TARGETS zerohop_camemu LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/zerohop COMPONENT runtime)
file(RELATIVE_PATH _zerohop_shim_rel ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR}/zerohop)
target_compile_definitions(zerohop-camemu PRIVATE ZEROHOP_CAMEMU_SHIM_FROM_BINDIR="${_zerohop_shim_rel}")
