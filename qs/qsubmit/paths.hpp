// Where qsubmit finds the programs it starts: cosched's own tools (cosched-run, cosched-rm) and the programs
// a catalog names as `@name`. The same binary works from the build tree and from an install: the install
// layout is tried first (relative to this executable), then the build tree (paths compiled in by CMake).
#pragma once

#include <string>
#include <vector>

#include "qs/catalog.hpp"

namespace cosched::qsubmit {

// The directory holding this executable (/proc/self/exe), or "" when unknown.
std::string self_directory();

// Directories searched for `@name`, in order: each entry of `program_path` (colon-separated, as in
// $COSCHED_PROGRAM_PATH), the install layout (<self_dir>/../libexec/cosched and its npb/ and microbench/
// subdirectories), the build tree's bin/.
// Empty entries are dropped.
std::vector<std::string> program_directories(const std::string& program_path, const std::string& self_dir);

// program_directories($COSCHED_PROGRAM_PATH, self_directory()) as a catalog lookup.
catalog::ProgramLookup default_program_lookup();

// An executable's path: `name` itself when it holds a '/' (and is executable), else the first match on
// $PATH; "" when there is none.
std::string find_executable(const std::string& name);

// cosched-run and cosched-rm: next to this executable when installed, else in the build tree.
std::string cosched_run_path();
std::string cosched_rm_path();

// Where a run's results go by default: $XDG_DATA_HOME/cosched/runs/qsubmit-<label>-<YYYYmmdd-HHMMSS> (else
// ~/.local/share/..., else /tmp/...), never the current directory.
std::string default_out_dir(const std::string& label);
// The output directory must be new or empty (results of two runs never mix); creates it with jobs/ inside.
// Returns an error message, empty when the directory is ours.
std::string claim_out_dir(const std::string& dir);

}  // namespace cosched::qsubmit
