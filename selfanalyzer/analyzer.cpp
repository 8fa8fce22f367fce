#include "selfanalyzer/analyzer.hpp"

#include <algorithm>
#include <cmath>

namespace cosched::sa {

Analyzer::Analyzer(const Config& config)
    : cfg_(sanitize(config)),
      baseline_cpus_(cfg_.baseline_cpus),
      detector_(cfg_.max_period, cfg_.confirm_repeats, cfg_.min_matches),
      change_(cfg_.jump_high, cfg_.jump_low, cfg_.jump_confirm, cfg_.jump_min_samples),
      window_(cfg_.window),
      history_(cfg_.history) {}

void Analyzer::set_baseline_cpus(int cpus) noexcept {
  // Immediate: a baseline in progress continues at the new size, and the team-size change makes its
  // next samples start a fresh window (record_sample).
  baseline_cpus_ = cpus >= 1 ? std::min(cpus, proto::kMaxCpus) : cfg_.baseline_cpus;
}

void Analyzer::set_baseline_enabled(bool on) noexcept {
  if (on == baseline_enabled_) return;
  baseline_enabled_ = on;
  if (!on && phase_ == Phase::baseline) {
    phase_ = Phase::measuring;  // the baseline samples at hand become measurements at that team size
  } else if (on && phase_ == Phase::measuring && !has_baseline_) {
    restart_measurement(proto::MeasureRestart::none);
  } else if (!on && suspended_ == Phase::baseline) {
    suspended_ = Phase::measuring;
  }
}

// The RM sets it while the job is alone (--baseline auto: Daemon::follow_sharing). An attempt in progress
// pauses: the job runs at its grant at once, and the clean samples it took at the baseline size are kept.
// When another job comes, the attempt resumes with them (our choice). Ending the attempt for good cost
// NPB BT class A, whose iterations last 10 s, a fresh attempt each time a neighbour came back in PDPA's
// workload 1 (cosched-sim: mean response 141 → 173 s at 60 % load); letting it go on made NPB EP class A,
// left alone with 2.2 s to run, finish its narrowed baseline on 1 CPU of 2.
void Analyzer::set_baseline_waits(bool waits) noexcept {
  if (waits == baseline_waits_) return;
  baseline_waits_ = waits;
  if (waits && (phase_ == Phase::baseline || suspended_ == Phase::baseline)) {
    pause_baseline();
    if (phase_ == Phase::baseline) phase_ = Phase::measuring;  // the samples at hand count at their team too
    if (suspended_ == Phase::baseline) suspended_ = Phase::measuring;
    ++progress_version_;
  } else if (!waits && baseline_enabled_ && phase_ == Phase::measuring && !has_baseline_ && baseline_retry_at_ == 0) {
    if (paused_.window.size() > 0) {
      resume_baseline();
    } else {
      restart_measurement(proto::MeasureRestart::none);
    }
  }
}

void Analyzer::pause_baseline() noexcept {
  paused_.window.clear();
  if (window_team_ < 1 || window_.size() == 0) return;
  paused_.window = window_;
  paused_.team = window_team_;
  paused_.load = window_load_;
  paused_.load_since_ns = window_load_since_ns_;
  paused_.attempt_samples = baseline_attempt_samples_;
  paused_.attempt_timed = baseline_attempt_timed_;
}

void Analyzer::resume_baseline() noexcept {
  ++progress_version_;
  phase_ = Phase::baseline;
  window_ = paused_.window;
  window_team_ = paused_.team;
  window_load_ = paused_.load;
  window_load_since_ns_ = paused_.load_since_ns;
  load_shift_ = 0;
  baseline_attempt_samples_ = paused_.attempt_samples;
  baseline_attempt_timed_ = paused_.attempt_timed;
  change_.reset_times();
  iter_dirty_ = true;  // the iteration in progress ran at the grant
  paused_.window.clear();
  count_baseline_sample();  // the bound counts resumptions: an attempt interrupted again and again ends
}

// --- event entry points -------------------------------------------------------------------------

void Analyzer::on_region_at(std::uint64_t region_id, int team, ClockFn now, std::uint64_t t_ns) noexcept {
  ++regions_;
  team = std::max(team, 1);  // a runtime bug must not poison the iteration bookkeeping (0 = "unset")
  const bool team_changed = last_team_ != 0 && team != last_team_;
  last_team_ = team;
  if (!explicit_) {
    const PeriodicityDetector::Step step = detector_.push(region_id);
    if (step.lock_changed) on_lock_changed(step.period);
    // A boundary region ends the previous iteration and is the first region of the next one.
    if (step.boundary && phase_ != Phase::detecting) {
      if (iter_open_ && iter_span_ < batch_) {
        ++iter_span_;  // short iterations: this one joins the sample in progress (no clock read)
        ++iterations_;
      } else {
        if (now != nullptr) t_ns = now();
        const std::uint64_t wait_ns = read_wait();
        close_iteration(t_ns, wait_ns);
        open_iteration(t_ns, wait_ns);
      }
    }
  }
  if (iter_open_) note_region(team, team_changed);
}

void Analyzer::on_iteration_begin(long id, std::uint64_t t_ns, int team) noexcept {
  (void)team;  // the iteration's team is the team of its first region (note_region)
  if (!explicit_) {
    // The program marks its iterations itself: exact boundaries beat detected ones, for good.
    explicit_ = true;
    detector_.reset();
    iter_open_ = false;
  }
  const std::uint64_t wait_ns = read_wait();
  if (iter_open_) {
    if (id != explicit_id_) return;  // a loop nested in the measured one
    close_iteration(t_ns, wait_ns);  // begin without end: measure begin to begin
  }
  if (!explicit_known_ || id != explicit_id_) {
    explicit_known_ = true;
    explicit_id_ = id;
  }
  if (change_.structure_changed(0, static_cast<std::uint64_t>(id))) restart_measurement(proto::MeasureRestart::loop_changed);
  open_iteration(t_ns, wait_ns);
}

void Analyzer::on_iteration_end(long id, std::uint64_t t_ns, int team) noexcept {
  if (!explicit_ || !iter_open_ || id != explicit_id_) return;
  if (iter_team_ == 0) iter_team_ = team;  // no parallel region inside: the team is moot
  close_iteration(t_ns, read_wait());
}

bool Analyzer::report(Report& out) const noexcept {
  if (report_.seq == 0) return false;
  out = report_;
  out.phase = phase_;
  return true;
}

// --- structure --------------------------------------------------------------------------------------

void Analyzer::on_lock_changed(int period) noexcept {
  iter_open_ = false;  // the iteration in progress straddles the change: never a sample
  if (period == 0) {
    // Lost the loop. Run natively (team_for returns the allocation) until a period is found again;
    // remember where we were in case it is the same loop (one odd region breaks a lock).
    if (phase_ != Phase::detecting) suspended_ = phase_;
    phase_ = Phase::detecting;
    return;
  }
  if (change_.structure_changed(period, detector_.signature())) {
    restart_measurement(proto::MeasureRestart::loop_changed);
    return;
  }
  phase_ = suspended_ != Phase::none ? suspended_ : first_phase();
  suspended_ = Phase::none;
}

void Analyzer::restart_measurement(proto::MeasureRestart why) noexcept {
  ++progress_version_;
  // Everything measured describes another loop or another behaviour: start over with a baseline. The
  // last published report stays readable; phase() tells the RM it is no longer current.
  if (why != proto::MeasureRestart::none && has_baseline_) {
    ++restarts_;
    last_restart_ = why;
  }
  phase_ = first_phase();
  suspended_ = Phase::none;
  paused_.window.clear();
  baseline_attempt_samples_ = -1;
  baseline_attempt_timed_ = 0;
  baseline_abandoned_ = 0;
  baseline_retry_at_ = 0;
  clear_window();
  baseline_load_ = -1;
  load_mismatch_since_ns_ = 0;
  window_team_ = 0;
  history_.clear();
  has_baseline_ = false;
  baseline_s_ = 0;
  baseline_spread_ = 0;
  baseline_team_ = 0;
  last_fitted_f_ = std::nan("");
  set_no_speedup(proto::NoSpeedup::none);
  change_.reset_times();
}

// --- iterations ------------------------------------------------------------------------------------

void Analyzer::open_iteration(std::uint64_t t_ns, std::uint64_t wait_ns) noexcept {
  iter_open_ = true;
  iter_wait_start_ = wait_ns;
  iter_span_ = 1;
  iter_dirty_ = false;
  iter_mixed_teams_ = false;
  iter_team_ = 0;
  iter_regions_ = 0;
  iter_start_ns_ = t_ns;
}

// Outside load: the share of the sample's thread time (elapsed × CPUs used) that its threads spent waiting
// for a CPU. Unknown (no source, an oversubscribed team, a thread that exited) means no verdict.
// A sample belongs to its window only if it was measured under the window's outside load: its share of
// waiting within max_wait_fraction of the window's level. Samples taken during a burst are discarded; when
// several in a row agree on a new level, the load changed for good and a new window starts at that level
// (and a baseline measured under another load is measured again: publish()).
bool Analyzer::contaminated_by_load(double elapsed_s, std::uint64_t wait_ns, std::uint64_t t_ns) noexcept {
  if (wait_ns == kWaitUnknown || iter_wait_start_ == kWaitUnknown || wait_ns < iter_wait_start_ || elapsed_s <= 0 ||
      iter_team_ < 1) {
    last_cpu_wait_ = -1;
    return false;
  }
  last_cpu_wait_ = static_cast<double>(wait_ns - iter_wait_start_) * 1e-9 / (elapsed_s * iter_team_);
  if (window_load_ < 0 || std::fabs(last_cpu_wait_ - window_load_) <= cfg_.max_wait_fraction) {
    load_shift_ = 0;
    return false;
  }
  const int dir = last_cpu_wait_ > window_load_ ? 1 : -1;
  load_shift_ = dir == load_shift_dir_ ? load_shift_ + 1 : 1;
  load_shift_dir_ = dir;
  if (load_shift_ > cfg_.jump_confirm) {
    // A lasting new load: the window starts over at its level, with this sample as its first.
    window_.clear();
    window_load_ = last_cpu_wait_;
    window_load_since_ns_ = t_ns;
    load_shift_ = 0;
    return false;
  }
  ++contaminated_;
  return true;
}

void Analyzer::clear_window() noexcept {
  window_.clear();
  window_load_ = -1;
  load_shift_ = 0;
}

// A baseline attempt is bounded (Config::baseline_max_samples): after that many samples whose regions ran
// different teams, the structure of the program keeps it from ever giving a clean one; after that many timed
// samples of any kind (count_baseline_sample), a loaded machine kept it from completing. Either way it is
// abandoned and retried later with backoff. Iterations discarded for a stop or a moved CPU set do not count.
// Called at every timed sample boundary.
void Analyzer::bound_baseline(bool mixed_teams) noexcept {
  if (phase_ != Phase::baseline) {
    baseline_attempt_samples_ = -1;
    baseline_attempt_timed_ = 0;
    // Measuring without a baseline after an abandoned attempt: try again when due.
    if (phase_ == Phase::measuring && !has_baseline_ && baseline_enabled_ && !baseline_waits_ && baseline_retry_at_ != 0 &&
        iterations_ >= baseline_retry_at_) {
      baseline_retry_at_ = 0;
      phase_ = Phase::baseline;
      baseline_attempt_samples_ = 0;
      iter_dirty_ = true;  // the iteration closing now ran at the grant: no baseline sample
      ++progress_version_;
    }
    return;
  }
  baseline_attempt_samples_ = std::max(baseline_attempt_samples_, 0) + (mixed_teams ? 1 : 0);
  if (baseline_attempt_samples_ < cfg_.baseline_max_samples) return;
  abandon_baseline();
}

// A timed sample of the attempt that did not complete the baseline: lost to outside load, an outlier, or the
// first of a window that started over. The phase is bounded in time (issue 29: "measurement must never cost
// the job"): with a build running beside it on the 2-vCPU guest, a job alone under PDPA stayed 20 and 31
// iterations at its 1-CPU baseline while its samples were discarded one after another.
void Analyzer::count_baseline_sample() noexcept {
  if (phase_ != Phase::baseline) return;
  if (++baseline_attempt_timed_ < cfg_.baseline_max_samples) return;
  abandon_baseline();
}

void Analyzer::abandon_baseline() noexcept {
  // Abandoned: the grant again at once, and the samples at hand are not a baseline.
  ++baseline_abandoned_;
  const int doublings = std::min(baseline_abandoned_ - 1, 20);
  baseline_retry_at_ = iterations_ + (static_cast<std::uint64_t>(cfg_.baseline_backoff_iterations) << doublings);
  baseline_attempt_samples_ = -1;
  baseline_attempt_timed_ = 0;
  phase_ = Phase::measuring;
  clear_window();
  window_team_ = 0;
  iter_dirty_ = true;  // the iteration closing now ran in the abandoned attempt
  ++progress_version_;
}

void Analyzer::close_iteration(std::uint64_t t_ns, std::uint64_t wait_ns) noexcept {
  if (!iter_open_) return;
  ++progress_version_;
  iter_open_ = false;
  ++iterations_;
  if (held_) return;  // waiting for the RM to narrow the CPUs: neither a sample nor a failed one
  bound_baseline(iter_mixed_teams_);
  if (explicit_) explicit_regions_ = iter_regions_;
  if (t_ns <= iter_start_ns_) return;
  const double elapsed = static_cast<double>(t_ns - iter_start_ns_) * 1e-9;
  if (!explicit_ && cfg_.min_sample_s > 0) {
    // Batch size for the next samples (Config::min_sample_s): doubling while a batch is too short to time
    // cheaply, halving when it is long.
    if (elapsed < cfg_.min_sample_s && batch_ < kMaxBatch) {
      batch_ *= 2;
    } else if (elapsed > 4 * cfg_.min_sample_s && batch_ > 1) {
      batch_ /= 2;
    }
  }
  if (iter_dirty_ || iter_team_ < 1 || iter_start_ns_ < quiet_until_ns_) return;
  if (contaminated_by_load(elapsed, wait_ns, t_ns)) {
    count_baseline_sample();
    return;
  }
  clean_iterations_ += static_cast<std::uint64_t>(iter_span_);
  clean_ns_ += t_ns - iter_start_ns_;
  if (wait_ns != kWaitUnknown && iter_wait_start_ != kWaitUnknown && wait_ns >= iter_wait_start_) {
    clean_wait_ns_ += wait_ns - iter_wait_start_;
  }
  clean_team_ = iter_team_;
  record_sample(iter_team_, elapsed / iter_span_, t_ns);
  count_baseline_sample();  // nothing once the sample completed the baseline
}

void Analyzer::record_sample(int team, double seconds, std::uint64_t t_ns) noexcept {
  if (phase_ != Phase::baseline && phase_ != Phase::measuring) return;
  if (team != window_team_) {
    clear_window();
    window_team_ = team;
    change_.reset_times();
  }
  switch (change_.classify(seconds, window_.median(), window_.size())) {
    case ChangeDetector::TimeVerdict::outlier:
      return;
    case ChangeDetector::TimeVerdict::changed:
      restart_measurement(proto::MeasureRestart::time_jump);
      return;
    case ChangeDetector::TimeVerdict::accept:
      break;
  }
  if (last_cpu_wait_ >= 0) {  // the window's outside-load level: the mean of its samples'
    const double k = window_load_ < 0 || window_.size() == 0 ? 0.0 : static_cast<double>(window_.size());
    if (window_load_ < 0) window_load_since_ns_ = t_ns;
    window_load_ = window_load_ < 0 ? last_cpu_wait_ : (window_load_ * k + last_cpu_wait_) / (k + 1);
  }
  window_.push(seconds);
  if (phase_ == Phase::baseline) {
    if (window_.size() >= cfg_.baseline_iterations) finish_baseline(team);
    return;
  }
  if (window_.size() < cfg_.min_report_samples) return;
  // Data-dependent work: a noisy window waits until it is full before the first report at this team size.
  const bool first_report_here = report_.seq == 0 || report_.cpus != team;
  if (first_report_here && window_.spread() > cfg_.noisy_spread && window_.size() < cfg_.window) return;
  // The first report at a team size goes out at once (the RM is waiting for it); later ones are throttled.
  const bool first_at_team = report_.seq == 0 || report_.cpus != team;
  if (first_at_team || static_cast<double>(t_ns - last_publish_ns_) * 1e-9 >= cfg_.min_report_interval_s) {
    last_publish_ns_ = t_ns;
    publish(t_ns);
  }
}

void Analyzer::finish_baseline(int team) noexcept {
  has_baseline_ = true;
  baseline_abandoned_ = 0;
  baseline_retry_at_ = 0;
  baseline_attempt_samples_ = -1;
  baseline_s_ = window_.median();
  baseline_spread_ = window_.spread();
  baseline_team_ = team;
  baseline_load_ = window_load_;
  load_mismatch_since_ns_ = 0;
  phase_ = Phase::measuring;
  // Measuring starts with fresh samples; window_team_ stays, so if P equals the baseline size the next
  // iteration counts at once (no team change, no warm-up).
  clear_window();
  change_.reset_times();
}

// Comparing like with like (docs/selfanalyzer.md). At the baseline size the iteration time must be the
// baseline's: a job whose work changed (another data size after a lost lock, an iteration that drifts)
// would otherwise be reported with a speedup at one CPU against one CPU. And no efficiency may exceed
// 1 + the superlinearity margin: such a ratio compares unlike work. Either way the measurement starts
// over (a fresh baseline) and nothing is reported.
bool Analyzer::unlike_work(int cpus, double time_s, double efficiency, std::uint64_t t_ns) noexcept {
  // A baseline measured under outside load is no reference for another team size: once the windows are quiet
  // it counts as measured under another load, and is measured again after the hold like any other.
  const bool across_teams = has_baseline_ && cpus != baseline_team_;
  const bool loaded_baseline = across_teams && under_load(baseline_load_) && window_load_ >= 0 &&
                               !under_load(window_load_);
  if (has_baseline_ && (loads_differ(window_load_, baseline_load_) || loaded_baseline)) {
    set_no_speedup(proto::NoSpeedup::load_differs, time_s, cpus);
    // The baseline saw another outside load: never compared. Measured again only once the windows have
    // disagreed with it for Config::load_hold_s without a break: a transient (a neighbour starting) passes
    // and the old level returns first. The clock runs from the first disagreeing window's level, not the
    // current window's: a load that comes and goes faster than the hold, against a baseline measured
    // across its edges (a level between the two), would otherwise never be compared nor measured again.
    if (load_mismatch_since_ns_ == 0) load_mismatch_since_ns_ = std::max<std::uint64_t>(1, window_load_since_ns_);
    const double held_s = static_cast<double>(t_ns - std::min(t_ns, load_mismatch_since_ns_)) * 1e-9;
    if (held_s >= cfg_.load_hold_s) restart_measurement(proto::MeasureRestart::load_changed);
    return true;
  }
  load_mismatch_since_ns_ = 0;
  if (has_baseline_ && load_unknowable(window_load_, baseline_load_)) {
    set_no_speedup(proto::NoSpeedup::load_differs, time_s, cpus);
    return true;
  }
  // Windows under outside load are not compared with another team size: no report until they are quiet.
  if (across_teams && (under_load(window_load_) || under_load(baseline_load_))) {
    set_no_speedup(proto::NoSpeedup::load_differs, time_s, cpus);
    return true;
  }
  if (has_baseline_ && cpus == baseline_team_ && time_s > 0) {
    // Off by more than the tolerance: never reported. Off by more than the noise can explain too (three
    // times the measured spread): the work changed, and the measurement starts over.
    const double off = std::fabs(baseline_s_ / time_s - 1.0);
    if (off > std::max(cfg_.same_work_tolerance, 3 * std::max(window_.spread(), baseline_spread_))) {
      restart_measurement(proto::MeasureRestart::work_changed);
      return true;
    }
    if (off > cfg_.same_work_tolerance) return true;
  }
  if (efficiency > 1.0 + cfg_.superlinear_margin) {
    restart_measurement(proto::MeasureRestart::impossible_speedup);
    return true;
  }
  return false;
}

void Analyzer::publish(std::uint64_t t_ns) noexcept {
  const int cpus = window_team_;
  const double time_s = window_.median();
  history_.record(cpus, time_s, window_.size(), window_load_);

  // Which two points (docs/selfanalyzer.md): the baseline, measured for this purpose at the fewest
  // CPUs, unless P is the baseline size; then the most recent other team size the job ran at, if it ran
  // under the same outside load as the window (the baseline's load is checked in unlike_work).
  int ref_cpus = baseline_team_;
  double ref_s = baseline_s_;
  if (!has_baseline_ || cpus == baseline_team_) {
    if (const AllocationPoint* other = history_.latest_other_than(cpus)) {
      if (loads_differ(other->load, window_load_) || load_unknowable(other->load, window_load_) ||
          under_load(other->load) || under_load(window_load_)) {
        set_no_speedup(proto::NoSpeedup::load_differs, time_s, cpus);
        return;
      }
      ref_cpus = other->cpus;
      ref_s = other->median_s;
    }
  }
  if (ref_cpus < 1) {
    // No baseline (an abandoned attempt) and no other team size in the history: nothing below P.
    set_no_speedup(proto::NoSpeedup::no_lower_point, time_s, cpus);
    return;
  }
  const SpeedupEstimate est = estimate_speedup(ref_cpus, ref_s, cpus, time_s, last_fitted_f_);
  if (est.status == FitStatus::no_lower_point) {
    // The baseline ran at this very allocation (a team floor above 1 CPU): the baseline and the point
    // judged are one run, and nothing below it was measured.
    set_no_speedup(proto::NoSpeedup::no_lower_point, time_s, cpus);
    return;
  }
  if (est.status == FitStatus::invalid) return;
  if (unlike_work(cpus, time_s, est.efficiency, t_ns)) return;
  set_no_speedup(proto::NoSpeedup::none);
  if (est.status == FitStatus::measured || est.status == FitStatus::clamped) last_fitted_f_ = est.f;

  report_.speedup = est.speedup;
  report_.efficiency = est.efficiency;
  report_.iteration_s = time_s;
  report_.baseline_s = baseline_s_;
  report_.spread = std::max(window_.spread(), baseline_spread_);
  report_.cpus = cpus;
  report_.period = period();
  report_.samples = window_.size();
  report_.baseline_team = baseline_team_;
  report_.cpu_wait = last_cpu_wait_;
  // Unknown only when f was assumed without any earlier fit to borrow from.
  const bool f_known = est.status != FitStatus::assumed || std::isfinite(last_fitted_f_);
  report_.amdahl_f = f_known ? est.f : -1.0;
  report_.fit = est.status;
  ++report_.seq;
}

}  // namespace cosched::sa
