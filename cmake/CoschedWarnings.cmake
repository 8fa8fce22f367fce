# Project-wide warning set, applied per target with cosched_warnings(<target>).
function(cosched_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
      -Wcast-align -Wunused -Woverloaded-virtual -Wformat=2>
    $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wpedantic -Wshadow -Wformat=2>)
  if(COSCHED_SANITIZE)
    target_compile_options(${target} PRIVATE ${COSCHED_SANITIZE_FLAGS})
    target_link_options(${target} PRIVATE ${COSCHED_SANITIZE_FLAGS})
  endif()
endfunction()
