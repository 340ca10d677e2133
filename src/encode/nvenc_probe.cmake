# zerohop_nvenc_probe: probeNvenc() and the run-time loaders of libnvidia-encode.so.1 and libcuda.so.1.
# No FFmpeg and no CUDA toolkit: the NVENC API header and the CUDA driver types come from
# nv-codec-headers (Debian: libffmpeg-nvenc-dev, /usr/include/ffnvcodec). Everything is dlopen'ed,
# so it builds in every configuration, the GPU machine's gpu-only one included (which carries the
# headers in .deps/ffnvcodec). Without the headers the probe answers "NVENC support not built".
# Included from src/encode (media builds) and tests/nvenc (builds without media), once.
include_guard(GLOBAL)

set(_zerohop_encode_dir ${CMAKE_CURRENT_LIST_DIR})
find_path(ZEROHOP_NVENC_HEADERS_DIR nvEncodeAPI.h
  HINTS ${PROJECT_SOURCE_DIR}/.deps/ffnvcodec
  PATHS /usr/include/ffnvcodec /usr/local/include/ffnvcodec
  DOC "Folder holding nv-codec-headers' nvEncodeAPI.h and dynlink_cuda.h (Debian: /usr/include/ffnvcodec)")
if(ZEROHOP_NVENC_HEADERS_DIR AND EXISTS ${ZEROHOP_NVENC_HEADERS_DIR}/dynlink_cuda.h)
  set(ZEROHOP_HAVE_NVENC_HEADERS ON CACHE INTERNAL "nv-codec-headers found")
else()
  set(ZEROHOP_HAVE_NVENC_HEADERS OFF CACHE INTERNAL "nv-codec-headers found")
endif()
message(STATUS "zerohop: NVENC headers ${ZEROHOP_HAVE_NVENC_HEADERS} (${ZEROHOP_NVENC_HEADERS_DIR})")

if(ZEROHOP_HAVE_NVENC_HEADERS)
  add_library(zerohop_nvenc_probe STATIC
    ${_zerohop_encode_dir}/cuda_driver.cpp ${_zerohop_encode_dir}/nvenc_choice.cpp ${_zerohop_encode_dir}/nvenc_describe.cpp
    ${_zerohop_encode_dir}/nvenc_probe.cpp ${_zerohop_encode_dir}/nvenc_status.cpp
    ${_zerohop_encode_dir}/shared_library.cpp)
  # The SDK headers are for zerohop's own sources (src/encode), never the public headers.
  target_include_directories(zerohop_nvenc_probe SYSTEM PRIVATE ${ZEROHOP_NVENC_HEADERS_DIR})
else()
  add_library(zerohop_nvenc_probe STATIC
    ${_zerohop_encode_dir}/nvenc_choice.cpp ${_zerohop_encode_dir}/nvenc_describe.cpp
    ${_zerohop_encode_dir}/nvenc_probe_unbuilt.cpp)
endif()
add_library(zerohop::nvenc_probe ALIAS zerohop_nvenc_probe)
target_link_libraries(zerohop_nvenc_probe PUBLIC zerohop::core PRIVATE zerohop_internal ${CMAKE_DL_LIBS})
zerohop_target_warnings(zerohop_nvenc_probe)
