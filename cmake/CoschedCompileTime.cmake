# Two cuts in compile time, which is most of what CI spends (docs/performance.md, "Build and CI time").
#
# 1. Unity builds (COSCHED_UNITY_BUILD, ON except in the debug preset). CMake compiles a target's files in
#    batches of COSCHED_UNITY_BATCH, each batch one translation unit, so the headers they share (nlohmann/json,
#    fmt, gtest, the project's own) are parsed and their inline code generated once per batch instead of once
#    per file. Measured on the development guest (g++ 12, -O2 -g1): five unit-test files of test_results took
#    20.5 s one by one and 8.2 s as one unit; cosched-sim's library took 41.6 s and 18.2 s in two clean
#    builds' Ninja logs. Files of one target therefore must not define the same name in an anonymous
#    namespace: shared helpers live in a header (policies/job_list.hpp, tests/unit/*/..._test_util.hpp).
#    The debug preset builds file by file, which is where a file that does not include what it uses shows
#    up (as with COSCHED_PCH=OFF).
option(COSCHED_UNITY_BUILD "Compile each target's files in batches (unity build)" ON)
set(COSCHED_UNITY_BATCH 16 CACHE STRING "Files per unity batch")
if(COSCHED_UNITY_BUILD)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE ${COSCHED_UNITY_BATCH})
endif()

# 2. cosched_command_line(<target> <source>...): sources that only parse the command line with CLI11 and
#    start the program (each tool's main.cpp or options.cpp) are compiled at -O0, alone and without the
#    target's precompiled header (its flags differ). CLI11 2.1 is header-only, and instantiating it is the
#    most expensive compile left: ctl/main.cpp took 14.7 s at -O2 and 8.9 s at -O0 with g++, 24.6 s at -O1
#    and 10.6 s at -O0 in the ASan build (clang). The code runs once per command, so its speed is not
#    measurable; the sanitizers instrument -O0 code as fully as optimised code.
function(cosched_command_line target)
  set_source_files_properties(${ARGN} TARGET_DIRECTORY ${target} PROPERTIES
    COMPILE_OPTIONS -O0 SKIP_PRECOMPILE_HEADERS ON SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
