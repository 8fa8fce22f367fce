// A baseline by narrowing, a room of the daemon (narrowing.cpp says what and why): the CPUs a job runs on
// given the allocation the policy decided, the order in which a new team and CPU set are applied, and the
// timer that reads narrowed jobs' requests between quanta.
#pragma once

#include <utility>

#include "cosched/cpuset.hpp"
#include "cosched/error.hpp"
#include "job_table.hpp"
#include "rm/enforce/enforcer.hpp"

namespace cosched::rm {

// What the job runs on with `count` CPUs `cpus`: the first narrow_request of them while it runs its
// baseline narrowed, else all of them.
std::pair<int, CpuSet> running_set(const Job& j, int count, const CpuSet& cpus);
// The team and the CPUs, in the order that never leaves a team on fewer CPUs than it was told: growing,
// the CPUs widen before the team grows; shrinking, the team shrinks first.
void publish_and_apply(Enforcer& enforcer, Job& j, int from_count, int count, const CpuSet& cpus);
// Follows the job's request (read this quantum), trusting nothing it writes; true when what it runs on changed.
bool follow_narrowing(Enforcer& enforcer, Job& j, double t);

// The narrow timer: it runs while some job runs narrowed, and only then.
class NarrowPoll {
 public:
  NarrowPoll() = default;
  ~NarrowPoll();
  NarrowPoll(const NarrowPoll&) = delete;
  NarrowPoll& operator=(const NarrowPoll&) = delete;
  Status open();
  [[nodiscard]] int fd() const { return fd_; }
  void drain() const;  // after it fired
  void arm(const JobTable& jobs);

 private:
  int fd_ = -1;
  bool armed_ = false;
};

}  // namespace cosched::rm
