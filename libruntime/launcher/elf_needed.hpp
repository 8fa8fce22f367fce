// Reads the DT_NEEDED entries of an ELF executable, so cosched-run can tell a libgomp binary from a
// libomp one without running it.
#pragma once

#include <string>
#include <vector>

#include "cosched/error.hpp"

namespace cosched::launcher {

Result<std::vector<std::string>> elf_needed(const std::string& path);

}  // namespace cosched::launcher
