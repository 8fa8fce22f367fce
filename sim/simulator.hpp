// cosched-sim's engine: replays a workload against one policy object from policies (the very objects
// cosched-rm runs, DESIGN rule 2) on a modelled machine, and records what qsubmit would record.
//
// What it plays, per role (docs/simulator.md has the full account):
//   qsubmit  arrivals at their submit times; a queue with qs::select_next (FCFS or shortest request);
//            admission with qs::may_start (the RM's Decision::may_start, or a fixed --ml)
//   the RM   the daemon's calls, in its order: decide(arrival) on admission, decide(departure) on exit,
//            at each quantum tick decide(report) for every job with a new report then decide(quantum),
//            decide(timer) at Decision::wake_at; the same clamping of allocations and the same placement
//            (rm::place) as rm/daemon/daemon_jobs.cpp
//   the jobs RunningJob: work, speedup curve, reallocation cost, and libcosched's real SelfAnalyzer
//
// Quantum ticks are simulated only when one can matter (a report to deliver, a decision to follow up, or
// --every-quantum); see "Quantum ticks" in docs/simulator.md for why that is exact for policies that are
// functions of the snapshot.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "cosched/cpuset.hpp"
#include "policies/policy.hpp"
#include "qs/queue_policy.hpp"
#include "qs/results.hpp"
#include "rm/decision/decision_core.hpp"
#include "sim/app_model.hpp"
#include "sim/event_queue.hpp"
#include "sim/recorder.hpp"
#include "sim/running_job.hpp"
#include "sensors/contention_model.hpp"
#include "sensors/sensor_set.hpp"

namespace cosched::sim {

struct SimConfig {
  int cpus = 1;
  int fixed_ml = 0;                       // > 0: start jobs while fewer run (qsubmit --ml); 0: ask the policy
  qs::Selection selection = qs::Selection::fcfs;
  double quantum_s = 0.1;                 // the RM's quantum (cosched-rm --quantum-ms, default 100 ms)
  bool every_quantum = false;             // tick every quantum while jobs exist, as the daemon does
  // Skip the repeated turns of a steady rotation (time sharing with nothing coming, going or reporting):
  // docs/simulator.md, "Steady rotations". false: every quantum is simulated (--no-fast-forward).
  bool fast_forward = true;
  bool place_cpus = true;                 // rm::place() for CPU lists; false: counts only (faster)
  // Every CPU segment of every job, with its CPU list (allocation.csv, the traces), up to this many bytes;
  // past them, or with 0, their totals only, which the summary needs (sim/recorder.hpp), in constant memory
  // and with no list built (--dry-run: 0; cosched-sim --allocation).
  std::size_t segment_bytes = std::numeric_limits<std::size_t>::max();
  // Model every job's SelfAnalyzer and sampler even where nothing reads what they publish: a policy that
  // reacts to no report (Policy::reacts_to_reports), no baseline run, no decision log. false (default):
  // such jobs run without them, as the same allocations follow with no report decisions to make
  // (docs/simulator.md, "Estimates nothing reads"). true: --all-estimates.
  bool model_unread_estimates = false;
  AnalyzerSettings analyzer;
  JobTiming timing;
  std::uint64_t seed = 1;
  // Memory contention (docs/simulator.md, "Memory contention"): the model of sensors/contention_model.hpp
  // slows running jobs down by their catalog `bandwidth`; off unless calibrated (B, b and k given).
  sensors::Calibration memory;
  // Which sensors fill JobView::bandwidth: auto (app-reported: the models' exact traffic, then counter-free),
  // app, counter-free, none. With a machine bandwidth given, sensors tick every quantum (as the daemon
  // samples); without one nothing is sampled and ticks stay as sparse as before.
  std::string sensor = "auto";
  // An SMT machine (cosched-sim --topology: an hwloc synthetic topology, docs/simulator.md "SMT cores"): the
  // CPUs in placement order and the core of each; empty: CPUs 0..cpus-1, each its own core.
  std::vector<int> cpu_order;
  std::vector<int> core_of;
  int packages = 1;
};

struct SimStats {
  std::uint64_t events = 0;         // events handled (stale ones excluded)
  std::uint64_t stale_events = 0;   // events dropped because their job changed since they were pushed
  std::uint64_t decisions = 0;      // policy decide() calls
  std::uint64_t ticks = 0;          // quantum ticks simulated
  std::uint64_t skipped_quanta = 0; // quantum ticks a fast-forward skipped (repeated turns of a rotation)
  std::uint64_t fast_forwards = 0;  // fast-forwards made
  std::uint64_t reports = 0;        // reports delivered to the policy
  std::uint64_t reallocations = 0;  // allocation changes applied to running jobs
  std::uint64_t iterations = 0;     // iterations fed to SelfAnalyzers
  std::uint64_t baseline_iterations = 0;  // of those, iterations at a baseline team below the allocation
  std::uint64_t waiting_estimates = 0;    // waiting-time estimates the jobs published (sim/waiting_model.hpp)
  std::size_t max_queue = 0;
  int max_running = 0;
  int bad_allocations = 0;          // allocations outside [1, cpus] that were clamped (a policy bug)
};

// Called now and then during a run: simulated time, jobs finished, jobs in the workload.
using ProgressFn = std::function<void(double now, std::size_t finished, std::size_t total)>;
// Receives one decision-log entry (the daemon's JSONL shape) per noteworthy decision.
using DecisionSink = std::function<void(const nlohmann::json&)>;

// The sensor chain cosched-sim runs for SimConfig::sensor (contention.cpp): the daemon's, less the PMU.
sensors::SensorSet make_sensors(const std::string& spec, const sensors::Calibration& cal);

class Simulator {
 public:
  Simulator(const SimConfig& config, const std::vector<JobSpec>& jobs, policy::Policy& policy);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  void set_decision_sink(DecisionSink sink) { decisions_ = std::move(sink); }
  // After run(): whether the jobs' SelfAnalyzer and sampler were modelled (not under a policy that reads no
  // estimate, docs/simulator.md "Estimates nothing reads", nor with the analyzer off).
  [[nodiscard]] bool estimates_modelled() const { return config_.analyzer.enabled; }
  // Runs until every usable job has completed (or nothing can happen any more).
  void run(const ProgressFn& progress = {});

  [[nodiscard]] const SimStats& stats() const { return stats_; }
  [[nodiscard]] double now() const { return now_; }
  // One record per workload job, in workload order; ML samples in time order.
  std::vector<results::JobRecord> take_records() { return recorder_.take_jobs(); }
  std::vector<results::MlSample> take_ml() { return recorder_.take_ml(); }
  // With the segments not kept (SimConfig::segment_bytes): the machine's delivered CPU time
  // (results::Run::delivered).
  [[nodiscard]] std::optional<results::DeliveredTotals> delivered() const { return recorder_.delivered(); }
  // Whether the segments were let go past SimConfig::segment_bytes (the records then carry totals).
  [[nodiscard]] bool segments_dropped() const { return recorder_.segments_dropped(); }

 private:
  struct Slot {
    std::unique_ptr<RunningJob> job;
    std::size_t index = 0;           // into the workload
    CpuSet cpus;
    bool report_pending = false;
    std::uint64_t delivered_seq = 0;  // the Analyzer's report_seq the RM last read
    // As the daemon's Job: the latest validated measured report and waiting-time estimate it read
    // (Daemon::read_estimates), and whether the job may run its baseline (Daemon::follow_check).
    policy::Perf measured;
    rm::WaitingEstimate waiting;
    int measured_below = 0;  // measured reports in a row below the waiting-time efficiency (rm/job/estimate.hpp)
    bool baseline_check = true;
    std::uint64_t waiting_pushed = ~std::uint64_t{0};  // the job's waiting_generation() of the queued event
    std::uint64_t observed = 0;       // iterations already counted in SimStats
    bool update_pending = false;      // the RM changed its allocation at this instant; the job not yet
    // The sensing interval in progress (contention.cpp), as the daemon's SensorMark.
    bool mark_open = false;
    double mark_at = 0;
    int mark_allocation = 0;
    double mark_work = 0;
    std::vector<policy::JobId> mark_partners;  // its group partners when the interval opened
    // As the daemon's Job: when the analyzer found its period, and its iteration count then.
    double analyzing_since = -1;
    std::uint64_t iterations_at_analyzing = 0;
    std::string state;  // the policy's label it was last given
  };

  // Tracks when the job's SelfAnalyzer found its period (JobView::analyzing_since); true while it analyzes.
  bool note_analyzing(Slot& slot);

  // simulator.cpp: the loop, the jobs' events, the queuing system
  void handle(const SimEvent& e);
  void on_arrival(std::size_t index);
  void release_successors(std::size_t index);  // closed workloads: SWF fields 17-18
  void admit(std::size_t index);
  void depart(policy::JobId id);
  void try_start();
  void schedule(policy::JobId id);
  void note_report(policy::JobId id, Slot& slot);
  void schedule_tick();
  void note_ml();

  // contention.cpp: memory contention between the running jobs, and the sensors that see it
  void update_contention();
  // cpu_sharing.cpp: CPUs that hold several running jobs (more jobs than CPUs), time-shared evenly
  void update_cpu_sharing();
  void sample_sensors();
  void open_sensor_intervals();

  // fast_forward.cpp: steady rotations, noted at each quantum tick and skipped once they repeat
  void note_rotation();
  bool fast_forward(std::size_t turn);
  struct RotationMark;
  // The mark's key, and each job's work done and recorded CPUs; false: the policy has no key.
  bool rotation_key(RotationMark& m) const;
  [[nodiscard]] bool cpu_sets_in_key() const;  // whether anything reads the jobs' CPU sets (fast_forward.cpp)
  // Whether the recorder writes each segment's CPU list (allocation.csv, the traces).
  [[nodiscard]] bool records_cpu_lists() const { return config_.place_cpus && recorder_.keeps_segments(); }

  // sim_rm.cpp: the resource manager's side (the snapshot, the decision core's calls and its actions, reports)
  void follow_sharing();
  void follow_check(policy::JobId id, Slot& slot, const policy::JobView& v);
  static rm::CoreJob core_job_of(const policy::JobView& v, const Slot& slot);
  rm::CoreJob& core_job(policy::JobId id);
  bool decide(policy::Event event, policy::JobId subject);
  bool apply(const policy::Decision& d, const rm::Settled& s);
  void on_tick(std::int64_t index);
  bool flush_job_update(policy::JobId id);  // whether the job had an update (its generation may have moved)
  [[nodiscard]] bool stale(const SimEvent& e) const;  // cancelled since it was pushed (lazy cancellation)
  void compact_events();                               // drops the stale events still queued
  void flush_job_updates();
  policy::JobView* view_of(policy::JobId id);
  void log_decision(const rm::Settled& s);

  SimConfig config_;
  const std::vector<JobSpec>& jobs_;
  policy::Policy& policy_;
  std::vector<int> cpu_order_;  // the machine's CPUs in placement order (a flat machine: 0..cpus-1)
  std::vector<int> core_of_;    // the core of each entry of cpu_order_
  std::map<int, int> core_of_cpu_;  // CPU → core, for the shared-core model
  rm::DecisionCore core_;
  std::string policy_key_before_, policy_key_after_;  // decide()'s scratch: the policy's rotation key
  std::vector<rm::CoreJob> core_jobs_;  // the decision core's view of snapshot_.jobs, in its order (sim_rm.cpp)
  std::vector<std::vector<policy::JobId>> groups_;  // the latest applied Decision::co_schedule
  std::uint64_t rate_seq_ = 0;
  bool smt_on_ = false;         // some core has several CPUs and some model has smt parameters
  bool rates_on_ = false;       // the policy learns from progress rates (a co-scheduling policy)

  EventQueue events_;
  double now_ = 0;
  static constexpr double kTickSnapS = 1e-6;  // a wake-up this close after a grid tick meets that tick (decide)
  static constexpr double kEndSnapQuanta = 1e-3;  // a completion this close to a tick is at it (schedule)
  static constexpr double kEndGridS = 1e-6;       // any other completion on this grid (schedule)
  static constexpr std::size_t kMinCompactAt = 4096;  // our choice: below this the queue is cheap anyway
  std::size_t compact_at_ = kMinCompactAt;            // the queue size at which compact_events runs
  std::vector<std::size_t> open_;  // jobs released at their submit time, in workload order
  std::map<std::int64_t, std::vector<std::size_t>> successors_;  // job number → jobs released when it ends
  std::size_t finished_ = 0;
  std::size_t usable_ = 0;

  std::vector<qs::QueuedJob> queue_;  // id = workload index
  std::map<policy::JobId, Slot> running_;
  policy::JobId next_id_ = 1;
  policy::Snapshot snapshot_;  // kept up to date incrementally; jobs in admission order
  std::vector<policy::JobId> pending_reports_;
  std::vector<policy::JobId> pending_updates_;  // jobs whose allocation changed at the current instant
  bool rm_may_start_ = false;
  bool tick_needed_ = false;
  bool tick_scheduled_ = false;
  std::int64_t last_tick_ = -1;  // grid index of the last tick run
  std::uint64_t timer_generation_ = 0;

  // What fast_forward.cpp notes at each quantum tick of a candidate rotation, consecutive ticks only.
  struct RotationMark {
    std::int64_t tick = 0;
    std::string key;
    std::size_t hash = 0;         // of the key's length and first bytes (note_rotation)
    std::uint64_t events = 0;     // SimStats::events then
    std::uint64_t decisions = 0;  // SimStats::decisions then
    std::vector<double> done;                 // each running job's work done, in snapshot order
    std::vector<Recorder::Position> held;     // each running job's recorded CPUs
    double delivered = 0;                     // the machine's delivered CPU·s (Recorder::delivered_at)
    std::uint64_t shared_ticks = 0;           // shared_ticks_ then
  };
  std::uint64_t shared_ticks_ = 0;   // ticks that ended with some CPU shared (note_rotation)
  std::vector<RotationMark> marks_;  // a ring: the latest marks_held_ ticks end before marks_next_
  std::size_t marks_next_ = 0;
  std::size_t marks_held_ = 0;
  [[nodiscard]] const RotationMark& mark_back(std::size_t ticks) const;  // 0: the latest
  bool tick_at_now_ = false;  // a quantum tick ran at now_ (note_rotation once the instant is over)

  sensors::SensorSet sensors_;
  bool contention_on_ = false;
  bool cpus_shared_ = false;  // some job's CPU share is below 1 (update_cpu_sharing)
  bool sensing_on_ = false;

  Recorder recorder_;
  SimStats stats_;
  DecisionSink decisions_;
};

}  // namespace cosched::sim
