# One place for every program of the build tree: build/<preset>/bin holds a link to each cosched command
# (next to the example programs already built there), so `export PATH="$PWD/build/release/bin:$PATH"` is
# the one step a user needs. Links, not copies: the programs find libcosched and the example programs from
# their real location (/proc/self/exe resolves the link), exactly as when run from their own directories.
set(COSCHED_PROGRAMS cosched-rm cosched-ctl cosched-run qsubmit cosched-sim cosched-swfgen cosched-cluster)
set(_link_commands)
set(_linked)
foreach(program IN LISTS COSCHED_PROGRAMS)
  if(TARGET ${program})
    list(APPEND _link_commands
      COMMAND ${CMAKE_COMMAND} -E create_symlink $<TARGET_FILE:${program}> ${PROJECT_BINARY_DIR}/bin/${program})
    list(APPEND _linked ${program})
  endif()
endforeach()
# A target of its own (add_custom_command(TARGET) must sit in each program's directory): re-linking on
# every build costs a few milliseconds.
add_custom_target(cosched_bin_links ALL ${_link_commands} VERBATIM)
if(_linked)
  add_dependencies(cosched_bin_links ${_linked})
endif()
# The report script is Python: linked at configure time, it is up to date as soon as the source is.
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
file(CREATE_LINK ${PROJECT_SOURCE_DIR}/scripts/cosched-report ${PROJECT_BINARY_DIR}/bin/cosched-report SYMBOLIC)

# What a user reads and replays goes with the installed programs.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md")
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/workloads/ DESTINATION ${CMAKE_INSTALL_DATADIR}/cosched/workloads)

# bash completion: one file, installed under every command's name (bash-completion loads a completion
# file by the name of the command being completed).
foreach(command cosched-rm cosched-ctl cosched-run qsubmit cosched-sim cosched-swfgen cosched-report)
  install(FILES ${PROJECT_SOURCE_DIR}/scripts/completion/cosched.bash
    DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME ${command})
endforeach()
