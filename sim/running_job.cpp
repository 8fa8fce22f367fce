#include "sim/running_job.hpp"

#include "policies/rotation_key.hpp"
#include "selfanalyzer/config.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cosched::sim {
namespace {

// What libcosched's periodicity detector makes of the job's loop (docs/selfanalyzer.md, "Periodicity"):
// a program that is one long region has no loop to find, and a loop longer than max_period is never
// locked, so neither is ever measured; it runs at its allocation like a job without the analyzer.
bool measurable(const AppModel& app, const AnalyzerSettings& analyzer) {
  return analyzer.enabled && app.period != 0 && app.period <= sa::sanitize(analyzer.config).max_period;
}

// Iterations run natively before measurement starts. A lag m is confirmed once it matched
// max(confirm_repeats·m, min_matches) events after its first period (the detector's rule 1), and the
// Analyzer opens its first iteration at the next boundary; --sa-detect-iterations is a lower bound.
int detection_iterations(const AppModel& app, const AnalyzerSettings& analyzer) {
  const int given = std::max(analyzer.detect_iterations, 0);
  if (app.period <= 0) return given;
  const sa::Config c = sa::sanitize(analyzer.config);
  const int matches = std::max(c.confirm_repeats * app.period, c.min_matches);
  const int periods = 1 + (matches + app.period - 1) / app.period;
  return std::max(given, periods);
}

// The job's own settings: --sa-baseline-cpus auto (0) is resolved per job as the daemon does it
// (rm/daemon/config.hpp, baseline_cpus_for: a quarter of the request, at least 1).
AnalyzerSettings for_job(AnalyzerSettings settings, const JobSpec& spec) {
  if (settings.config.baseline_cpus <= 0) settings.config.baseline_cpus = std::max(1, spec.request / 4);
  // A fixed team keeps its threads on fewer CPUs (a narrowed baseline, a smaller grant): it released none,
  // so no sample waits for spinners (libruntime/measure.cpp, measure_region).
  if (spec.app->fixed_team) settings.released_spin_s = 0;
  return settings;
}

}  // namespace

RunningJob::RunningJob(const JobSpec& spec, const AnalyzerSettings& analyzer, const JobTiming& timing,
                       std::uint64_t seed)
    : spec_(&spec),
      timing_(timing),
      analyzer_enabled_(measurable(*spec.app, analyzer)),
      analyzer_(for_job(analyzer, spec), seed),
      progress_(spec.work, spec.app->speedup),
      // Its own stream, apart from the Analyzer's: the measured path draws what it drew without the sampler.
      waiting_(analyzer.enabled && analyzer.waiting_time, analyzer.noise, seed ^ 0x5741495449474e45ULL),
      iteration_work_(spec.app->iteration_s > 0 ? spec.app->iteration_s : std::max(spec.work, 1e-9)),
      detect_left_(analyzer_enabled_ ? detection_iterations(*spec.app, analyzer) : 0),
      startup_noise_(analyzer.startup_noise),
      startup_s_(analyzer.startup_s) {
  baseline_waits_ = analyzer.baseline == "shared";
  // Enough for a warm-up iteration, a full window and the first report at a team, with room to spare. With
  // noise every sample differs, and a later one may give the fit it needs: keep observing then.
  const sa::Config c = sa::sanitize(analyzer.config);
  if (analyzer.noise <= 0 && analyzer.startup_noise <= 0) silent_limit_ = 2 + c.window + c.min_report_samples + c.jump_min_samples;
}

double RunningJob::iteration_end_work() const {
  return std::min(static_cast<double>(iteration_ + 1) * iteration_work_, progress_.total());
}

// `team`: the CPUs the job's threads run on (the Analyzer's team, or the allocation). A fixed team keeps its
// request's threads there (a baseline by narrowing, or a grant below the request): they share the CPUs, at
// 1 + oversub_cost x (threads per CPU - 1) times the time the CPUs alone would take.
void RunningJob::set_team(double t, int team) {
  if (!spec_->app->fixed_team || team <= 0) {
    progress_.set_team(t, team, timing_.realloc_cost_s);
    threads_on_ = std::max(team, 0);
  } else {
    const int threads = std::max(spec_->request, 1);
    const int cpus = std::min(team, threads);  // more CPUs than threads: the threads use that many
    const double oversub = 1.0 + timing_.oversub_cost * (static_cast<double>(threads) / cpus - 1.0);
    progress_.set_team(t, cpus, timing_.realloc_cost_s, oversub);
    threads_on_ = cpus;
  }
  update_waiting(t);
}

// The sampler's view of the job from t (sim/waiting_model.hpp): the CPUs its threads run on, one interval (an
// iteration at the job's pace now, contention and shared CPUs included, at least 40 ms; 0.2 s for a job whose
// loop libcosched never finds), the working share of its threads, from its curve without contention, and the
// end of a reallocation's stall, before which no interval ends.
void RunningJob::update_waiting(double t) {
  if (!waiting_.enabled()) return;
  const int c = threads_on_;
  double interval = std::numeric_limits<double>::infinity();
  double efficiency = 0;
  if (c > 0 && progress_.rate() > 0) {
    const double iteration = iteration_work_ / progress_.rate();
    interval = analyzer_enabled_ ? std::max(WaitingModel::kMinIntervalS, iteration) : WaitingModel::kAperiodicS;
    efficiency = std::min(1.0, catalog::speedup(spec_->app->speedup, c) / c);
  }
  waiting_.update(t, c, interval, efficiency, progress_.stalled_until());
}

void RunningJob::sync_iteration_index() {
  // Unobserved iterations pass without events: recompute which one is in progress from the work done.
  iteration_ = static_cast<std::int64_t>(std::floor(progress_.done() / iteration_work_));
  if (iteration_end_work() - progress_.done() <= kBoundaryTolerance * iteration_work_) ++iteration_;
}

void RunningJob::start(double t, int cpus) {
  started_at_ = t;
  cpus_ = cpus;
  runnable_ = true;
  ++generation_;
  if (!analyzer_enabled_) {
    set_team(t, cpus);
    watch_ = Watch::off;
  } else if (detect_left_ > 0) {
    set_team(t, cpus);  // runs natively while the periodicity detector looks for the loop
    watch_ = Watch::to_boundary;
  } else {
    open_iteration(t, false);
  }
}

void RunningJob::open_iteration(double t, bool dirty) {
  const int before = progress_.team();
  const bool first = !opened_any_;
  opened_any_ = true;
  quiet_team_ = -1;
  const int team = analyzer_.begin_iteration(cpus_, dirty);
  dirty_ = dirty;
  if (team < cpus_ && analyzer_.phase() == sa::Phase::baseline) ++baseline_iterations_;
  // After a detection delay the program's regions ran at the native team; the first measured iteration
  // changes team, which a DPD-driven Analyzer sees as a team change (warm-up, discarded).
  if (first && before > 0 && team != before) {
    analyzer_.discard();
    dirty_ = true;
  }
  set_team(t, team);
  watch_ = Watch::open;
  iteration_started_ = t;
  resume_at_ = std::numeric_limits<double>::infinity();
}

void RunningJob::on_boundary(double t) {
  progress_.advance(t);
  progress_.snap_to(iteration_end_work());
  ++iteration_;
  ++generation_;
  if (watch_ == Watch::to_boundary) {
    if (detect_left_ > 0 && --detect_left_ > 0) return;  // still detecting
    open_iteration(t, false);
    return;
  }
  if (watch_ != Watch::open) return;
  const double seconds = t - iteration_started_;
  const std::uint64_t seq_before = analyzer_.report_seq();
  analyzer_.end_iteration(seconds, t - started_at_ < startup_s_ ? startup_noise_ : 0.0);
  ++observed_;
  policy::Perf p;
  const bool reported = analyzer_.report_seq() != seq_before;
  const bool steady = reported && analyzer_.phase() == sa::Phase::measuring && analyzer_.perf(p) &&
                      p.cpus == progress_.team() && p.cpus == cpus_ && runnable_;
  silent_ = reported ? 0 : silent_ + 1;
  if (steady) {
    after_report(t, seconds);
  } else if (silent_limit_ > 0 && silent_ >= silent_limit_ && analyzer_.phase() == sa::Phase::measuring &&
             progress_.team() == cpus_ && runnable_) {
    // Identical iterations at an unchanged team: the next one cannot publish what this one did not.
    watch_ = Watch::off;
    resume_at_ = std::numeric_limits<double>::infinity();
    quiet_team_ = progress_.team();
  } else {
    open_iteration(t, false);
  }
}

void RunningJob::after_report(double t, double iteration_seconds) {
  // The RM now knows how the job does at its allocation. Further iterations only matter for what a new
  // report could change: noise (re-sample every report_every_s) or nothing (stop observing).
  if (timing_.report_every_s <= 0) {
    watch_ = Watch::off;
    resume_at_ = std::numeric_limits<double>::infinity();
    quiet_team_ = progress_.team();
  } else if (iteration_seconds >= timing_.report_every_s) {
    open_iteration(t, false);  // iterations longer than the cadence: every one reports, as in a real run
  } else {
    watch_ = Watch::off;
    resume_at_ = t + timing_.report_every_s - iteration_seconds;
  }
}

bool RunningJob::set_baseline_waits(double t, bool waits) {
  if (waits == baseline_waits_) return false;
  baseline_waits_ = waits;
  if (!analyzer_enabled_) return false;
  analyzer_.set_baseline_waits(waits);
  silent_ = 0;  // a baseline that starts, pauses or resumes: the iterations to come may publish again
  return follow_team(t);
}

bool RunningJob::set_baseline_enabled(double t, bool on) {
  if (!analyzer_enabled_) return false;
  analyzer_.set_baseline_enabled(on);
  silent_ = 0;  // a baseline that starts or ends: the iterations to come may publish again
  return follow_team(t);
}

bool RunningJob::follow_team(double t) {
  // libruntime: the next region runs with the team the Analyzer gives now (a baseline paused, resumed,
  // started or ended), not the next iteration. A job not observed now learns it at its next reallocation
  // (docs/simulator.md).
  if (watch_ != Watch::open || !runnable_) return false;
  const int team = analyzer_.team_for(cpus_);
  if (team == progress_.team()) return false;
  progress_.advance(t);
  analyzer_.region(team, t - iteration_started_);
  set_team(t, team);
  if (team < cpus_ && analyzer_.phase() == sa::Phase::baseline) ++baseline_iterations_;
  ++generation_;
  return true;
}

void RunningJob::set_slowdown(double t, double slowdown) {
  progress_.set_slowdown(t, slowdown);
  ++generation_;
  update_waiting(t);  // its iterations, hence the sampler's intervals, take longer; its threads wait no more
}

void RunningJob::set_cpu_share(double t, double share) {
  progress_.set_cpu_share(t, share);
  ++generation_;
  update_waiting(t);
}

void RunningJob::on_resume(double t) {
  progress_.advance(t);
  resume_at_ = std::numeric_limits<double>::infinity();
  ++generation_;
  if (watch_ != Watch::off) return;
  sync_iteration_index();
  watch_ = Watch::to_boundary;
}

bool RunningJob::boundary_due() const {
  const double end = iteration_end_work();
  return end < progress_.total() && end - progress_.done() <= kBoundaryTolerance * iteration_work_;
}

void RunningJob::reallocate(double t, int cpus, bool runnable) {
  progress_.advance(t);
  // A stop, a resume or a move on as many CPUs (the turns of time sharing) is no new team: the iterations
  // around it count towards the silent limit as one run of them; another CPU count may let a report come.
  if (cpus != cpus_) silent_ = 0;
  // An iteration that ends at this very instant ends before the change (all its regions ran with the old
  // team), whether or not its boundary event was handled yet: the rule sync_iteration_index applies to
  // unobserved iterations, so observed and unobserved jobs agree.
  if (watch_ != Watch::off && boundary_due()) on_boundary(t);
  const int cpus_before = cpus_;
  cpus_ = cpus;
  runnable_ = runnable;
  ++generation_;
  if (!runnable) {
    // Stopped (time sharing): no progress, and the iteration in progress is no longer a clean sample.
    if (watch_ == Watch::open) {
      analyzer_.discard();
      dirty_ = true;
    }
    set_team(t, 0);
    return;
  }
  if (!analyzer_enabled_ || detect_left_ > 0 || !opened_any_) {
    set_team(t, cpus);  // native team: no Analyzer is steering it yet
    return;
  }
  if (watch_ == Watch::open) {
    const int team = analyzer_.team_for(cpus);
    // libruntime: the next region runs with the new team (the Analyzer marks the iteration dirty); a change
    // of the CPU set the team filled also discards the iteration, but never two in a row.
    if (team != progress_.team()) analyzer_.region(team, t - iteration_started_);
    if (progress_.team() >= cpus_before) cpu_set_changed();  // the team filled the CPU set that moved
    set_team(t, team);
    return;
  }
  // Resumed or moved on as many CPUs (the turns of time sharing), at the team whose iterations went quiet (a
  // report describes it, or identical iterations published nothing): without noise the iterations to come
  // repeat those, so they cannot publish anything new either; the job stays unobserved (the rule of `off`).
  if (cpus == cpus_before && quiet_team_ == analyzer_.team_for(cpus) && timing_.report_every_s <= 0) {
    set_team(t, quiet_team_);
    return;
  }
  // Not observed until now: the iteration in progress straddles the change and is dirty; measure from here.
  sync_iteration_index();
  open_iteration(t, true);
}

void RunningJob::cpu_set_changed() {
  // libruntime/measure.cpp, follow_rm: an iteration during which the RM changed the CPU set its team filled
  // is discarded, unless the iteration before it was discarded for the same reason.
  const std::uint64_t done = analyzer_.iterations();
  if (discard_at_ == kNever || done > discard_at_ + 1) {
    analyzer_.discard();
    dirty_ = true;
    discard_at_ = done;
  }
}

bool RunningJob::quiet() const {
  // An observed iteration already discarded can give no sample: only its end matters (next_own_work), as
  // the next boundary of a job running to one does.
  const bool unobserved = watch_ == Watch::off || watch_ == Watch::to_boundary || (watch_ == Watch::open && dirty_);
  return started() && unobserved && !std::isfinite(resume_at_);
}

double RunningJob::next_own_work() const {
  return watch_ == Watch::off ? progress_.total() : std::min(iteration_end_work(), progress_.total());
}

void RunningJob::append_key(policy::KeyWriter& w, double t) const {
  w << std::max(progress_.stalled_until() - t, 0.0);  // a stall since a resume at t
  w << watch_ << iteration_ << dirty_ << opened_any_ << cpus_ << runnable_ << threads_on_ << detect_left_
    << baseline_waits_ << silent_ << quiet_team_ << analyzer_.report_seq() << analyzer_.phase();
  progress_.append_key(w);
  waiting_.append_key(w, t);
}

void RunningJob::skip_rotation(double seconds, double work) {
  progress_.skip(seconds, work);
  waiting_.skip(seconds);
  ++generation_;
}

RunningJob::Next RunningJob::next_event() const {
  const double total = progress_.total();
  if (watch_ == Watch::off) return {progress_.time_when(total), EventKind::completion};
  const double end = iteration_end_work();
  if (end >= total * (1 - 1e-12)) return {progress_.time_when(total), EventKind::completion};
  return {progress_.time_when(end), EventKind::iteration_end};
}

}  // namespace cosched::sim
