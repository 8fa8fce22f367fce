// The SelfAnalyzer as a simulated job runs it. Not a re-implementation: this is libcosched's own
// cosched::sa::Analyzer (selfanalyzer/analyzer.hpp), driven through its explicit-iteration API exactly as
// libruntime drives it for a relinked code (cosched_iter_begin/end, one outermost parallel region per
// iteration). So the baseline phase, the warm-up iterations, the median window, the Amdahl normalisation
// (PDPA paper §3.1; selfanalyzer/speedup.hpp) and the report sequence are the real ones.
//
// The simulator supplies what a real process would: the team size libruntime would ask for (team_for), and
// the length of each iteration. Measurement noise is applied here: the Analyzer sees
//     measured = true length × max(0.05, 1 + noise × N(0, 1))
// with N drawn from the job's own seeded stream, so one job's noise never depends on another job's events.
// Noise only affects what is measured, never the job's real progress.
#pragma once

#include <cstdint>
#include <memory>

#include "policies/snapshot.hpp"
#include <string>

#include "selfanalyzer/analyzer.hpp"
#include "sim/gen/random.hpp"

namespace cosched::sim {

struct AnalyzerSettings {
  bool enabled = true;        // false: jobs run at their allocation and never report (no libcosched analyzer)
  sa::Config config;          // baseline_cpus, baseline_iterations, window, min_report_samples, ...
  double noise = 0;           // relative standard deviation of measured iteration times
  // Start-up noise: during a job's first `startup_s` seconds its measurements are noisier by this much
  // (relative standard deviation added to `noise`): neighbours starting at the same time, cold caches, page
  // faults. Seen on a 16-CPU machine: a job's first efficiencies 0.48, 0.36, 0.59 against 0.84 alone.
  double startup_noise = 0;
  double startup_s = 5;
  // How long threads a shrinking team released spin on the CPUs left (libomp's blocktime): libruntime uses
  // no sample that begins within it (sa::Analyzer::quiet_after), so a job reports that much later after its
  // allocation shrinks. 0.2 s: libomp's default KMP_BLOCKTIME.
  double released_spin_s = 0.2;
  int detect_iterations = 0;  // iterations run natively before measurement starts (a DPD's detection delay;
                              // 0 = explicit iteration API, measurement from the first iteration)
  // As cosched-rm's --baseline: "auto" measures a baseline only under policies that use speedups (the RM
  // sets rm_no_baseline otherwise), and only while the job shares the machine (resolved to "shared"),
  // "always" (from the start, under any policy), "never".
  std::string baseline = "auto";
  // libcosched's sampler of its threads' states (sim/waiting_model.hpp): each job publishes its waiting-time
  // efficiency, which the RM weighs against the measured speedup (rm::choose_estimate). false: as a job run
  // with COSCHED_SAMPLE_MS=0 (cosched-sim --no-waiting-time). Nothing is sampled without `enabled` either.
  bool waiting_time = true;
};

class AnalyzerModel {
 public:
  AnalyzerModel(const AnalyzerSettings& settings, std::uint64_t seed);

  // The team libruntime would set at a parallel region, given the RM's allocation.
  [[nodiscard]] int team_for(int allocation) const { return analyzer_->team_for(allocation); }
  // The job is alone, or shares the machine again (rm_baseline_waits).
  void set_baseline_waits(bool waits) { analyzer_->set_baseline_waits(waits); }
  // The RM's rm_no_baseline flag, as libruntime passes it on (Daemon::follow_check).
  void set_baseline_enabled(bool on) { analyzer_->set_baseline_enabled(on); }

  // cosched_iter_begin, then the iteration's first parallel region with team_for(allocation). Returns
  // the team. `dirty`: the iteration is known to straddle a change (libruntime's discard_iteration).
  int begin_iteration(int allocation, bool dirty);
  // A parallel region inside the open iteration runs with a new team (the RM changed the allocation),
  // `since_start_s` after the iteration began (the job's own clock only moves at iteration ends).
  void region(int team, double since_start_s = 0);
  // The RM moved the job (new CPU set, or stopped it) at the same team size: this iteration is not clean.
  void discard() { analyzer_->discard_iteration(); }
  // cosched_iter_end after `true_seconds` of simulated time; `extra_noise` is added to the noise of this
  // one measurement (start-up noise).
  void end_iteration(double true_seconds, double extra_noise = 0);

  [[nodiscard]] std::uint64_t report_seq() const { return analyzer_->report_seq(); }
  [[nodiscard]] std::uint64_t iterations() const { return analyzer_->iterations(); }
  [[nodiscard]] sa::Phase phase() const { return analyzer_->phase(); }
  // The latest report as the RM reads it from the arena (rm/job/arena_host.cpp, read_report). False while
  // there is none or when it would fail the RM's range checks.
  bool perf(policy::Perf& out) const;

 private:
  static constexpr long kLoopId = 1;
  static constexpr std::uint64_t kRegionId = 0x51a1;

  std::unique_ptr<sa::Analyzer> analyzer_;  // not movable: held by pointer
  double noise_;
  swfgen::Random rng_;
  std::uint64_t clock_ns_ = 1;  // the job's own monotonic clock, as libruntime reads it
  std::uint64_t released_spin_ns_ = 0;
  int last_team_ = 0;
};

}  // namespace cosched::sim
