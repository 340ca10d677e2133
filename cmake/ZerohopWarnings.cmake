# zerohop_target_warnings(<target>): the project's warning set, for its own C++ sources only.
function(zerohop_target_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wno-missing-field-initializers>)
endfunction()
