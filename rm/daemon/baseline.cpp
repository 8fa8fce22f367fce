// The SelfAnalyzer's baseline as the RM steers it (baseline.hpp).
#include "baseline.hpp"

#include <fmt/format.h>

namespace cosched::rm {

bool BaselineSteering::wanted(const policy::Policy& policy) const {
  if (mode_ == "always") return true;
  if (mode_ == "never") return false;
  return policy.uses_speedup();
}

// Under --baseline auto a job measures its baseline only where the policy says the check could change a
// decision (Policy::speedup_check_matters; docs/selfanalyzer.md, "Two estimates"): a job PDPA decreases
// whatever the check finds is not slowed for it. --baseline always and never are what they say.
void BaselineSteering::follow_check(Job& j, const policy::Policy& policy, double t) const {
  bool want = wanted(policy);
  if (want && mode_ == "auto") {
    policy::JobView v;
    v.id = view_id(j);
    v.request = j.request;
    v.allocation = j.allocation;
    v.perf = j.perf;
    want = policy.speedup_check_matters(v);
  }
  if (want == j.baseline_check) return;
  j.baseline_check = want;
  j.arena->set_baseline_wanted(want);
  remember_why(j, t, "check", j.allocation, j.allocation,
               want ? "a baseline check could change the policy's decision: it may run"
                      : fmt::format("no baseline check: its waiting-time efficiency {:.2f} at {} bounds its true "
                                    "one, and no check could change the policy's decision",
                                    j.perf.efficiency, j.perf.cpus));
}

// Under --baseline auto, a job's baseline waits while it is alone (our choice; PDPA §3.1 measures every
// job's baseline as it starts). A job alone gets every CPU it asked for whatever its speedup, so a baseline
// then changes no decision and only costs the job: NPB EP class A alone under PDPA on 2 CPUs, whose 16
// iterations last 0.2 s each, spent 4 of them on 1 CPU and took 1.34 times its native time; left alone by
// its neighbour, it ran its last 2.2 s on 1 CPU of 2. The machine is shared while two jobs run or one waits
// for admission (the queuing system's count at may_start). An attempt in progress when the job is left
// alone pauses and keeps its samples (Analyzer::set_baseline_waits).
void BaselineSteering::follow_sharing(const policy::Snapshot& s, JobTable& jobs, const policy::Policy& policy,
                                      double t) {
  if (mode_ != "auto") return;
  const bool others = s.jobs.size() >= 2;
  const bool sharing = others || s.queued > 0 || s.starting > 0;
  if (sharing == sharing_) return;  // runs at every decision: nothing to do unless it changed
  sharing_ = sharing;
  for (auto& [id, j] : jobs) {
    j.arena->set_baseline_waits(!sharing);
    if (!wanted(policy)) continue;
    remember_why(j, t, "sharing", j.allocation, j.allocation,
                 !sharing ? "alone: its SelfAnalyzer baseline waits"
                 : others ? "another job runs: its SelfAnalyzer baseline may run"
                          : "a job waits for admission: its SelfAnalyzer baseline may run");
  }
}

}  // namespace cosched::rm
