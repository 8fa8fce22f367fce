# Precompiled headers for the daemon's, the tools' and the tests' C++ targets: cosched_precompile(<target> [GTEST]).
#
# Why: a good part of a translation unit's compile time here is parsing the same two headers. nlohmann/json
# alone takes 2.6 s to parse on the 2-vCPU development guest and reaches most of rm/, qs/ and sim/ through
# job.hpp and accounting.hpp; gtest/gtest.h takes 2.2 s in each of the ~75 test files. Measured on five files of
# cosched_rm_core at -O2 -g1: 27.7 s without a PCH, 21.9 s with one of json and fmt, 23.9 s with one that also
# held ten standard headers (a larger PCH costs more to load than it saves). A file that includes neither
# is slower with it (guard.cpp 2.2 s -> 2.9 s), and building the PCH costs about 7 s, so only targets of at
# least COSCHED_PCH_MIN_SOURCES C++ files get one. Code that ends up inside jobs (IN_JOB) gets none: it
# includes none of these headers. COSCHED_PCH=OFF turns them off (to check that every file includes what
# it uses).
option(COSCHED_PCH "Precompile nlohmann/json, fmt and gtest for the daemon's, tools' and tests' larger targets" ON)
set(COSCHED_PCH_MIN_SOURCES 5 CACHE STRING "Fewest C++ files in a target for it to get a precompiled header")

set(COSCHED_PCH_HEADERS <nlohmann/json.hpp> <fmt/format.h>)

# REUSE_FROM <owner>: the target uses <owner>'s PCH instead of building its own (the unit-test binaries share
# one: tests/CMakeLists.txt). ALWAYS: a PCH whatever the number of files (such an owner has one).
function(cosched_precompile target)
  if(NOT COSCHED_PCH)
    return()
  endif()
  cmake_parse_arguments(P "GTEST;ALWAYS" "REUSE_FROM" "" ${ARGN})
  if(P_REUSE_FROM)
    target_precompile_headers(${target} REUSE_FROM ${P_REUSE_FROM})
    return()
  endif()
  get_target_property(sources ${target} SOURCES)
  list(FILTER sources INCLUDE REGEX "\\.(cpp|cc|cxx)$")
  list(LENGTH sources count)
  if(count LESS COSCHED_PCH_MIN_SOURCES AND NOT P_ALWAYS)
    return()
  endif()
  set(headers ${COSCHED_PCH_HEADERS})
  if(P_GTEST)
    list(APPEND headers <gtest/gtest.h>)
  endif()
  # C files of the same target (none of these headers is C) get no PCH.
  set(cxx_headers "")
  foreach(h IN LISTS headers)
    list(APPEND cxx_headers "$<$<COMPILE_LANGUAGE:CXX>:${h}>")
  endforeach()
  target_precompile_headers(${target} PRIVATE ${cxx_headers})
endfunction()
