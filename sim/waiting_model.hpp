// The waiting-time efficiency of a simulated job, as libcosched's sampler measures it (docs/selfanalyzer.md,
// "Waiting-time efficiency"; selfanalyzer/efficiency_meter.hpp; libruntime/efficiency_sampler.cpp), and as the
// RM reads it from the arena (rm::WaitingEstimate). Not the real meter: a simulated job has no thread states to
// sample, so this models what the meter would publish.
//
//   value   E_w = min(1, S(c)/c), c = the CPUs the job's threads run on (min(team, allocation)), S the job's
//           speedup curve without contention: its threads wait for each other as the curve says, and a slower
//           memory bus makes them work longer, not wait more. So for a memory-bound job slowed by contention
//           E_w stays at its contention-free value while its real efficiency (and its measured speedup) drops:
//           the upper-bound error of the estimate (docs/selfanalyzer.md, "Two estimates").
//   when    after a warm-up interval and kIntervals intervals at c, each max(kMinIntervalS, one iteration at
//           the job's current pace, contention included) for a job whose loop libcosched knows, kAperiodicS for
//           one it knows none of: (1 + kIntervals) × max(0.04 s, L) = 4 × max(0.04 s, L) of running time at c.
//           Time stopped by the RM, or stalled by a reallocation (--realloc-cost: no iteration ends), does not
//           count; a change of c starts a fresh warm-up, except a return to the CPU count held just before
//           whose estimate (if it had one) is published again, unchanged, after one interval there (the meter
//           keeps the previous window, for the end of a baseline, and publishes it at once: our delay makes
//           every estimate follow some progress of the job).
//   noise   with --noise X, each interval's efficiency has relative standard deviation X, so the published mean
//           of kIntervals intervals is E_w × max(0.05, 1 + X/sqrt(kIntervals) × N(0,1)), clamped to [0, 1],
//           drawn once per warm-up from the job's own stream; std_error = X/sqrt(kIntervals) × that value.
//
// Every value here is our choice except what efficiency_meter.hpp fixes (40 ms and an iteration an interval,
// 3 intervals after a warm-up, 0.2 s without a period). Our simplifications: the meter's warm-up interval
// is 40 ms only, not an iteration, so a real first estimate can come up to one iteration earlier;
// an interval spoiled by a stop or a move of the CPU set is not modelled (a stop pauses the warm-up instead);
// intervals kept at a CPU count left before its estimate came are forgotten; no republication while nothing
// changes (the meter republishes at every interval: the same values, which change no decision).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "policies/rotation_key.hpp"
#include "rm/job/estimate.hpp"
#include "sim/gen/random.hpp"

namespace cosched::sim {

class WaitingModel {
 public:
  static constexpr double kMinIntervalS = 0.04;  // EfficiencyConfig::min_interval_s
  static constexpr double kAperiodicS = 0.2;     // EfficiencyConfig::aperiodic_interval_s
  static constexpr int kIntervals = 3;           // EfficiencyConfig::min_intervals, after one warm-up interval

  // `enabled` false: no sampler (COSCHED_SAMPLE_MS=0, or no libcosched measurement at all); nothing is ever
  // published. `noise`: the relative standard deviation of one interval's efficiency.
  WaitingModel(bool enabled, double noise, std::uint64_t seed);

  // From time t the job's threads run on `cpus` CPUs (0: stopped, or not started), one sampler interval lasts
  // `interval_s` there (+inf: the job makes no progress), and the share of the CPU time they work is
  // `efficiency`; `progress_from` >= t: the job makes no progress before then (a reallocation's stall), so no
  // interval can end. Returns true when due() moved (the caller reschedules its event).
  bool update(double t, int cpus, double interval_s, double efficiency, double progress_from);

  // When the next estimate is published (+inf: none pending); valid until generation() moves.
  [[nodiscard]] double due() const { return due_; }
  [[nodiscard]] std::uint64_t generation() const { return generation_; }
  // At due(): publishes the estimate at the current CPUs (its seq moves).
  void publish(double t);

  [[nodiscard]] const rm::WaitingEstimate& estimate() const { return estimate_; }
  [[nodiscard]] bool enabled() const { return enabled_; }
  // Appends what decides the next estimate at t to a rotation key (docs/simulator.md, "Steady rotations"):
  // a warm-up that advances from one turn to the next makes the key differ. Times relative to t, in whole
  // nanoseconds, so that turns that differ only by float rounding of the clock still match.
  void append_key(policy::KeyWriter& key, double t) const;
  // `seconds` later, as it was: a warm-up in progress and its due time move with the clock.
  void skip(double seconds);

 private:
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  // What the meter keeps per CPU count: its estimate there, once it has one.
  struct Window {
    int cpus = 0;
    bool ready = false;
    double truth = 0;       // E_w at these CPUs (without noise)
    double efficiency = 0;  // as published (with noise)
    double std_error = 0;
    double window_s = 0;
  };
  void set_due(double due);

  bool enabled_;
  double noise_;
  std::optional<swfgen::Random> rng_;  // only with noise: a Mersenne Twister's state is 2.5 KB
  Window now_;
  Window before_;
  int cpus_ = 0;            // as last updated (0: stopped)
  double interval_s_ = kInf;
  double left_ = 1;         // share of the warm-up at now_.cpus still to run
  double since_ = 0;        // from when the warm-up runs on at the pace of interval_s_ (may lie ahead: a stall)
  bool republish_ = false;  // back at the CPU count held before: its kept estimate is published again
  double due_ = kInf;
  std::uint64_t generation_ = 0;
  rm::WaitingEstimate estimate_;
};

}  // namespace cosched::sim
