# OpenMP toolchains.
#
# cosched has to build OpenMP programs with *both* compilers: clang + LLVM libomp (the OMPT path) and
# gcc + libgomp (binaries that cosched-run moves onto libomp at load time). CMake allows one C compiler per
# project, so programs for the "other" compiler are built with custom commands by cosched_omp_program().

find_program(COSCHED_CLANG NAMES clang-14 clang REQUIRED)
find_program(COSCHED_GCC NAMES gcc-12 gcc REQUIRED)

# LLVM's libomp: the runtime that gcc binaries are moved onto, and the one clang binaries use.
find_library(COSCHED_LIBOMP NAMES omp.so.5 libomp.so.5 omp
  PATHS /usr/lib/llvm-14/lib /usr/lib/x86_64-linux-gnu NO_DEFAULT_PATH)
if(NOT COSCHED_LIBOMP)
  message(FATAL_ERROR "LLVM libomp not found: run scripts/setup (Debian package libomp-dev)")
endif()
get_filename_component(COSCHED_LIBOMP_REAL ${COSCHED_LIBOMP} REALPATH)
get_filename_component(COSCHED_LIBOMP_DIR ${COSCHED_LIBOMP_REAL} DIRECTORY)
# The path cosched-run preloads for gcc binaries: the soname link, which libomp's own OMPT loader prefers.
set(COSCHED_LIBOMP_PRELOAD "${COSCHED_LIBOMP_DIR}/libomp.so.5" CACHE FILEPATH "libomp preloaded into libgomp binaries")

# omp-tools.h ships in clang's resource directory, next to compiler intrinsics that gcc must not see: expose
# just that header through a private include directory in the build tree.
execute_process(COMMAND ${COSCHED_CLANG} -print-resource-dir OUTPUT_VARIABLE _clang_res OUTPUT_STRIP_TRAILING_WHITESPACE)
find_file(COSCHED_OMPT_HEADER omp-tools.h PATHS ${_clang_res}/include /usr/lib/llvm-14/include NO_DEFAULT_PATH)
if(NOT COSCHED_OMPT_HEADER)
  message(FATAL_ERROR "omp-tools.h not found: run scripts/setup (Debian package libomp-dev)")
endif()
set(COSCHED_OMPT_INCLUDE_DIR ${CMAKE_BINARY_DIR}/ompt-include)
set(COSCHED_PROGRAM_DIR ${CMAKE_BINARY_DIR}/bin)
file(MAKE_DIRECTORY ${COSCHED_PROGRAM_DIR})
file(MAKE_DIRECTORY ${COSCHED_OMPT_INCLUDE_DIR})
file(CREATE_LINK ${COSCHED_OMPT_HEADER} ${COSCHED_OMPT_INCLUDE_DIR}/omp-tools.h SYMBOLIC)

# cosched_omp_program(<name> COMPILER clang|gcc SOURCES <src...> [DEFINES <d...>] [INCLUDES <dir...>]
#                     [LINK <lib or target file...>] [DEPENDS <target...>] [FLAGS <flag...>])
# Builds an OpenMP C program with the named compiler into ${COSCHED_PROGRAM_DIR}/<name> (one bin/ directory
# for every example program, so tools and tests find them by name) and creates a target <name> for it. clang programs link LLVM libomp; gcc programs link libgomp (the "unmodified gcc
# binary" case). LINK entries may be generator expressions such as $<TARGET_FILE:cosched>.
function(cosched_omp_program name)
  cmake_parse_arguments(P "" "COMPILER" "SOURCES;DEFINES;INCLUDES;LINK;DEPENDS;FLAGS" ${ARGN})
  if(P_COMPILER STREQUAL "clang")
    set(cc ${COSCHED_CLANG})
    set(omp -fopenmp=libomp -L${COSCHED_LIBOMP_DIR} -Wl,-rpath,${COSCHED_LIBOMP_DIR})
  elseif(P_COMPILER STREQUAL "gcc")
    set(cc ${COSCHED_GCC})
    set(omp -fopenmp)
  else()
    message(FATAL_ERROR "cosched_omp_program(${name}): COMPILER must be clang or gcc")
  endif()
  set(srcs)
  foreach(s IN LISTS P_SOURCES)
    get_filename_component(abs ${s} ABSOLUTE)
    list(APPEND srcs ${abs})
  endforeach()
  set(defs)
  foreach(d IN LISTS P_DEFINES)
    list(APPEND defs -D${d})
  endforeach()
  set(incs)
  foreach(i IN LISTS P_INCLUDES)
    list(APPEND incs -I${i})
  endforeach()
  set(out ${COSCHED_PROGRAM_DIR}/${name})
  add_custom_command(OUTPUT ${out}
    COMMAND ${cc} -O2 -g -std=gnu11 -Wall -MD -MF ${CMAKE_CURRENT_BINARY_DIR}/${name}.d ${P_FLAGS} ${omp} ${defs} ${incs} -o ${out} ${srcs} ${P_LINK} -lm
    DEPENDS ${srcs} ${P_DEPENDS}
    DEPFILE ${CMAKE_CURRENT_BINARY_DIR}/${name}.d
    COMMENT "Building OpenMP program ${name} with ${P_COMPILER}"
    COMMAND_EXPAND_LISTS VERBATIM)
  add_custom_target(${name} ALL DEPENDS ${out})
  if(P_DEPENDS)
    add_dependencies(${name} ${P_DEPENDS})
  endif()
  set_target_properties(${name} PROPERTIES COSCHED_OUTPUT ${out})
endfunction()
