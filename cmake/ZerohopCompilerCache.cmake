# ZEROHOP_CCACHE: compile through ccache when it is installed (scripts/install-deps.sh installs it).
# The cache lives outside the clone (ccache's default, ~/.cache/ccache, or CCACHE_DIR), so a second build
# on the same machine, in any clone or build tree, compiles only what changed. Paths under the source
# directory are hashed relative to it (CCACHE_BASEDIR) and the working directory is left out of the hash
# (CCACHE_NOHASHDIR), so two clones in different folders share their objects; debug line tables then keep
# the first clone's directory, which only matters to a debugger pointed at the second.
# Every build of the tree (README's `cmake --preset default`, scripts/test.sh) goes through the same
# launcher, so the same objects serve both and neither rebuilds what the other built.
option(ZEROHOP_CCACHE "Compile through ccache when it is found" ON)
if(ZEROHOP_CCACHE)
  find_program(ZEROHOP_CCACHE_PROGRAM ccache)
  if(ZEROHOP_CCACHE_PROGRAM)
    set(_zerohop_launcher ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${CMAKE_SOURCE_DIR} CCACHE_NOHASHDIR=true
        ${ZEROHOP_CCACHE_PROGRAM})
    foreach(lang C CXX CUDA)
      if(NOT DEFINED CMAKE_${lang}_COMPILER_LAUNCHER)
        set(CMAKE_${lang}_COMPILER_LAUNCHER ${_zerohop_launcher})
      endif()
    endforeach()
    message(STATUS "zerohop: compiling through ${ZEROHOP_CCACHE_PROGRAM}")
  endif()
endif()
