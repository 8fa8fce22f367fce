// Which efficiency estimate a policy sees for a job (docs/selfanalyzer.md, "Two estimates"): the waiting-time
// efficiency the job's sampler measures at its CPUs without moving it, or the speedup its SelfAnalyzer measured
// by comparing iteration times at two allocations. Pure; the daemon applies it to what a job wrote in its
// arena, the simulator to what its models report, so that both feed policies the same way (DESIGN rule 2).
//
// Nothing impossible is ever given to a policy:
//   - a measured speedup above the CPUs it was measured at, beyond kSpeedupTolerance, is a failed measurement;
//   - so is a measured efficiency above the waiting-time efficiency at the same CPUs beyond that tolerance and
//     twice the waiting-time estimate's standard error: the job's threads did not work enough to produce it
//     (a serial job whose samples ran under different outside load read 2.1 at 2 CPUs: its waiting-time
//     efficiency, 0.5, bounds it at 1.0).
// Of two sound estimates at the job's current CPUs, a measured efficiency below the waiting-time one by more
// than the tolerance and both uncertainties wins: it sees work that grows with the CPUs (caches, memory
// bandwidth), which the waiting times cannot. Two that agree within that give the more certain one (half the
// measured samples' range against twice the waiting-time standard error; the measured one on ties): a baseline compared across a noisy
// start-up would otherwise move a job its waiting times measure well. For the same reason a measured
// efficiency below the waiting-time one counts as work inflation only once kInflationConfirm reports in a row
// showed it (the caller counts them: measured_below_waiting), or at once when its samples spread within
// kPreciseSpread; until then the waiting-time one is used.
#pragma once

#include <cstdint>
#include <string>

#include "policies/snapshot.hpp"

namespace cosched::rm {

// Our choice: a speedup up to 10 % above the CPUs is what caches give real codes (a smaller share of the
// working set per thread); beyond it the samples compared unlike work.
inline constexpr double kSpeedupTolerance = 0.1;

// The waiting-time estimate as read (validated) from the job (proto::EfficiencyBlock).
struct WaitingEstimate {
  bool valid = false;
  std::uint64_t seq = 0;    // EfficiencyBlock::reports
  double efficiency = 0;    // in [0, 1]
  double std_error = 0;
  double cpu_wait = -1;
  double window_s = 0;
  int cpus = 0;
  int intervals = 0;
};

struct ChosenEstimate {
  policy::Perf perf;          // what the policy sees (valid = false: nothing usable)
  bool measured_failed = false;  // the measured speedup was impossible (never shown to a policy)
  std::string note;           // why this one, or why the measured one failed (empty: nothing to say)
};

// Our choice: two measured reports in a row below the waiting-time efficiency are work inflation; one may be
// a baseline taken across a noisy start-up or a reallocation.
inline constexpr int kInflationConfirm = 2;
// A measured report whose samples spread within this (relative range) needs no confirmation.
inline constexpr double kPreciseSpread = 0.05;

// A waiting-time estimate as a Perf: speedup E·P, no iteration time, spread twice its relative standard error.
policy::Perf waiting_perf(const WaitingEstimate& w);

// Whether `measured` lies below `waiting`, at the same CPUs, by more than kSpeedupTolerance and both
// uncertainties (half the measured samples' range, twice the waiting-time standard error), with a baseline at
// one CPU or at most half its CPUs (one from a closer team size pins the Amdahl fit poorly).
bool measured_below_waiting(const policy::Perf& measured, const WaitingEstimate& waiting);

// `measured`: the SelfAnalyzer's latest validated report (valid = false: none); `allocation`: the CPUs the job
// holds now; `below_in_a_row`: the measured reports in a row, the latest included, that measured_below_waiting
// found below. The result's seq is measured.seq + waiting.seq, which moves whenever either does.
ChosenEstimate choose_estimate(const policy::Perf& measured, const WaitingEstimate& waiting, int allocation,
                               int below_in_a_row = kInflationConfirm);

}  // namespace cosched::rm
