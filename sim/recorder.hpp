// What a simulated run leaves behind, in qsubmit's data model (qs/results.hpp): one JobRecord per workload
// job (start, end, the CPUs it held over time) and the multiprogramming level over time.
#pragma once

#include <cstddef>
#include <vector>

#include "qs/results.hpp"
#include "sim/app_model.hpp"

namespace cosched::sim {

class Recorder {
 public:
  explicit Recorder(const std::vector<JobSpec>& jobs);

  void started(std::size_t index, double t) { jobs_[index].start = t; }
  // A closed workload's job is submitted when its predecessor ends (plus think time), not at field 2.
  void submitted(std::size_t index, double t) { jobs_[index].submit = t; }
  void ended(std::size_t index, double t);
  // From t on the job holds `cpus` CPUs (0: none, e.g. stopped) listed in cpu_list (may be empty).
  void allocation(std::size_t index, double t, int cpus, std::vector<int> cpu_list);
  // The multiprogramming level at t; several samples at one instant keep the last.
  void ml(double t, int running, int queued);

  std::vector<results::JobRecord> take_jobs() { return std::move(jobs_); }
  std::vector<results::MlSample> take_ml() { return std::move(ml_); }

 private:
  void close_segment(std::size_t index, double t);

  std::vector<results::JobRecord> jobs_;
  std::vector<char> open_;  // the job's last segment is still open
  std::vector<results::MlSample> ml_;
};

}  // namespace cosched::sim
