# Installation: binaries, libcosched, public headers, a CMake package config and a pkg-config file.
include(CMakePackageConfigHelpers)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/CoschedConfig.cmake.in
  ${PROJECT_BINARY_DIR}/CoschedConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Cosched)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/CoschedConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/CoschedConfig.cmake ${PROJECT_BINARY_DIR}/CoschedConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Cosched)
# The prefix is known only at install time (`cmake --install --prefix P`), so cosched.pc is written then,
# with P normalised: pkg-config prints paths as written, and `${pcfiledir}/../..` gave users
# `.../pkgconfig/../..//lib`. (pkg-config --define-prefix still relocates an installed tree.)
install(CODE "
  set(_cosched_pc_in \"${PROJECT_SOURCE_DIR}/cmake/cosched.pc.in\")
  set(_cosched_pc_out \"${PROJECT_BINARY_DIR}/cosched.pc\")
  set(CMAKE_INSTALL_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(CMAKE_INSTALL_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
  set(PROJECT_DESCRIPTION \"${PROJECT_DESCRIPTION}\")
  set(PROJECT_VERSION \"${PROJECT_VERSION}\")")
install(CODE [[
  set(COSCHED_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  cmake_path(NORMAL_PATH COSCHED_PC_PREFIX)
  string(REGEX REPLACE "(.)/+$" "\\1" COSCHED_PC_PREFIX "${COSCHED_PC_PREFIX}")
  configure_file("${_cosched_pc_in}" "${_cosched_pc_out}" @ONLY)
]])
install(FILES ${PROJECT_BINARY_DIR}/cosched.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(FILES ${PROJECT_SOURCE_DIR}/include/cosched/selfanalyzer.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cosched OPTIONAL)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/cosched-report DESTINATION ${CMAKE_INSTALL_BINDIR})
