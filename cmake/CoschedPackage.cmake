# Installation: binaries, libcosched, public headers, a CMake package config and a pkg-config file.
include(CMakePackageConfigHelpers)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/CoschedConfig.cmake.in
  ${PROJECT_BINARY_DIR}/CoschedConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Cosched)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/CoschedConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/CoschedConfig.cmake ${PROJECT_BINARY_DIR}/CoschedConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Cosched)
file(RELATIVE_PATH COSCHED_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
configure_file(${PROJECT_SOURCE_DIR}/cmake/cosched.pc.in ${PROJECT_BINARY_DIR}/cosched.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cosched.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(FILES ${PROJECT_SOURCE_DIR}/include/cosched/selfanalyzer.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cosched OPTIONAL)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/cosched-report DESTINATION ${CMAKE_INSTALL_BINDIR})
