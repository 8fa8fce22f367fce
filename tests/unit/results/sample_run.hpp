// Hand-made runs shared by the results tests, with numbers small enough to check by hand (the expected
// values are worked out next to each test).
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

#include "qs/results.hpp"

namespace cosched::results::sample {

inline CpuSegment segment(double t0, double t1, std::vector<int> cpus) {
  CpuSegment s;
  s.t0 = t0;
  s.t1 = t1;
  s.cpus = static_cast<int>(cpus.size());
  s.cpu_list = std::move(cpus);
  return s;
}

inline JobRecord job(std::int64_t id, std::string app, double submit, double start, double end,
                     std::vector<CpuSegment> allocation, int requested = 2) {
  JobRecord j;
  j.id = id;
  j.app = app;
  j.app_class = std::move(app);
  j.submit = submit;
  j.start = start;
  j.end = end;
  j.requested = requested;
  j.allocation = std::move(allocation);
  return j;
}

// 4 CPUs, makespan 20 s:
//   job 1 bt    submit 0, runs [0,10)  on CPUs 0,1
//   job 2 bt    submit 2, runs [4,12)  on CPUs 2,3
//   job 3 apsi  submit 5, runs [10,12) on CPUs 0,1 then [12,20) on CPUs 0-3
//   job 4 apsi  submit 6, never starts
// The ML samples are exactly what derive_ml rebuilds from those times.
inline Run four_job_run() {
  Run run;
  run.name = "pdpa";
  run.mode = "simulated";
  run.policy = "pdpa";
  run.params = {{"target_eff", 0.7}, {"step", 2}};
  run.machine_cpus = 4;
  run.workload = "w1.swf";
  run.time_scale = 0.5;
  run.jobs.push_back(job(1, "bt", 0, 0, 10, {segment(0, 10, {0, 1})}));
  run.jobs.push_back(job(2, "bt", 2, 4, 12, {segment(4, 12, {2, 3})}));
  run.jobs.push_back(job(3, "apsi", 5, 10, 20, {segment(10, 12, {0, 1}), segment(12, 20, {0, 1, 2, 3})}, 4));
  run.jobs.push_back(job(4, "apsi", 6, -1, -1, {}));
  run.ml = {{0, 1, 0}, {2, 1, 1}, {4, 2, 0}, {5, 2, 1}, {6, 2, 2}, {10, 2, 1}, {12, 1, 1}, {20, 0, 1}};
  return run;
}

// A fresh, empty directory under the system temporary directory, removed when the object goes.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("cosched-results-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] std::string str() const { return path_.string(); }
  [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace cosched::results::sample
