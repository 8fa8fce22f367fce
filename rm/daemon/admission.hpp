// What the daemon knows of jobs that have not registered yet, a room of its own: the counts the queuing
// system gives at may_start (Snapshot::queued, Snapshot::starting), and the Slurm jobs their prolog
// announced (slurm_arrivals.cpp says why a "yes" is held back for them). Also the processes of released jobs
// that still run (admission_released.cpp). Times are the RM's seconds.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cosched::rm {

class Admission {
 public:
  // The queuing system asks every few hundred milliseconds while any job waits; a count older than this
  // means nobody asks any more (our choice).
  static constexpr double kQueuedFreshS = 2.0;
  // How long an announced Slurm job holds the answer back at most (slurm_arrivals.cpp).
  static constexpr double kExpectS = 5.0;

  // may_start's counts at `t`: jobs waiting, and jobs started but not registered, trusted no further than
  // `cpus` (more starting than CPUs changes no rule's answer, and every decision for kQueuedFreshS counts them).
  void heard(int queued, int starting, int cpus, double t);
  // A new job registered: the queuing system counted it among the jobs being started if it asked after
  // starting it, else among the waiting ones (it starts a job on a yes). Until it asks again, one fewer.
  void registered();
  [[nodiscard]] int queued(double t) const { return fresh(t) ? queued_ : 0; }
  // Jobs being started: the queuing system's count, and the released processes that still run.
  [[nodiscard]] int starting(double t) { return (fresh(t) ? starting_ : 0) + released_running(); }

  // `cosched-ctl release` let a process go native: its team and the full mask, outside every policy's count.
  // Until it exits it counts as a job being started (one CPU at least, what Snapshot::starting means), so no
  // policy admits another job onto the CPUs it still uses: a queuing system that asked may_start would
  // otherwise start one there (qsubmit ran 3 jobs on 2 CPUs under equip so). Our choice. `pidfd` is the
  // process's, which this takes over (a negative one counts nothing: a kernel without pidfds).
  void released(int pidfd);
  // How many of them still run; those that exited are forgotten here.
  [[nodiscard]] int released_running();

  Admission() = default;
  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;
  ~Admission();

  // The prolog announced Slurm job `id` at `t`; it holds the answer until it registers or kExpectS passed.
  void expect(std::int64_t slurm_job_id, double t) { expected_[slurm_job_id] = t; }
  void registered_slurm(std::int64_t slurm_job_id) { expected_.erase(slurm_job_id); }
  // The policy's answer, held back at no while an announced Slurm job has not registered; the reason says so.
  void hold(bool& may_start, std::string& reason, double t);

 private:
  [[nodiscard]] bool fresh(double t) const { return queued_at_ >= 0 && t - queued_at_ <= kQueuedFreshS; }
  int queued_ = 0;
  int starting_ = 0;
  double queued_at_ = -1;
  std::map<std::int64_t, double> expected_;  // Slurm job id → when its prolog announced it
  std::vector<int> released_;  // a pidfd per released process that still ran when last looked at
};

}  // namespace cosched::rm
