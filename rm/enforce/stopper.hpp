// Time sharing's mechanism: stop and resume whole jobs as the policy's `runnable` says (DESIGN "Time
// sharing"). It acts, it never chooses (STYLE habit 4). Backends, in order of preference (auto):
//   cgroup-v2   the unified hierarchy's freezer (`cgroup.freeze`); on hybrid hosts (Debian 12 VMs) the
//               unified hierarchy has it even where cpuset is v1
//   cgroup-v1   the v1 freezer hierarchy (`freezer.state`)
//   signal      SIGSTOP / SIGCONT to the job's process (all its threads)
// A freezer holds every thread of the job and of its children, and a user's SIGCONT cannot undo it; a
// signal is seen by the job's parent and by the user. A job is moved into its freezer cgroup at its first
// stop, so jobs under space-sharing policies never pay for the move.
// Every stop is announced to the Guard before it happens and every resume after, so a dead RM's guard
// thaws and continues whatever is still stopped (DESIGN rule 3).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "cosched/error.hpp"
#include "guard.hpp"
#include "rm/job/job.hpp"

namespace cosched::rm {

class Stopper {
 public:
  virtual ~Stopper() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Stop every thread of the job. Returns once the stop was requested: a freezer completes asynchronously
  // (microseconds to milliseconds; `stopped` tells).
  virtual Status stop(Job& job) = 0;
  virtual Status resume(Job& job) = 0;
  // Whether the kernel reports the job as stopped (frozen) now. For status and tests.
  [[nodiscard]] virtual bool stopped(const Job& job) const = 0;
  // Back to native: thawed/continued and out of the RM's freezer cgroup. Idempotent; the process may be gone.
  virtual void release(Job& job) = 0;
  // Retry leftovers (cgroups still busy with exiting tasks) once per quantum, and at shutdown.
  virtual void tidy() {}
  virtual void shutdown() {}
};

// kind: "auto", "cgroup-v2", "cgroup-v1" or "signal". `cpuset_v2`: the cpuset enforcement is cgroup v2, so
// a job already has a unified-hierarchy cgroup of its own (Job::cgroup_dir), which must also be its freezer:
// a process belongs to one cgroup of a hierarchy.
Result<std::unique_ptr<Stopper>> make_stopper(std::string_view kind, bool cpuset_v2, Guard& guard);

std::unique_ptr<Stopper> make_signal_stopper(Guard& guard);
// version 1 or 2; fails (unsupported) when that hierarchy has no usable freezer.
Result<std::unique_ptr<Stopper>> make_freezer_stopper(int version, bool cpuset_v2, Guard& guard);

}  // namespace cosched::rm
