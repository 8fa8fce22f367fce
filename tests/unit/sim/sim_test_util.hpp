// Helpers shared by the simulator tests: small workloads built in memory and a run-to-records shortcut.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "policies/registry.hpp"
#include "sim/simulator.hpp"

namespace cosched::sim::testing {

// A set of application models that outlives the jobs pointing into it.
struct Apps {
  AppModel linear{"lin", "scalable", *parse_speedup_spec("linear"), 1.0, "test"};
  AppModel flat{"flat", "flat", *parse_speedup_spec("amdahl:1"), 0.25, "test"};
  AppModel good{"good", "scalable", *parse_speedup_spec("amdahl:0.02"), 1.0, "test"};
};

inline JobSpec job(std::int64_t number, double submit, int request, double run_s, const AppModel& app) {
  JobSpec j;
  j.number = number;
  j.submit = submit;
  j.request = request;
  j.app = &app;
  j.work = run_s * catalog::speedup(app.speedup, request);
  return j;
}

struct Outcome {
  std::vector<results::JobRecord> jobs;
  std::vector<results::MlSample> ml;
  SimStats stats;
};

inline Outcome simulate(const SimConfig& config, const std::vector<JobSpec>& jobs, policy::Policy& policy) {
  Simulator s(config, jobs, policy);
  s.run();
  return {s.take_records(), s.take_ml(), s.stats()};
}

inline Outcome simulate(const SimConfig& config, const std::vector<JobSpec>& jobs, const std::string& policy,
                        const policy::ParamList& params = {}) {
  auto p = policy::make_policy(policy, policy::Machine{config.cpus, config.cpus, 1, 1}, params);
  if (!p.ok()) throw std::runtime_error(p.error().message);
  return simulate(config, jobs, **p);
}

inline double mean_response(const std::vector<results::JobRecord>& jobs) {
  double sum = 0;
  for (const auto& j : jobs) sum += j.response();
  return sum / static_cast<double>(jobs.size());
}

// Bitwise-equal outcome of two runs: every time, every segment (CPU lists included).
inline bool same_records(const std::vector<results::JobRecord>& a, const std::vector<results::JobRecord>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].start != b[i].start || a[i].end != b[i].end || a[i].allocation.size() != b[i].allocation.size()) {
      return false;
    }
    for (std::size_t k = 0; k < a[i].allocation.size(); ++k) {
      const auto& x = a[i].allocation[k];
      const auto& y = b[i].allocation[k];
      if (x.t0 != y.t0 || x.t1 != y.t1 || x.cpus != y.cpus || x.cpu_list != y.cpu_list) return false;
    }
  }
  return true;
}

// The same run up to float rounding: identical allocations (counts and CPU lists), times within 1e-9 s.
// Two event paths that compute a job's progress differently (per iteration or in one stretch) round
// differently in the last bits; that is the only difference allowed.
inline bool same_outcome(const std::vector<results::JobRecord>& a, const std::vector<results::JobRecord>& b) {
  auto near = [](double x, double y) { return std::abs(x - y) <= 1e-9 * std::max(1.0, std::abs(x)); };
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!near(a[i].start, b[i].start) || !near(a[i].end, b[i].end) ||
        a[i].allocation.size() != b[i].allocation.size()) {
      return false;
    }
    for (std::size_t k = 0; k < a[i].allocation.size(); ++k) {
      const auto& x = a[i].allocation[k];
      const auto& y = b[i].allocation[k];
      if (!near(x.t0, y.t0) || !near(x.t1, y.t1) || x.cpus != y.cpus || x.cpu_list != y.cpu_list) return false;
    }
  }
  return true;
}

}  // namespace cosched::sim::testing
