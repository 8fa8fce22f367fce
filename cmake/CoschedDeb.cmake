# The Debian package: `cpack -G DEB` in the build directory writes cosched_<version>_<arch>.deb, which
# `apt install ./cosched_*.deb` installs with its dependencies (docs/usage.md, "As a Debian package").
#
# It holds what `cmake --install --prefix /usr` installs (the CPack staging runs the same install rules, with
# DESTDIR, so the systemd unit and cosched.pc name /usr), except the SPANK plugin's place, plus the files of
# the component deb_system that only a system package may install (slurm/CMakeLists.txt): the plugin in
# Slurm's plugin directory, the plugstack.conf.d line commented out and the prolog's settings in /etc.
include_guard(GLOBAL)

set(CPACK_PACKAGE_NAME cosched)
set(CPACK_PACKAGE_VENDOR cosched)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(COSCHED_PACKAGE_MAINTAINER "cosched maintainers <maintainers@users.noreply.a-seed-a27a5a9a.example>"
  CACHE STRING "Maintainer field of the Debian package")
set(CPACK_PACKAGE_CONTACT "${COSCHED_PACKAGE_MAINTAINER}")
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# The programs and libraries without their debug information, as Debian ships them (RelWithDebInfo's
# cosched-rm is 52 MB with it); the build tree keeps it.
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "${PROJECT_DESCRIPTION}
cosched-rm divides a node's CPUs among the OpenMP jobs that run on it and
resizes their teams; libcosched, preloaded into unmodified OpenMP programs
(LLVM libomp's OMPT interface), measures them and applies its decisions.
Includes cosched-run, cosched-ctl, qsubmit, cosched-sim, a systemd unit for
cosched-rm and a Slurm SPANK plugin (disabled until enabled in
/etc/slurm/plugstack.conf.d/cosched.conf).")

# Paths as on the installed system: CMAKE_INSTALL_PREFIX is /usr while the install runs (DESTDIR staging),
# which is what the unit file and cosched.pc are written with, and what lets /etc be named absolutely.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)

# One package from the default install and the deb_system component; not the plugin's `cmake --install`
# place (spank_in_prefix): Slurm finds it in its own plugin directory.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_COMPONENTS_ALL Unspecified deb_system)

# Depends: every library our programs and libraries link, read from the ELF files by dpkg-shlibdeps (hwloc,
# PAPI, Open MPI, yaml-cpp, libgomp, libstdc++, ...), plus what they load by path, which no ELF file names:
# LLVM's libomp, preloaded into gcc programs (COSCHED_LIBOMP_PRELOAD), named by the Debian package that
# owns it on the build machine, and python3 for cosched-report. The figure of cosched-report needs matplotlib;
# qsubmit's Slurm mode and the plugin need Slurm, which a site installs on its own.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(_cosched_runtime_depends python3)
find_program(COSCHED_DPKG_QUERY dpkg-query)
if(COSCHED_DPKG_QUERY)
  execute_process(COMMAND ${COSCHED_DPKG_QUERY} -S ${COSCHED_LIBOMP_PRELOAD}
    OUTPUT_VARIABLE _libomp_owner ERROR_QUIET RESULT_VARIABLE _libomp_rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  # "libomp5-14:amd64: /usr/lib/llvm-14/lib/libomp.so.5"
  if(_libomp_rc EQUAL 0 AND _libomp_owner MATCHES "^([^:, ]+)")
    list(PREPEND _cosched_runtime_depends ${CMAKE_MATCH_1})
  endif()
endif()
if(NOT _cosched_runtime_depends MATCHES "libomp")
  message(STATUS "cosched: no Debian package owns ${COSCHED_LIBOMP_PRELOAD}; the .deb will not depend on libomp")
endif()
list(JOIN _cosched_runtime_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS python3-matplotlib)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "slurmd, slurm-client")

# dpkg keeps a site's edits of these files across upgrades and removals (conffiles).
set(_conffiles)
if(TARGET spank_cosched)
  list(APPEND _conffiles /etc/slurm/plugstack.conf.d/cosched.conf /etc/cosched/slurm-prolog.conf)
endif()
if(_conffiles)
  list(JOIN _conffiles "\n" _conffiles_text)
  file(WRITE ${PROJECT_BINARY_DIR}/deb/conffiles "${_conffiles_text}\n")
  set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/deb/conffiles)
  set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
endif()

include(CPack)
