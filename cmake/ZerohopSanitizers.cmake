# ZEROHOP_SANITIZE: build everything (our code and the GoogleTest we build) with sanitizers, for the
# `asan` and `tsan` presets and scripts/test.sh.
#   ""                   off (default)
#   "address;undefined"  ASan + UBSan, stop at the first report (UBSan included: -fno-sanitize-recover)
#   "thread"             TSan
# Sanitizers must cover every object of a process, so this is the one place that sets options for all
# targets (include it before any add_subdirectory). The run-time options (halt_on_error, the
# suppressions in cmake/sanitizers/) travel in the environment: see sanitizerEnvironment below and the
# presets' test environment.
set(ZEROHOP_SANITIZE "" CACHE STRING "Sanitizers for every target: empty, \"address;undefined\" or \"thread\"")

if(ZEROHOP_SANITIZE)
  if("thread" IN_LIST ZEROHOP_SANITIZE AND "address" IN_LIST ZEROHOP_SANITIZE)
    message(FATAL_ERROR "ZEROHOP_SANITIZE: thread and address cannot be combined in one build")
  endif()
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    message(FATAL_ERROR "ZEROHOP_SANITIZE needs GCC or Clang (got ${CMAKE_CXX_COMPILER_ID})")
  endif()
  list(JOIN ZEROHOP_SANITIZE "," _zerohop_sanitizers)
  set(_zerohop_san_flags -fsanitize=${_zerohop_sanitizers} -fno-omit-frame-pointer -fno-optimize-sibling-calls)
  if("undefined" IN_LIST ZEROHOP_SANITIZE)
    list(APPEND _zerohop_san_flags -fno-sanitize-recover=all)
  endif()
  # The presets build these at -O1 with line tables only (-g1): stack traces keep function, file and
  # line, and the build takes ~45 % less time than at -O2 -g (CI's longest phase). GCC's
  # -Wmaybe-uninitialized is unreliable under sanitizer instrumentation at -O1 (false reports inside
  # libstdc++'s <regex>); the default build keeps it.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    list(APPEND _zerohop_san_flags -Wno-maybe-uninitialized)
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${_zerohop_san_flags}>")
  add_link_options(-fsanitize=${_zerohop_sanitizers})
  message(STATUS "zerohop: sanitizers ${_zerohop_sanitizers}")
endif()
