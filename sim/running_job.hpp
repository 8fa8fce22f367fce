// One admitted job inside the simulator: its progress, its SelfAnalyzer, and which of its iterations the
// engine has to look at (docs/simulator.md, "Which iterations are simulated").
//
// A real job runs thousands of iterations; the policies only hear about them through reports. So the engine
// observes iterations (one event each, fed to the Analyzer) only while they can change what the RM knows:
//   open         an iteration is open in the Analyzer; its end is an event
//   to_boundary  the job runs unobserved to its next iteration boundary, then opens one (detection delay,
//                or a periodic re-sample of a steady job)
//   off          steady: the Analyzer's latest report describes the current team; nothing to observe until
//                the allocation changes (or until the next re-sample when report_every_s > 0). Also off
//                when no report can come at this team: without noise, once the Analyzer has had enough
//                clean iterations at the current team and published nothing (it has no second point for
//                the Amdahl fit, as under a policy that measures no baseline), further identical
//                iterations cannot change that. This bounds a job's observed iterations by its
//                allocation changes, not by its length. The turns of time sharing (a stop, a resume, a
//                move at the same CPU count) are no change of team: they keep a quiet job off.
// With measurement noise 0, every further report of a steady job repeats the last one, so `off` loses
// nothing a policy acts on; tests/unit/sim checks that the registry's policies give the same results.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "sim/analyzer_model.hpp"
#include "sim/app_model.hpp"
#include "sim/event_queue.hpp"
#include "sim/job_progress.hpp"
#include "sim/waiting_model.hpp"

namespace cosched::sim {

struct JobTiming {
  double realloc_cost_s = 0;  // progress lost per team change
  double report_every_s = 0;  // steady jobs re-sample an iteration this often (0: only after a change)
  // A fixed team on fewer CPUs than threads: each extra thread per CPU makes its work this much slower
  // (docs/simulator.md, "Fixed teams").
  double oversub_cost = 0.01;
};

class RunningJob {
 public:
  RunningJob(const JobSpec& spec, const AnalyzerSettings& analyzer, const JobTiming& timing, std::uint64_t seed);

  // The first allocation, at admission.
  void start(double t, int cpus);
  // The RM's decision at time t (only called when count or runnable changed, or the CPU set moved).
  void reallocate(double t, int cpus, bool runnable);
  // The event the engine scheduled for this job (the engine checked its generation).
  void on_boundary(double t);
  void on_resume(double t);
  // Memory contention: from t the job's work goes `slowdown` times slower (its pending events are stale).
  void set_slowdown(double t, double slowdown);
  void set_cpu_share(double t, double share);
  // Whether the job is alone (--baseline auto): the SelfAnalyzer's baseline waits. True when the job's
  // team changed at t (its pending events are stale).
  bool set_baseline_waits(double t, bool waits);
  // The RM's rm_no_baseline flag (Daemon::follow_check: a check that could change no decision is not run):
  // the SelfAnalyzer's baseline on or off. True when the job's team changed at t (its pending events are stale).
  bool set_baseline_enabled(double t, bool on);
  // The sampler's waiting-time estimate (sim/waiting_model.hpp): the next one is published at waiting_due()
  // (+inf: none pending), valid while waiting_generation() stands; the engine calls on_waiting then.
  [[nodiscard]] double waiting_due() const { return waiting_.due(); }
  [[nodiscard]] std::uint64_t waiting_generation() const { return waiting_.generation(); }
  void on_waiting(double t) { waiting_.publish(t); }
  [[nodiscard]] const rm::WaitingEstimate& waiting() const { return waiting_.estimate(); }

  struct Next {
    double t = std::numeric_limits<double>::infinity();
    EventKind kind = EventKind::completion;
  };
  // The job's next event (an iteration boundary or its completion), and a separate re-sample time
  // (+inf when none). Both are valid until the generation changes.
  [[nodiscard]] Next next_event() const;
  [[nodiscard]] double resume_at() const { return resume_at_; }
  [[nodiscard]] std::uint64_t generation() const { return generation_; }

  // cosched-sim's fast-forward (docs/simulator.md, "Steady rotations"). Quiet: no iteration observed that
  // could still give a sample and no re-sample ahead, so its future is its work, rate, stall and sampler
  // (whose estimate, if one is due, the engine checks never comes within a turn) until the work reaches
  // next_own_work(): its end, or the end of the iteration in progress.
  [[nodiscard]] bool quiet() const;
  [[nodiscard]] double next_own_work() const;
  // Appends the job's state at t, less its work done and the clock, to a rotation key.
  void append_key(policy::KeyWriter& key, double t) const;
  // `seconds` later, `work` further on, all else as it was; its events are stale (the generation moves).
  void skip_rotation(double seconds, double work);

  [[nodiscard]] const JobSpec& spec() const { return *spec_; }
  [[nodiscard]] bool started() const { return generation_ > 0; }
  [[nodiscard]] int allocation() const { return cpus_; }
  [[nodiscard]] bool runnable() const { return runnable_; }
  [[nodiscard]] int team() const { return progress_.team(); }
  [[nodiscard]] const JobProgress& progress() const { return progress_; }
  [[nodiscard]] bool has_analyzer() const { return analyzer_enabled_; }
  [[nodiscard]] const AnalyzerModel& analyzer() const { return analyzer_; }
  [[nodiscard]] std::uint64_t iterations_observed() const { return observed_; }
  // Observed iterations that ran at a SelfAnalyzer baseline team below the allocation (a baseline that slows
  // the job), in all.
  [[nodiscard]] std::uint64_t baseline_iterations() const { return baseline_iterations_; }

 private:
  void cpu_set_changed();
  enum class Watch { open, to_boundary, off };

  // Work closer than this fraction of an iteration to a boundary counts as at the boundary (float drift).
  static constexpr double kBoundaryTolerance = 1e-9;

  [[nodiscard]] double iteration_end_work() const;  // work at the end of iteration `iteration_`
  [[nodiscard]] bool boundary_due() const;
  void open_iteration(double t, bool dirty);
  void after_report(double t, double iteration_seconds);
  void set_team(double t, int team);
  void update_waiting(double t);
  bool follow_team(double t);  // the Analyzer's team_for moved outside an iteration boundary
  void sync_iteration_index();

  const JobSpec* spec_;
  JobTiming timing_;
  bool analyzer_enabled_;
  AnalyzerModel analyzer_;
  JobProgress progress_;
  WaitingModel waiting_;
  int threads_on_ = 0;  // CPUs the job's threads run on now, min(team, allocation) (0: stopped)
  double iteration_work_;
  std::int64_t iteration_ = 0;  // index of the iteration in progress
  int detect_left_ = 0;
  bool baseline_waits_ = false;  // set_baseline_waits; from the start under "shared" (AnalyzerModel)
  // Analyzer iterations when an iteration was last discarded for a change of CPU set (cpu_set_changed()).
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};
  std::uint64_t discard_at_ = kNever;
  double startup_noise_;  // AnalyzerSettings::startup_noise, for measurements in the job's first startup_s_
  double startup_s_;         // iterations still to run before the Analyzer hears of the loop
  int silent_limit_ = 0;        // observed iterations at one team without a report before giving up; 0: never
  int silent_ = 0;              // observed iterations since the last report or allocation change
  Watch watch_ = Watch::off;
  int quiet_team_ = -1;         // the team at which observation last went off (-1: it never did)
  bool dirty_ = false;          // the observed iteration in progress was discarded: it gives no sample
  bool opened_any_ = false;     // the Analyzer has seen an iteration
  double iteration_started_ = 0;
  double started_at_ = 0;
  double resume_at_ = std::numeric_limits<double>::infinity();
  int cpus_ = 0;
  bool runnable_ = true;
  std::uint64_t generation_ = 0;
  std::uint64_t observed_ = 0;
  std::uint64_t baseline_iterations_ = 0;
};

}  // namespace cosched::sim
