// The progress line of long runs: simulated time, jobs finished, wall time. Written to stderr only when it
// is a terminal (scripts and CI logs stay clean), at most four times a second.
#pragma once

#include <chrono>
#include <cstddef>

namespace cosched::sim {

class ProgressLine {
 public:
  explicit ProgressLine(bool wanted);
  void update(double sim_time, std::size_t finished, std::size_t total);
  void finish();  // clears the line

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace cosched::sim
