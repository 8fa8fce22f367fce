// Snapshots and decision summaries shared by the policy unit tests.
#pragma once

#include <vector>

#include "policies/policy.hpp"

namespace cosched::policy::testing {

// A machine of `cpus` CPUs with one job per request (ids 1, 2, ... in admission order), each holding
// `current[i]` CPUs now (0 when not given).
inline Snapshot machine_with(int cpus, const std::vector<int>& requests, const std::vector<int>& current = {}) {
  Snapshot s;
  s.machine.cpus = cpus;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    JobView j;
    j.id = static_cast<JobId>(i + 1);
    j.request = requests[i];
    j.allocation = i < current.size() ? current[i] : 0;
    j.arrival = static_cast<double>(i);
    s.jobs.push_back(j);
  }
  return s;
}

// A machine of `cpus` CPUs running exactly `jobs`.
inline Snapshot machine_of(int cpus, std::vector<JobView> jobs) {
  Snapshot s;
  s.machine.cpus = cpus;
  s.jobs = std::move(jobs);
  return s;
}

// The CPU counts of a decision, in the snapshot's job order.
inline std::vector<int> counts(const Decision& d) {
  std::vector<int> v;
  for (const auto& a : d.jobs) v.push_back(a.cpus);
  return v;
}

// 1 for each job the decision lets run, 0 for each it stops, in the snapshot's job order.
inline std::vector<int> running(const Decision& d) {
  std::vector<int> v;
  for (const auto& a : d.jobs) v.push_back(a.runnable ? 1 : 0);
  return v;
}

// One decision at `now` for event `e`, fed back into the snapshot as the daemon and the simulator do.
inline Decision step(Policy& p, Snapshot& s, Event e, double now) {
  s.event = e;
  s.now = now;
  Decision d = p.decide(s);
  for (std::size_t i = 0; i < s.jobs.size(); ++i) {
    s.jobs[i].allocation = d.jobs[i].cpus;
    s.jobs[i].runnable = d.jobs[i].runnable;
  }
  return d;
}

}  // namespace cosched::policy::testing
