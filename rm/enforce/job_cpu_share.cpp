// Jobs that share a CPU share it per job, not per thread: each job in a cgroup of its own, in the v1
// hierarchy of the cpu controller, at the default weight.
//
// Why: the kernel divides a CPU among runnable threads. A team that the RM narrowed onto a CPU it shares (a
// fixed team of two on one CPU: docs/architecture.md, "Team sizes a program can observe", rule 7) hands the
// CPU from one of its threads to the other at every barrier, and beside a thread that never sleeps each
// hand-off waited for that thread's time slice: about 140 times the job's time on its CPU alone (Linux 6.18). As one group
// entity the job's woken thread runs at once (docs/performance.md, "A team narrowed onto a CPU it shares").
//
// Layout: the job's group is made inside the cgroup the job came from, <its cgroup>/cosched-job.<rm pid>.<id>,
// so that it weighs against the same neighbours as before and nothing outside that cgroup sees a change. The
// job goes back there on release, and the guard puts it back if the RM dies (DESIGN rule 3). Jobs in a Slurm
// cgroup are left where Slurm put them.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cgroup_fs.hpp"
#include "control_file.hpp"
#include "cosched/log.hpp"
#include "enforcer.hpp"

namespace cosched::rm {

namespace {

class JobCpuShare final : public Enforcer {
 public:
  JobCpuShare(std::unique_ptr<Enforcer> inner, cgroupfs::Mount m, Guard& guard)
      : inner_(std::move(inner)), mount_(std::move(m)), guard_(guard) {}
  ~JobCpuShare() override { shutdown(); }

  [[nodiscard]] std::string_view name() const override { return inner_->name(); }

  Status attach(Job& job) override {
    auto st = inner_->attach(job);
    if (job.in_slurm_cgroup) return st;
    const std::string orig = cgroupfs::cgroup_of(job.pid, 1, "cpu");
    if (orig.empty()) return st;  // gone already: the departure follows
    const std::string from = cgroupfs::to_fs(mount_, orig);
    const std::string dir = from + "/cosched-job." + std::to_string(::getpid()) + "." + std::to_string(job.id);
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      COSCHED_WARN(enforce, "job {}: mkdir {}: {}; its threads share CPUs one by one", job.id, dir, std::strerror(errno));
      return st;
    }
    job.share_dir = dir;
    job.share_restore_procs = from + "/cgroup.procs";
    guard_.job_confined(job.pid, job.share_restore_procs, dir);
    return st;
  }

  Status confine(Job& job) override {
    auto st = inner_->confine(job);
    if (job.share_dir.empty()) return st;
    // Moving a v1 process moves all its threads, and its future threads are born there. A thread with a
    // real-time policy cannot enter a group without real-time runtime (EINVAL): the job then stays as it was.
    if (int err = write_control_file(job.share_dir + "/cgroup.procs", std::to_string(job.pid)); err != 0) {
      if (err != ESRCH) {
        COSCHED_WARN(enforce, "job {}: cannot move pid {} into {}: {}; its threads share CPUs one by one", job.id,
                     job.pid, job.share_dir, std::strerror(err));
      }
      pending_.remove(job.share_dir);
      job.share_dir.clear();
    }
    return st;
  }

  Status apply(Job& job, const CpuSet& cpus) override { return inner_->apply(job, cpus); }
  void refresh(Job& job) override { inner_->refresh(job); }

  void release(Job& job) override {
    if (!job.share_dir.empty()) {
      // kill(0) also succeeds on a zombie, whose move fails with ESRCH: an exited job needs no undoing.
      if (::kill(job.pid, 0) == 0) {
        if (int err = write_control_file(job.share_restore_procs, std::to_string(job.pid)); err != 0 && err != ESRCH) {
          COSCHED_WARN(enforce, "job {}: cannot move pid {} back to {}: {}", job.id, job.pid, job.share_restore_procs,
                       std::strerror(err));
        }
      }
      pending_.remove(job.share_dir);
      job.share_dir.clear();
    }
    inner_->release(job);
    guard_.job_released(job.pid);  // every hierarchy is undone now, whatever the inner backend told the guard
  }

  void tidy() override {
    inner_->tidy();
    pending_.tidy();
  }

  void shutdown() override {
    inner_->shutdown();
    // Still busy (a job that exited but is not reaped yet): the guard, which outlives us, removes them.
    pending_.drain([this](const std::string& d) { guard_.owns_dir(d); });
  }

  [[nodiscard]] bool job_applies_mask() const override { return inner_->job_applies_mask(); }
  [[nodiscard]] bool applies_mask_for(const Job& job) const override { return inner_->applies_mask_for(job); }
  [[nodiscard]] bool confines() const override { return inner_->confines(); }

 private:
  std::unique_ptr<Enforcer> inner_;
  cgroupfs::Mount mount_;
  Guard& guard_;
  cgroupfs::PendingDirs pending_;
};

}  // namespace

CpuShareSetup with_cpu_share(std::string_view mode, std::unique_ptr<Enforcer> inner, Guard& guard) {
  if (mode == "thread") return {std::move(inner), "thread"};
  if (!inner->confines()) return {std::move(inner), "thread (--enforce none)"};  // team sizes only, as asked
  cgroupfs::Mount m;
  if (!cgroupfs::find_mount(1, "cpu", m)) {
    COSCHED_INFO(enforce, "--cpu-share job: no cgroup v1 hierarchy of the cpu controller; jobs share CPUs per thread");
    return {std::move(inner), "thread (no cgroup v1 cpu hierarchy)"};
  }
  const std::string own = cgroupfs::to_fs(m, cgroupfs::cgroup_of(::getpid(), 1, "cpu"));
  if (::access(own.c_str(), W_OK) != 0) {
    COSCHED_INFO(enforce, "--cpu-share job: {} is not writable; jobs share CPUs per thread", own);
    return {std::move(inner), "thread (" + own + " not writable)"};
  }
  return {std::make_unique<JobCpuShare>(std::move(inner), m, guard), "job (cgroup v1 cpu)"};
}

}  // namespace cosched::rm
