// Reads what cosched-run needs to know about an ELF executable without running it: its DT_NEEDED entries
// (a libgomp binary or a libomp one) and whether it holds threadprivate data (thread-local storage, or
// imports of libomp's __kmpc_threadprivate* routines), which fixes its team size.
#pragma once

#include <string>
#include <vector>

#include "cosched/error.hpp"

namespace cosched::launcher {

struct ElfFacts {
  std::vector<std::string> needed;  // DT_NEEDED sonames
  bool tls = false;                 // a PT_TLS segment: thread-local (threadprivate) variables
  bool threadprivate_imports = false;  // undefined __kmpc_threadprivate* symbols
};

Result<ElfFacts> elf_facts(const std::string& path);

}  // namespace cosched::launcher
