// The replay loop: real time, real processes. Each turn it reaps ended jobs, lets due jobs arrive, samples the
// RM's status (every ~100 ms: CPUs per job, and whether the jobs we started are known to it), asks may_start
// when the Dispatcher wants an answer, starts what the Dispatcher admits, and sleeps in poll() until the next
// deadline or a signal (SIGCHLD ends the sleep at once, so end times are exact to the wake-up).
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "dispatcher.hpp"
#include "options.hpp"
#include "progress.hpp"
#include "qs/results.hpp"
#include "reaper.hpp"
#include "recorder.hpp"
#include "rm_link.hpp"
#include "workload.hpp"

namespace cosched::qsubmit {

struct ReplaySetup {
  const LoadedWorkload* workload = nullptr;  // requests already scaled to this machine
  const RmLink* rm = nullptr;                // nullptr: native run
  int fixed_ml = 0;                          // 0: the RM's may_start
  qs::Selection selection = qs::Selection::fcfs;
  std::string jobs_dir;                      // <out>/jobs: <id>.out and <id>.err
  ProgressLine* progress = nullptr;
  std::string label;                         // for the progress line
  double status_interval = 0.1;              // s between status samples
  double rm_patience = 5.0;                  // s of failed RM requests before the run gives up on it
};

class Replay {
 public:
  explicit Replay(const ReplaySetup& setup);
  ~Replay();
  Replay(const Replay&) = delete;
  Replay& operator=(const Replay&) = delete;

  // Runs until every job ended, a stop signal arrived, or the RM stopped answering (then no new job starts
  // and the loop waits for the running ones).
  void run();
  // After an interrupted run: SIGCONT + SIGTERM to every live job, SIGKILL to what is left after a second.
  void stop_jobs();
  // Waits up to `seconds` for jobs that are still alive (a job frozen by the RM dies only once released).
  void reap_remaining(double seconds);

  [[nodiscard]] std::vector<results::JobRecord> job_records() const;
  [[nodiscard]] const std::vector<results::MlSample>& ml_samples() const { return ml_.samples(); }
  // Jobs that ran without the RM's control: never in its status, and their libcosched said it ran natively
  // (a registration that failed or timed out). Ordered by end time.
  [[nodiscard]] const std::vector<std::int64_t>& unmanaged() const { return unmanaged_; }
  [[nodiscard]] int stop_signal() const { return stop_signal_; }
  [[nodiscard]] bool rm_lost() const { return rm_lost_; }
  // The RM's clock when the run began (for the decision-log copy); 0 for native runs.
  [[nodiscard]] double rm_uptime_at_start() const { return rm_uptime_at_start_; }

 private:
  struct Tracked {
    results::JobRecord record;
    AllocationRecorder allocation;
    const PlannedJob* plan = nullptr;
    pid_t pid = 0;  // while it runs
    bool seen_at_rm = false;  // in some status sample of the RM
  };
  double now() const;
  void reap_ended();
  void release_successors(std::int64_t id, double t);  // closed workloads: SWF fields 17-18
  [[nodiscard]] bool ran_natively(std::int64_t id) const;
  void sample_rm_status();
  void ask_may_start();
  void start_admitted();
  void launch(Tracked& job);
  void rm_request_failed(const Error& error);
  void rm_request_succeeded() { rm_failing_since_ = -1; }
  void sleep_until_next_event();

  ReplaySetup setup_;
  Dispatcher dispatcher_;
  std::map<std::int64_t, Tracked> jobs_;
  std::map<pid_t, std::int64_t> live_;  // pid → job id
  std::map<pid_t, std::pair<int, std::vector<int>>> last_allocation_;  // from the previous status sample
  MlRecorder ml_;
  std::vector<std::int64_t> unmanaged_;
  double start_time_ = 0;               // steady clock, s
  double next_status_ = 0;
  double rm_failing_since_ = -1;
  double rm_uptime_at_start_ = 0;
  bool rm_failure_noted_ = false;
  bool rm_lost_ = false;
  int stop_signal_ = 0;
  Reaper reaper_;  // last: destroyed first, after every job it was handed is reaped
};

}  // namespace cosched::qsubmit
