// The memory-contention model shared by the simulator (which runs it forward: who slows down how much) and
// the counter-free sensor (which runs it backward: from slowdowns to bandwidths). docs/architecture.md,
// "Sensors", has the derivation and docs/performance.md its error on this machine.
//
// A job i runs n_i threads; a fraction m_i ∈ [0, 1] of its time alone is spent waiting for memory, so alone
// it moves d_i = m_i · n_i · b bytes per second, where b is what one thread that does nothing but stream
// (BBMA) moves alone. With the running jobs' demands summing to D and the machine sustaining B, the excess
// is e = max(0, D/B − 1) and
//
//     slowdown  s_i = 1 + k · m_i · e          consumption  c_i = d_i / s_i
//
// i.e. each job's slowdown grows in proportion to the excess, scaled by how memory-bound it is; k ≥ 1 says
// how much arbitration costs on top of the plain shortage (k = 1: streamers share B exactly). The three
// constants are measured, not guessed: B by a STREAM-like copy on every CPU, b by BBMA alone on one, and k
// by two BBMAs side by side (k = (s − 1) / (2b/B − 1)); scripts/calibrate-bandwidth prints them.
#pragma once

#include <vector>

namespace cosched::sensors {

struct Calibration {
  double machine_bytes_per_s = 0;  // B: all CPUs streaming; 0 unknown
  double thread_bytes_per_s = 0;   // b: one streaming thread alone; 0 unknown
  double contention = 1;           // k
  // The counter-free sensor learns memory fractions only from intervals where some job is slowed by
  // more than this (below it, noise and a bus with room to spare look alike).
  double min_slowdown = 0.10;

  [[nodiscard]] bool calibrated() const {
    return machine_bytes_per_s > 0 && thread_bytes_per_s > 0 && contention > 0;
  }
};

struct Demand {
  int threads = 1;
  double memory_fraction = 0;  // m ∈ [0, 1]
};

// Forward: each job's slowdown when the jobs of `running` run side by side (same order); all 1 when the
// calibration is incomplete. `excess`, if given, receives e.
std::vector<double> model_slowdowns(const std::vector<Demand>& running, const Calibration& c, double* excess = nullptr);

// A job's demand alone, d = m · n · b (bytes/s).
double model_demand(const Demand& d, const Calibration& c);

// Backward: the memory fractions that explain the measured `slowdowns` (≥ 1) of jobs with `threads`,
// given `prior_demand` bytes/s of co-running jobs whose slowdown was not measured. Solves the model for e
// (a quadratic, one positive root), then m_i = (s_i − 1) / (k·e), clipped to [0, 1], and 0 for a job whose
// own slowdown is within c.min_slowdown (noise, not traffic). Returns false (and
// leaves `fractions` empty) when no job is slowed by more than c.min_slowdown or c is incomplete.
bool infer_memory_fractions(const std::vector<double>& slowdowns, const std::vector<int>& threads,
                            double prior_demand, const Calibration& c, std::vector<double>& fractions,
                            double* excess = nullptr);

}  // namespace cosched::sensors
