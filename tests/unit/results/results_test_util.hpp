// Helpers the results tests share: a written file's lines, and the Paraver trace of a run placed as
// qsubmit places it.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "qs/trace_placement.hpp"
#include "qs/trace_writers.hpp"

namespace cosched::results::test_util {

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline ParaverTrace paraver_of(const Run& run) { return paraver_trace(run, place_on_cpus(run), run.ml); }

}  // namespace cosched::results::test_util
