// Which OpenMP runtime a program will run with, and what cosched-run tells the user about it: the bridge
// between the loader model (elf_closure.hpp) and the launch plan (launch_env.cpp).
#pragma once

#include <string>
#include <vector>

#include "openmp_runtimes.hpp"

namespace cosched::launcher {

struct ProgramRuntime {
  OmpRuntime kind = OmpRuntime::none;
  bool readable = false;           // the program is an ELF file whose closure was walked
  std::vector<std::string> notes;  // for -v: what was found and why (no trailing newline)
  std::string warning;             // an unsteerable runtime: the one line the user gets
};

// `ld_library_path` and `ld_preload` are the values the program will see.
ProgramRuntime program_runtime(const std::string& program, const std::string& ld_library_path,
                               const std::string& ld_preload);

// The -v line for a program that is not an ELF file we can read (`why`); a script gets its own line.
std::string unreadable_program_note(const std::string& program, const std::string& why, bool libomp_preloaded);

}  // namespace cosched::launcher
