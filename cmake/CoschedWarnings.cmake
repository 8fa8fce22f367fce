# Project-wide warning set, applied per target with cosched_warnings(<target> [IN_JOB] [GTEST] [ALWAYS]
# [REUSE_FROM owner]); it also gives the target precompiled headers (CoschedPch.cmake; GTEST adds gtest/gtest.h
# to them, ALWAYS and REUSE_FROM are described there).
#
# IN_JOB marks code that ends up inside libcosched, which is preloaded into arbitrary programs: it is never
# built with sanitizers (an instrumented preload needs its sanitizer runtime first in the process, which an
# unmodified program does not have), so the asan preset still runs real jobs.
include(CoschedPch)

function(cosched_warnings target)
  cmake_parse_arguments(W "IN_JOB" "" "" ${ARGN})
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
      -Wcast-align -Wunused -Woverloaded-virtual -Wformat=2>
    $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wpedantic -Wshadow -Wformat=2>)
  if(NOT W_IN_JOB)
    cosched_precompile(${target} ${W_UNPARSED_ARGUMENTS})
  endif()
  if(COSCHED_SANITIZE AND NOT W_IN_JOB)
    target_compile_options(${target} PRIVATE ${COSCHED_SANITIZE_FLAGS} ${COSCHED_SANITIZE_COMPILE_FLAGS})
    target_link_options(${target} PRIVATE ${COSCHED_SANITIZE_FLAGS})
  endif()
endfunction()
