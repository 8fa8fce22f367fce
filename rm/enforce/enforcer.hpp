// Enforcement: mechanisms that make a job's threads run on the CPUs placement chose. They act, they never
// choose (STYLE habit 4). Backends, in order of preference (auto):
//   cgroup-v2   cpuset controller of the unified hierarchy
//   cgroup-v1   the cpuset hierarchy (hybrid hosts: this is the common case on Debian 12 VMs)
//   affinity    sched_setaffinity on every thread, re-applied as threads appear; the job also applies the
//               mask to threads it creates (libomp resets new threads' masks)
//   none        team sizes only
// Every backend undoes itself on release, and announces what it did to the Guard so that a dead RM's
// confinement is undone too (DESIGN rule 3).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "cosched/cpuset.hpp"
#include "cosched/error.hpp"
#include "guard.hpp"
#include "rm/job/job.hpp"

namespace cosched::rm {

class Enforcer {
 public:
  virtual ~Enforcer() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  // The job was admitted: prepare its control (cheap; before its first decision, so apply() can run).
  virtual Status attach(Job& job) = 0;
  // Put the job under that control, after it got its registration reply. Separate because moving a
  // process into a cgroup can take a kernel RCU grace period (~9 ms measured here for the first move),
  // which the job must not wait for at start-up. Default: nothing more to do.
  virtual Status confine(Job& /*job*/) { return {}; }
  // Confine the job to `cpus` (non-empty).
  virtual Status apply(Job& job, const CpuSet& cpus) = 0;
  // Periodic, once per quantum: catch up with threads created since apply, and with threads that widened
  // their own masks (affinity backend).
  virtual void refresh(Job& /*job*/) {}
  // Back to native (job exited or RM shutting down). Idempotent; the process may be gone.
  virtual void release(Job& job) = 0;
  // Retry leftovers (cgroups still busy with exiting tasks). Called each quantum and at shutdown.
  virtual void tidy() {}
  // RM shutdown: remove what the backend created.
  virtual void shutdown() {}
  // Whether the job must apply the arena's mask to the threads it creates.
  [[nodiscard]] virtual bool job_applies_mask() const { return false; }
  // The same for one job (a backend that routes jobs to others answers per job).
  [[nodiscard]] virtual bool applies_mask_for(const Job& /*job*/) const { return job_applies_mask(); }
  // Whether apply() confines the job's threads to the CPUs at all ("none" does not). A baseline by
  // narrowing (rm/daemon/narrowing.cpp) is only a measurement where it does.
  [[nodiscard]] virtual bool confines() const { return true; }
};

// kind: "auto", "cgroup", "cgroup-v1", "cgroup-v2", "affinity" or "none". `managed` are the RM's CPUs.
Result<std::unique_ptr<Enforcer>> make_enforcer(std::string_view kind, const CpuSet& managed, Guard& guard);

std::unique_ptr<Enforcer> make_affinity_enforcer(const CpuSet& managed);
std::unique_ptr<Enforcer> make_null_enforcer();
// version: 1 or 2. Fails (unsupported) when that hierarchy has no usable cpuset controller.
Result<std::unique_ptr<Enforcer>> make_cgroup_enforcer(int version, const CpuSet& managed, Guard& guard);

// How jobs that share a CPU divide it (cosched-rm --cpu-share). "job": `inner` wrapped so that each confined
// job also gets a group of its own in the cpu controller's v1 hierarchy (job_cpu_share.cpp), one entity for
// the kernel's fair scheduler whatever its thread count; without that hierarchy, or with "thread", or under
// an enforcer that confines nothing, `inner` itself. `mode` says which, for status.
struct CpuShareSetup {
  std::unique_ptr<Enforcer> enforcer;
  std::string mode;
};
CpuShareSetup with_cpu_share(std::string_view mode, std::unique_ptr<Enforcer> inner, Guard& guard);

}  // namespace cosched::rm
