// What the run records while it goes: per job, the CPUs it held over time (sampled from the RM's status every
// ~100 ms), and the multiprogramming level (running, queued). Samples that repeat the previous one are merged,
// so a job that keeps its CPUs for a minute is one segment, not six hundred.
#pragma once

#include <vector>

#include "qs/results.hpp"

namespace cosched::qsubmit {

class AllocationRecorder {
 public:
  // The job holds `cpus` CPUs (these ones, when known) from `t` on. cpus == 0 (stopped, or not at the RM)
  // closes the open segment and opens none: the trace shows a gap there.
  void observe(double t, int cpus, const std::vector<int>& cpu_list);
  // The job ended (or the run stopped) at `t`: the open segment ends there.
  void finish(double t);

  [[nodiscard]] const std::vector<results::CpuSegment>& segments() const { return segments_; }

 private:
  std::vector<results::CpuSegment> segments_;
  bool open_ = false;  // the last segment still grows
};

class MlRecorder {
 public:
  // Appends a sample when (running, queued) differs from the last one.
  void observe(double t, int running, int queued);
  [[nodiscard]] const std::vector<results::MlSample>& samples() const { return samples_; }

 private:
  std::vector<results::MlSample> samples_;
};

}  // namespace cosched::qsubmit
