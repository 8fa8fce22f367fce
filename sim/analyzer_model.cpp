#include "sim/analyzer_model.hpp"

#include "rm/job/report_check.hpp"

#include <algorithm>
#include <cmath>

namespace cosched::sim {

namespace {

// The model drives the Analyzer's explicit iteration API (begin_iteration), whose periodicity detector is
// never fed: the smallest one will do. Whether a job's loop can be found at all is decided by the model
// from the configured max_period (running_job.cpp). At the default 1,024 the detector's arrays are 84 KB,
// allocated and cleared for every admitted job.
sa::Config without_detector(sa::Config c) {
  c.max_period = 1;
  return c;
}

}  // namespace

AnalyzerModel::AnalyzerModel(const AnalyzerSettings& settings, std::uint64_t seed)
    : analyzer_(std::make_unique<sa::Analyzer>(without_detector(settings.config))),
      noise_(settings.noise),
      rng_(seed),
      released_spin_ns_(static_cast<std::uint64_t>(std::max(settings.released_spin_s, 0.0) * 1e9)) {
  // By the time the simulator builds a job, "auto" was resolved against the policy (Simulator's constructor):
  // "shared" waits while the job is alone (set_baseline_waits, as the RM's rm_baseline_waits).
  analyzer_->set_baseline_enabled(settings.baseline != "never");
  analyzer_->set_baseline_waits(settings.baseline == "shared");
}

int AnalyzerModel::begin_iteration(int allocation, bool dirty) {
  // libruntime's order: cosched_iter_begin passes team_for(granted), then the first region asks again —
  // after begin, whose phase change (e.g. the first call starting the baseline) decides the team.
  analyzer_->on_iteration_begin(kLoopId, clock_ns_, team_for(allocation));
  const int team = team_for(allocation);
  region(team);
  if (dirty) analyzer_->discard_iteration();
  return team;
}

void AnalyzerModel::region(int team, double since_start_s) {
  // A region at a team different from the last one spoils the iteration in the Analyzer (its warm-up rule).
  // A simulated job's team is its allocation, so a smaller one leaves the released threads spinning on the
  // CPUs left, as libruntime's measure_region sees it, from the moment of the change.
  if (last_team_ > 0 && team < last_team_ && released_spin_ns_ > 0) {
    const auto since_ns = static_cast<std::uint64_t>(std::llround(std::max(since_start_s, 0.0) * 1e9));
    analyzer_->quiet_after(clock_ns_ + since_ns + released_spin_ns_);
  }
  analyzer_->on_region(kRegionId, clock_ns_, team);
  last_team_ = team;
}

void AnalyzerModel::end_iteration(double true_seconds, double extra_noise) {
  double factor = 1.0;
  const double noise = noise_ + std::max(extra_noise, 0.0);
  if (noise > 0) factor = std::max(0.05, 1.0 + noise * rng_.normal());
  const double ns = std::max(1.0, std::round(true_seconds * factor * 1e9));
  clock_ns_ += static_cast<std::uint64_t>(ns);
  analyzer_->on_iteration_end(kLoopId, clock_ns_, std::max(last_team_, 1));
}

bool AnalyzerModel::perf(policy::Perf& out) const {
  sa::Report r;
  if (!analyzer_->report(r)) return false;
  // The arena carries these fields (proto::JobBlock); the RM range-checks them before a policy sees them, and
  // so does the simulator, with the same check.
  policy::Perf p;
  p.speedup = r.speedup;
  p.efficiency = r.efficiency;
  p.iteration_s = r.iteration_s;
  p.baseline_s = r.baseline_s;
  p.spread = r.spread;
  p.cpus = r.cpus;
  p.samples = r.samples;
  p.amdahl_f = r.amdahl_f;
  p.baseline_cpus = r.baseline_team;
  p.seq = r.seq;
  if (!rm::check_report(p).empty()) return false;
  p.valid = true;
  out = p;
  return true;
}

}  // namespace cosched::sim
