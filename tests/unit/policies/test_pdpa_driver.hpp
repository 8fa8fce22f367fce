// A tiny stand-in for the daemon in PDPA tests: keeps a Snapshot, applies each Decision to it (as the
// enforcement would), and turns "job reports speedup S" into a Perf with a fresh seq.
#pragma once

#include <algorithm>
#include <string>

#include "policies/space/pdpa.hpp"

namespace cosched::policy::testing {

class PdpaDriver {
 public:
  // strict: the paper's PDPA (idle CPUs stay idle), which the §4.2 tests check; false: work conservation.
  explicit PdpaDriver(int cpus, bool strict = true) : policy(Machine{cpus, cpus, 1, 1}) {
    snap.machine = Machine{cpus, cpus, 1, 1};
    if (strict) (void)policy.set_param("strict", "1");
  }

  Decision& step(Event e, JobId subject) {
    snap.event = e;
    snap.subject = subject;
    last = policy.decide(snap);
    for (auto& j : snap.jobs) j.allocation = last.find(j.id)->cpus;
    return last;
  }

  void arrive(JobId id, int request) {
    JobView j;
    j.id = id;
    j.request = request;
    j.arrival = static_cast<double>(snap.jobs.size());
    snap.jobs.push_back(j);
    step(Event::arrival, id);
  }

  void leave(JobId id) {
    std::erase_if(snap.jobs, [&](const JobView& j) { return j.id == id; });
    step(Event::departure, id);
  }

  // A report measured with `cpus` CPUs (normally the allocation held now).
  void set_report_at(JobId id, int cpus, double speedup, double iteration_s = 0) {
    JobView& j = job(id);
    j.perf.valid = true;
    j.perf.cpus = cpus;
    j.perf.speedup = speedup;
    j.perf.efficiency = speedup / cpus;
    j.perf.iteration_s = iteration_s;
    j.perf.seq = ++seq_;
  }
  void set_report(JobId id, double speedup, double iteration_s = 0) {
    set_report_at(id, job(id).allocation, speedup, iteration_s);
  }
  void report(JobId id, double speedup, double iteration_s = 0) {
    set_report(id, speedup, iteration_s);
    step(Event::report, id);
  }
  void report_at(JobId id, int cpus, double speedup) {
    set_report_at(id, cpus, speedup);
    step(Event::report, id);
  }

  [[nodiscard]] int cpus(JobId id) const { return last.find(id)->cpus; }
  [[nodiscard]] std::string state(JobId id) const { return last.find(id)->state; }

  JobView& job(JobId id) {
    return *std::find_if(snap.jobs.begin(), snap.jobs.end(), [&](const JobView& j) { return j.id == id; });
  }

  Pdpa policy;
  Snapshot snap;
  Decision last;

 private:
  std::uint64_t seq_ = 0;
};

}  // namespace cosched::policy::testing
