// The SelfAnalyzer object the runtime holds (one per process): fed the outermost parallel regions (or the
// explicit iteration API), it picks the team size for the baseline measurement and reports speedup,
// efficiency and iteration time (PDPA paper §3.1; docs/selfanalyzer.md).
//
// Threading: not thread-safe. The runtime calls every method from one thread — the thread that begins
// outermost parallel regions (the initial thread) — or serialises the calls itself.
// Cost: on_region is O(max_period) with no allocation, syscall or lock (docs/performance.md); the other
// methods are O(1) except at iteration ends (O(window)) and locks (O(period)).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cosched/protocol.hpp"
#include "selfanalyzer/allocation_history.hpp"
#include "selfanalyzer/change_detector.hpp"
#include "selfanalyzer/config.hpp"
#include "selfanalyzer/periodicity_detector.hpp"
#include "selfanalyzer/sample_window.hpp"
#include "selfanalyzer/speedup.hpp"

namespace cosched::sa {

using Phase = proto::Phase;  // none, detecting, baseline, measuring: the arena's vocabulary

// What a wait source returns when it cannot tell (docs/selfanalyzer.md, "Outside load").
inline constexpr std::uint64_t kWaitUnknown = ~std::uint64_t{0};

// The latest measurement. Every field but `fit` maps 1:1 onto proto::JobBlock, with the same name
// (`seq` is JobBlock::reports).
struct Report {
  std::uint64_t seq = 0;         // JobBlock::reports: increments with every new report; 0 = none yet
  Phase phase = Phase::none;     // the Analyzer's phase when report() was called
  double speedup = 0;            // vs one CPU, Amdahl-normalised
  double efficiency = 0;         // speedup / cpus
  double iteration_s = 0;        // median iteration time at `cpus`
  double baseline_s = 0;         // median iteration time at `baseline_team`
  double spread = 0;             // max(relative spread at cpus, at baseline); 0 = exact
  double amdahl_f = -1;          // parallel fraction behind the normalisation; -1 = unknown (1-CPU reference)
  std::int32_t cpus = 0;         // team size of iteration_s (P)
  std::int32_t period = 0;       // regions per iteration (DPD period, or counted with the explicit API)
  std::int32_t samples = 0;      // iterations behind iteration_s
  std::int32_t baseline_team = 0;
  double cpu_wait = -1;          // share of the last sample's thread time spent waiting for a CPU; -1 unknown
  FitStatus fit = FitStatus::invalid;  // not in JobBlock: how amdahl_f was obtained
};

class Analyzer {
 public:
  // Allocates the detector's arrays (O(max_period)); `config` is sanitised first. Never throws other
  // than std::bad_alloc.
  explicit Analyzer(const Config& config);
  Analyzer(const Analyzer&) = delete;
  Analyzer& operator=(const Analyzer&) = delete;

  // Caller: the OMPT parallel_begin callback, for outermost regions only, after the team size was
  // chosen with team_for(). region_id: the region's codeptr_ra; t_ns: a monotonic clock (any epoch);
  // team: the team size requested for this region. Cost: O(max_period), no allocation.
  void on_region(std::uint64_t region_id, std::uint64_t t_ns, int team) noexcept {
    on_region_at(region_id, team, nullptr, t_ns);
  }

  // The same, reading the clock only when the region is an iteration boundary (the only time a timestamp
  // is used): what the runtime calls, since most regions of an iteration need no time at all.
  using ClockFn = std::uint64_t (*)() noexcept;
  void on_region(std::uint64_t region_id, int team, ClockFn now) noexcept { on_region_at(region_id, team, now, 0); }

  // The runtime's fast path for the common region. Caller: parallel_begin, for a region whose team is the
  // previous region's (last_team()), instead of on_region. When the region is the one the detector's steady
  // state expects next and no timed sample ends here, does exactly what on_region would do (it only
  // advances counters: nothing report_seq(), phase(), progress_version() or team_for() depend on moves) and
  // returns true; otherwise changes nothing and returns false, and the caller calls on_region. O(1), no
  // clock read.
  bool on_region_repeat(std::uint64_t region_id) noexcept {
    // The steady state implies no explicit iterations (they reset the detector for good).
    const int next = detector_.steady_peek(region_id);
    if (next < 0) return false;
    const bool boundary = next == 1 && phase_ != Phase::detecting;
    if (boundary && !(iter_open_ && iter_span_ < batch_)) return false;  // a sample ends here: on_region
    detector_.steady_advance();
    ++regions_;
    if (boundary) {  // the iteration joins the sample in progress, as in on_region
      ++iter_span_;
      ++iterations_;
    }
    if (iter_open_) note_region(last_team_, false);
    return true;
  }

  // Caller: cosched_iter_begin/end (relinked codes). The first call switches the Analyzer to explicit
  // iterations for good: the DPD is no longer fed. `id` names the loop; iterations are begin..end of
  // the same id; a begin of another id while one is open is a nested loop and ignored; a begin of
  // another id when none is open is a new loop (measurement restarts). team: the team size that
  // team_for() returns now (used only for an iteration without parallel regions). O(1), O(window) at end.
  void on_iteration_begin(long id, std::uint64_t t_ns, int team) noexcept;
  void on_iteration_end(long id, std::uint64_t t_ns, int team) noexcept;

  // Caller: the runtime at initialisation. `wait` returns the job's threads' total run-queue delay in ns
  // (monotonic; kWaitUnknown when it cannot tell); it is read at sampled iteration boundaries only. A sample
  // whose share of waiting for a CPU differs from its window's by more than Config::max_wait_fraction was
  // measured under another outside load and is discarded; a baseline measured under another load than the
  // samples at P is measured again (docs/selfanalyzer.md, "Outside load"). nullptr (the default): no filter.
  using WaitFn = std::uint64_t (*)() noexcept;
  void set_wait_source(WaitFn wait) noexcept { wait_ = wait; }
  // Samples discarded so, and the wait share of the latest sample (-1: unknown).
  [[nodiscard]] std::uint64_t contaminated() const noexcept { return contaminated_; }
  [[nodiscard]] double last_cpu_wait() const noexcept { return last_cpu_wait_; }

  // Caller: the runtime when the iteration in progress must not be measured although the team size did
  // not change: the RM stopped the job for a while (time sharing; RmBlock::stops moved). The next
  // iteration is measured normally. O(1).
  void discard_iteration() noexcept { iter_dirty_ = true; }
  // Caller: the runtime when threads its team just released may keep spinning on the job's CPUs until t_ns
  // (libomp's KMP_BLOCKTIME, after the team and its CPUs shrank together): no sample that begins before t_ns
  // is used. A barrier waits for the thread that shares its CPU with a spinner, so such samples are far
  // slower than the CPUs explain, while the threads' wait share stays under max_wait_fraction on a large
  // allocation (one spinner among 16 threads: about 6 %). Seen on 16 CPUs (docs/selfanalyzer.md, "Outside
  // load"). O(1).
  void quiet_after(std::uint64_t t_ns) noexcept { quiet_until_ns_ = std::max(quiet_until_ns_, t_ns); }

  // Caller: the runtime while it waits for the RM to narrow the job's CPUs for a baseline its team cannot
  // run itself (docs/selfanalyzer.md, "Teams that cannot shrink"). While held, iterations are counted but
  // never sampled, and they do not count against the baseline attempt's bound: they ran at the grant, not
  // at the baseline, through no fault of the program. The runtime discards the iteration in progress when
  // it releases the hold. O(1).
  void hold_samples(bool on) noexcept { held_ = on; }
  [[nodiscard]] bool samples_held() const noexcept { return held_; }
  // Samples of the current baseline attempt whose regions ran different teams (0 outside an attempt): a
  // program whose team the runtime cannot lower for every region (a read latched at the grant, a clause).
  [[nodiscard]] int baseline_mixed_samples() const noexcept { return std::max(baseline_attempt_samples_, 0); }

  // Caller: parallel_begin, before on_region. The team size to use given the RM's allocation `granted`:
  // min(baseline_cpus, granted) during the baseline phase, `granted` otherwise. The runtime may still raise
  // it to the job's team floor. A baseline that is not below the allocation is no lower point: the job then
  // publishes its iteration time without a speedup (docs/selfanalyzer.md, "A speedup is a measurement"),
  // rather than run below its grant for a baseline it was not asked for (a job under gang scheduling with
  // --baseline-cpus equal to its allocation would run its baseline at half, in iterations longer than a
  // quantum). O(1).
  [[nodiscard]] int team_for(int granted) const noexcept {
    return phase_ == Phase::baseline && granted > baseline_cpus_ ? baseline_cpus_ : granted;
  }

  // Caller: the runtime with RmBlock::baseline_cpus (0 = back to Config::baseline_cpus). Takes effect at
  // once: a baseline in progress goes on at the new size (the team change starts a fresh window). O(1).
  void set_baseline_cpus(int cpus) noexcept;

  // Caller: the runtime with the RM's rm_no_baseline flag. Off: the policy uses no speedup (Equipartition,
  // DSS), so the job never slows itself down for a baseline; it measures iteration times at the granted
  // allocation only, and reports a speedup once it has run at two team sizes anyway (the most recent
  // other one is the reference). Turning it back on starts a baseline. O(1).
  void set_baseline_enabled(bool on) noexcept;
  // Caller: the runtime with the RM's rm_baseline_waits flag (the job is alone). While it waits no baseline
  // attempt runs: one in progress pauses, keeping its samples. Turning it off resumes that attempt, or
  // starts one unless a baseline was completed. O(1).
  void set_baseline_waits(bool waits) noexcept;

  // Caller: the runtime after on_region / on_iteration_end, to publish into the arena when report_seq()
  // moved. report() fills `out` and returns false while no report exists (a program without
  // periodicity never gets one). O(1).
  [[nodiscard]] std::uint64_t report_seq() const noexcept { return report_.seq; }
  bool report(Report& out) const noexcept;

  [[nodiscard]] Phase phase() const noexcept { return phase_; }
  // A baseline of the current loop was completed (and not discarded since).
  [[nodiscard]] bool has_baseline() const noexcept { return has_baseline_; }
  [[nodiscard]] int period() const noexcept { return explicit_ ? explicit_regions_ : detector_.period(); }
  [[nodiscard]] std::uint64_t regions() const noexcept { return regions_; }
  [[nodiscard]] std::uint64_t iterations() const noexcept { return iterations_; }
  // CPUs the team of the latest region could use (0: no region yet).
  [[nodiscard]] int last_team() const noexcept { return last_team_; }
  // Moves whenever iterations(), restarts(), last_restart(), last_cpu_wait() or contaminated() may have
  // changed, except for iterations joining a batched sample: the runtime publishes those fields into the
  // arena only when it moved, not on every region. O(1).
  [[nodiscard]] std::uint64_t progress_version() const noexcept { return progress_version_; }
  [[nodiscard]] bool explicit_iterations() const noexcept { return explicit_; }
  [[nodiscard]] const Config& config() const noexcept { return cfg_; }
  // Every clean sample so far, cumulated (not reset by a restart): iterations, their total time in ns, and
  // the team of the latest. Clean = not dirty (no team or CPU-set change, no stop) and not discarded for
  // outside CPU load, whatever the phase or the change detector's verdict: a slowdown caused by a memory-
  // hungry neighbour is exactly what the RM's counter-free bandwidth sensor looks for (proto::SensorBlock).
  [[nodiscard]] std::uint64_t clean_iterations() const noexcept { return clean_iterations_; }
  [[nodiscard]] std::uint64_t clean_ns() const noexcept { return clean_ns_; }
  // The run-queue delay of the threads during those samples, summed over the threads (0 where unknown).
  [[nodiscard]] std::uint64_t clean_wait_ns() const noexcept { return clean_wait_ns_; }
  [[nodiscard]] int clean_team() const noexcept { return clean_team_; }
  // How often the measurement was thrown away, and why the latest time (docs/selfanalyzer.md, "Comparing
  // like with like").
  [[nodiscard]] std::uint32_t restarts() const noexcept { return restarts_; }
  [[nodiscard]] proto::MeasureRestart last_restart() const noexcept { return last_restart_; }
  // Baseline attempts abandoned in a row for taking more than Config::baseline_max_samples (0 once a
  // baseline completes). The next attempt comes baseline_backoff_iterations × 2^(n−1) iterations later.
  [[nodiscard]] int baseline_abandoned() const noexcept { return baseline_abandoned_; }
  // Why the latest window at P gave no report although it was due (none: it gave one, or nothing was due
  // since the measurement started over). Moves progress_version(). docs/selfanalyzer.md, "A speedup is a
  // measurement".
  [[nodiscard]] proto::NoSpeedup no_speedup() const noexcept { return no_speedup_; }
  // The window that gave no report for that reason: its median iteration time and team (0 when none). What
  // status shows as the job's iteration time while no speedup is reported. Moves progress_version().
  [[nodiscard]] double unreported_s() const noexcept { return unreported_s_; }
  [[nodiscard]] int unreported_cpus() const noexcept { return unreported_cpus_; }

 private:
  void on_region_at(std::uint64_t region_id, int team, ClockFn now, std::uint64_t t_ns) noexcept;
  void on_lock_changed(int period) noexcept;
  [[nodiscard]] Phase first_phase() const noexcept {
    return baseline_enabled_ && !baseline_waits_ ? Phase::baseline : Phase::measuring;
  }
  void restart_measurement(proto::MeasureRestart why) noexcept;
  [[nodiscard]] bool unlike_work(int cpus, double time_s, double efficiency, std::uint64_t t_ns) noexcept;
  void open_iteration(std::uint64_t t_ns, std::uint64_t wait_ns) noexcept;
  [[nodiscard]] std::uint64_t read_wait() const noexcept { return wait_ != nullptr ? wait_() : kWaitUnknown; }
  [[nodiscard]] bool contaminated_by_load(double elapsed_s, std::uint64_t wait_ns, std::uint64_t t_ns) noexcept;
  void clear_window() noexcept;
  void note_region(int team, bool team_changed) noexcept {
    ++iter_regions_;
    // A team change at any of its regions (the first included: new threads, cold caches) spoils the
    // iteration; this is also the warm-up iteration discarded after every change of team size.
    const bool mixed = iter_team_ != 0 && team != iter_team_;
    if (team_changed || mixed) iter_dirty_ = true;
    iter_mixed_teams_ = iter_mixed_teams_ || mixed;
    if (iter_team_ == 0) iter_team_ = team;
  }
  void close_iteration(std::uint64_t t_ns, std::uint64_t wait_ns) noexcept;
  void record_sample(int team, double seconds, std::uint64_t t_ns) noexcept;
  void finish_baseline(int team) noexcept;
  void bound_baseline(bool mixed_teams) noexcept;
  void count_baseline_sample() noexcept;
  void abandon_baseline() noexcept;
  void pause_baseline() noexcept;
  void resume_baseline() noexcept;
  void publish(std::uint64_t t_ns) noexcept;
  void set_no_speedup(proto::NoSpeedup why, double window_s = 0, int window_cpus = 0) noexcept {
    if (why == proto::NoSpeedup::none) window_s = 0, window_cpus = 0;
    if (why != no_speedup_ || window_s != unreported_s_ || window_cpus != unreported_cpus_) ++progress_version_;
    no_speedup_ = why;
    unreported_s_ = window_s;
    unreported_cpus_ = window_cpus;
  }
  [[nodiscard]] bool loads_differ(double a, double b) const noexcept {
    return a >= 0 && b >= 0 && std::fabs(a - b) > cfg_.max_wait_fraction;
  }
  // One level unknown (its team outnumbered its CPUs, as in a baseline by narrowing: docs/selfanalyzer.md,
  // "Outside load"), the other above max_wait_fraction: that load may not have been there when the unknown
  // one was measured, so the two cannot be shown alike. Measuring again would not tell either.
  [[nodiscard]] bool load_unknowable(double a, double b) const noexcept {
    return (a < 0) != (b < 0) && std::max(a, b) > cfg_.max_wait_fraction;
  }
  // A known level above max_wait_fraction: outside load took CPU time from the job's threads. Two team sizes
  // are never compared across it, even at one level: the job's share of the loaded CPUs grows with its
  // threads (and its idle threads' spinning), so the ratio of their times is not the program's speedup
  // (docs/selfanalyzer.md, "Outside load").
  [[nodiscard]] bool under_load(double level) const noexcept { return level > cfg_.max_wait_fraction; }

  Config cfg_;
  int baseline_cpus_;
  bool baseline_enabled_ = true;
  bool baseline_waits_ = false;  // set_baseline_waits
  PeriodicityDetector detector_;
  ChangeDetector change_;
  SampleWindow window_;  // clean iteration times at window_team_
  AllocationHistory history_;

  Phase phase_ = Phase::detecting;
  Phase suspended_ = Phase::none;  // phase to resume if a lost lock comes back on the same loop
  std::uint64_t regions_ = 0;
  std::uint64_t iterations_ = 0;
  std::uint64_t progress_version_ = 0;
  int last_team_ = 0;  // team of the previous region (0: none yet)

  // The iteration in progress.
  bool iter_open_ = false;
  bool iter_dirty_ = false;  // a team change happened in it: not a clean sample
  bool held_ = false;        // hold_samples(true): no sample at all
  bool iter_mixed_teams_ = false;  // its regions ran different teams (not just a new team from its start)
  int iter_team_ = 0;        // 0 until its first region
  int iter_regions_ = 0;
  std::uint64_t iter_start_ns_ = 0;
  std::uint64_t quiet_until_ns_ = 0;  // samples beginning before this are not clean (quiet_after)
  std::uint64_t last_publish_ns_ = 0;  // t_ns of the last report (throttling)
  int batch_ = 1;       // detected iterations per timed sample (Config::min_sample_s)
  int iter_span_ = 0;   // iterations the open sample spans so far

  // Explicit iteration API.
  bool explicit_ = false;
  bool explicit_known_ = false;
  long explicit_id_ = 0;
  int explicit_regions_ = 0;  // regions in the last complete explicit iteration

  int window_team_ = 0;
  bool has_baseline_ = false;
  double baseline_s_ = 0;
  double baseline_spread_ = 0;
  int baseline_team_ = 0;
  double last_fitted_f_ = std::nan("");

  Report report_;
  WaitFn wait_ = nullptr;
  std::uint64_t iter_wait_start_ = kWaitUnknown;
  std::uint64_t contaminated_ = 0;
  double last_cpu_wait_ = -1;
  double window_load_ = -1;    // outside-load level (wait share) of the window's samples; -1 unknown
  std::uint64_t window_load_since_ns_ = 0;  // when the window's load level was set (Config::load_hold_s)
  double baseline_load_ = -1;  // the level the baseline was measured at
  std::uint64_t load_mismatch_since_ns_ = 0;  // since when windows' levels differ from baseline_load_ (0: they agree)
  int load_shift_ = 0;         // consecutive samples away from window_load_ on one side
  int load_shift_dir_ = 0;
  std::uint64_t clean_iterations_ = 0;
  std::uint64_t clean_ns_ = 0;
  std::uint64_t clean_wait_ns_ = 0;
  int clean_team_ = 0;
  std::uint32_t restarts_ = 0;
  proto::MeasureRestart last_restart_ = proto::MeasureRestart::none;
  proto::NoSpeedup no_speedup_ = proto::NoSpeedup::none;
  // Bounded baseline attempts (Config::baseline_max_samples): samples of the current attempt whose regions
  // ran different teams (-1 outside the baseline phase), attempts abandoned in a row, and the iteration when
  // the next one may begin (0: no abandoned attempt waits).
  int baseline_attempt_samples_ = -1;
  int baseline_attempt_timed_ = 0;  // timed samples of the current attempt (count_baseline_sample)
  int baseline_abandoned_ = 0;
  std::uint64_t baseline_retry_at_ = 0;
  double unreported_s_ = 0;
  int unreported_cpus_ = 0;
  // A baseline attempt paused while the job is alone (set_baseline_waits): its window (empty: none) and
  // where the attempt stood, to resume when another job comes.
  struct PausedBaseline {
    SampleWindow window{kMaxWindow};
    int team = 0;
    double load = -1;
    std::uint64_t load_since_ns = 0;
    int attempt_samples = -1;
    int attempt_timed = 0;
  };
  PausedBaseline paused_;
};

}  // namespace cosched::sa
