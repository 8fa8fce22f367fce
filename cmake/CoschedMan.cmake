# Man pages, built from each program's --help and the exit-status table of docs/usage.md (scripts/make-man):
# a page cannot drift from the program it describes. build/<preset>/man/manN/, installed to share/man.
set(COSCHED_MAN_PYTHON /usr/bin/python3)
set(COSCHED_MAN_DIR ${PROJECT_BINARY_DIR}/man)
set(_man_pages)

# cosched_man_page(<name> <section> <summary> [SUBCOMMANDS ...] COMMAND ...)
function(cosched_man_page name section summary)
  cmake_parse_arguments(M "" "" "SUBCOMMANDS;COMMAND;DEPENDS" ${ARGN})
  set(out ${COSCHED_MAN_DIR}/man${section}/${name}.${section})
  set(subs)
  foreach(sub IN LISTS M_SUBCOMMANDS)
    list(APPEND subs --subcommand ${sub})
  endforeach()
  add_custom_command(OUTPUT ${out}
    COMMAND ${COSCHED_MAN_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/make-man --name ${name} --section ${section}
            --summary ${summary} --usage-md ${PROJECT_SOURCE_DIR}/docs/usage.md --version ${PROJECT_VERSION}
            --out ${out} ${subs} -- ${M_COMMAND}
    DEPENDS ${PROJECT_SOURCE_DIR}/scripts/make-man ${PROJECT_SOURCE_DIR}/docs/usage.md ${M_DEPENDS}
    COMMENT "man page ${name}(${section})" VERBATIM)
  install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
  set(_man_pages ${_man_pages} ${out} PARENT_SCOPE)
endfunction()

function(cosched_man_page_of target section summary)
  if(TARGET ${target})
    cosched_man_page(${target} ${section} "${summary}" ${ARGN} COMMAND $<TARGET_FILE:${target}> DEPENDS ${target})
    set(_man_pages ${_man_pages} PARENT_SCOPE)
  endif()
endfunction()

cosched_man_page_of(cosched-rm 8 "the cosched resource manager daemon")
cosched_man_page_of(cosched-ctl 1 "inspect and steer a running cosched-rm"
  SUBCOMMANDS status why policy set may-start policies shutdown history pairs)
cosched_man_page_of(cosched-run 1 "run an unmodified OpenMP program under cosched-rm")
cosched_man_page_of(qsubmit 1 "replay an SWF workload with real jobs under cosched-rm or natively")
cosched_man_page_of(cosched-sim 1 "replay an SWF workload on a simulated machine with cosched's policies")
cosched_man_page_of(cosched-swfgen 1 "generate synthetic workloads in the Standard Workload Format")
cosched_man_page(cosched-report 1 "compare cosched run directories in a table and a figure"
  COMMAND ${COSCHED_MAN_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/cosched-report
  DEPENDS ${PROJECT_SOURCE_DIR}/scripts/cosched-report)
add_custom_target(cosched_man ALL DEPENDS ${_man_pages})
