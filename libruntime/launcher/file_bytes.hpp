// The whole content of a regular file, read with POSIX calls: what cosched-run reads before it execs a job
// (the program's ELF file, the libraries it loads, the loader's cache), so every job's start-up pays it.
#pragma once

#include <string>

#include "cosched/error.hpp"

namespace cosched::launcher {

// An error names the path: it cannot be opened, or it is no regular file (a directory, a FIFO).
Result<std::string> regular_file_bytes(const std::string& path);

}  // namespace cosched::launcher
