// Jobs Slurm confines in its own cgroups (task/cgroup, proctrack/cgroup) are never moved out of them: Slurm
// tracks, signals and accounts a job through its cgroups, and its cpuset is the job's allocation. For such a
// job (Job::in_slurm_cgroup, read from the kernel at admission) the cpuset enforcement is done by affinity,
// which the kernel intersects with Slurm's cpuset, and time sharing by signals instead of a freezer cgroup.
// Every other job gets the backends the RM chose. These wrappers only route; each backend acts as before.
#include "slurm_aware.hpp"

#include <set>

namespace cosched::rm {

namespace {

class SlurmAwareEnforcer final : public Enforcer {
 public:
  SlurmAwareEnforcer(std::unique_ptr<Enforcer> primary, std::unique_ptr<Enforcer> affinity)
      : primary_(std::move(primary)), affinity_(std::move(affinity)) {}

  [[nodiscard]] std::string_view name() const override { return primary_->name(); }
  Status attach(Job& job) override {
    if (job.in_slurm_cgroup) routed_.insert(job.id);
    return of(job).attach(job);
  }
  Status confine(Job& job) override { return of(job).confine(job); }
  Status apply(Job& job, const CpuSet& cpus) override { return of(job).apply(job, cpus); }
  void refresh(Job& job) override { of(job).refresh(job); }
  void release(Job& job) override {
    of(job).release(job);
    routed_.erase(job.id);
  }
  void tidy() override {
    primary_->tidy();
    affinity_->tidy();
  }
  void shutdown() override {
    primary_->shutdown();
    affinity_->shutdown();
  }
  [[nodiscard]] bool job_applies_mask() const override { return primary_->job_applies_mask(); }
  [[nodiscard]] bool applies_mask_for(const Job& job) const override {
    return routed_.count(job.id) != 0 ? affinity_->job_applies_mask() : primary_->job_applies_mask();
  }

 private:
  Enforcer& of(const Job& job) { return routed_.count(job.id) != 0 ? *affinity_ : *primary_; }
  std::unique_ptr<Enforcer> primary_;
  std::unique_ptr<Enforcer> affinity_;
  std::set<policy::JobId> routed_;
};

class SlurmAwareStopper final : public Stopper {
 public:
  SlurmAwareStopper(std::unique_ptr<Stopper> primary, std::unique_ptr<Stopper> signals)
      : primary_(std::move(primary)), signals_(std::move(signals)) {}

  [[nodiscard]] std::string_view name() const override { return primary_->name(); }
  Status stop(Job& job) override { return of(job).stop(job); }
  Status resume(Job& job) override { return of(job).resume(job); }
  [[nodiscard]] bool stopped(const Job& job) const override {
    return job.in_slurm_cgroup ? signals_->stopped(job) : primary_->stopped(job);
  }
  void release(Job& job) override { of(job).release(job); }
  void tidy() override {
    primary_->tidy();
    signals_->tidy();
  }
  void shutdown() override {
    primary_->shutdown();
    signals_->shutdown();
  }

 private:
  Stopper& of(const Job& job) { return job.in_slurm_cgroup ? *signals_ : *primary_; }
  std::unique_ptr<Stopper> primary_;
  std::unique_ptr<Stopper> signals_;
};

}  // namespace

std::unique_ptr<Enforcer> make_slurm_aware_enforcer(std::unique_ptr<Enforcer> primary, const CpuSet& managed) {
  if (primary->name().rfind("cgroup", 0) != 0) return primary;  // affinity or none moves no process anyway
  return std::make_unique<SlurmAwareEnforcer>(std::move(primary), make_affinity_enforcer(managed));
}

std::unique_ptr<Stopper> make_slurm_aware_stopper(std::unique_ptr<Stopper> primary, Guard& guard) {
  if (primary->name() == "signal") return primary;
  return std::make_unique<SlurmAwareStopper>(std::move(primary), make_signal_stopper(guard));
}

}  // namespace cosched::rm
