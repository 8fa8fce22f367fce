// The SelfAnalyzer's baseline as the RM steers it, a room of the daemon (baseline.cpp): whether jobs measure
// one at all (--baseline, or whether the policy uses speedups), where a check could change a decision, and
// whether it waits while a job is alone. It writes each job's arena words and `why` lines; the job decides
// when to run its baseline.
#pragma once

#include <string>
#include <utility>

#include "job_table.hpp"
#include "policies/policy.hpp"

namespace cosched::rm {

class BaselineSteering {
 public:
  // `mode`: --baseline's "auto", "always" or "never".
  explicit BaselineSteering(std::string mode = "auto") : mode_(std::move(mode)) {}
  // Whether jobs measure a baseline: the policy uses speedups, or --baseline says.
  [[nodiscard]] bool wanted(const policy::Policy& policy) const;
  // --baseline auto and no other job shares the machine: a baseline waits (follow_sharing).
  [[nodiscard]] bool waits() const { return mode_ == "auto" && !sharing_; }
  // The job's check only where it could change the policy's decision (Policy::speedup_check_matters).
  void follow_check(Job& j, const policy::Policy& policy, double t) const;
  // At every decision: whether the machine is shared, told to every job when it changes.
  void follow_sharing(const policy::Snapshot& s, JobTable& jobs, const policy::Policy& policy, double t);

 private:
  std::string mode_;
  bool sharing_ = false;  // two jobs run or one waits
};

}  // namespace cosched::rm
