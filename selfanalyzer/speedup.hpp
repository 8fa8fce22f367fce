// Speedup arithmetic of the SelfAnalyzer: robust iteration times and the Amdahl's Factor normalisation.
// Pure functions: no state, no allocation, no exceptions.
//
// PDPA paper §3.1 (Corbalan, Martorell, Labarta): speedup = time with baseline / time with P, normalised
// with the "Amdahl's Factor" so that it is relative to one CPU. We fit Amdahl's law
//     T(p) = T1 · ((1 − f) + f / p)                                   (Amdahl 1967)
// through two measured points (p_lo, T_lo), (p_hi, T_hi), p_lo < p_hi. With R = T_lo / T_hi:
//     f  = (R − 1) / (R·(1 − 1/p_hi) − (1 − 1/p_lo))
//     T1 = T_lo / ((1 − f) + f / p_lo)
// and the speedup at P versus one CPU is S(P) = T1 / T_P, efficiency E(P) = S(P) / P.
// With a 1-CPU baseline T1 is the measured baseline itself and f only describes the curve.
#pragma once

#include <cstdint>

namespace cosched::sa {

// How the parallel fraction f behind a speedup was obtained.
enum class FitStatus : std::uint8_t {
  measured = 0,  // fitted from two points and inside [0, 1]
  clamped,       // fitted, but noise (or super-linear / slower-with-more-CPUs behaviour) put it outside
                 // [0, 1]; clamped to the nearest bound
  assumed,       // only one team size measured (P == baseline): f was taken from an earlier fit of two
                 // measured points or, with a 1-CPU reference, is moot (T1 is the reference itself)
  same_cpus,     // fit_amdahl only: both points have the same team size, f cannot be known
  invalid,       // a time was zero, negative or not finite, or a team size < 1: nothing computed
  no_lower_point,  // estimate_speedup only: one team size, above 1 CPU, and no earlier f: the one-CPU time
                   // cannot be known without assuming a curve (linear speedup up to the reference), so
                   // nothing is computed (docs/selfanalyzer.md, "A speedup is a measurement")
};

[[nodiscard]] const char* to_string(FitStatus s) noexcept;

// Median of `n` values (1 <= n <= kMaxWindow); even n gives the mean of the two middle values.
// Copies to a local array (the input is not reordered). Returns 0 for n <= 0.
[[nodiscard]] double median_of(const double* values, int n) noexcept;

// Relative spread (max − min) / median of `n` values: 0 when every iteration took the same time, 0.1
// when the slowest and fastest differ by 10% of the median. We use the range rather than the MAD
// because with windows of 3–5 iterations the MAD hides a single slow iteration; a confidence figure
// should not. Returns 0 for n <= 1 or a non-positive median.
[[nodiscard]] double relative_spread(const double* values, int n, double median) noexcept;

// True when `t` can be an iteration time: finite and > 0.
[[nodiscard]] bool valid_time(double t) noexcept;

struct AmdahlFit {
  double f = 0;    // parallel fraction in [0, 1] (NaN unless status is measured or clamped)
  double t1 = 0;   // one-CPU time of the fitted curve, anchored at the point with fewer CPUs
  FitStatus status = FitStatus::invalid;
};

// Fit T(p) = T1((1−f) + f/p) through (cpus_a, time_a) and (cpus_b, time_b), in either order.
[[nodiscard]] AmdahlFit fit_amdahl(int cpus_a, double time_a, int cpus_b, double time_b) noexcept;

// T(p) of the Amdahl curve; callers pass f in [0, 1] and p >= 1.
[[nodiscard]] double amdahl_time(double t1, double f, int cpus) noexcept;

struct SpeedupEstimate {
  double speedup = 0;     // vs one CPU
  double efficiency = 0;  // speedup / cpus
  double f = 0;           // parallel fraction used for the normalisation
  double t1 = 0;          // estimated one-CPU iteration time
  FitStatus status = FitStatus::invalid;
};

// Speedup of the iteration time `time_s` measured at `cpus`, normalised to one CPU using the reference
// point (ref_cpus, ref_s). When ref_cpus == cpus f cannot be fitted: `fallback_f` (an f fitted earlier
// from two measured points, NaN when none) is used and the status says `assumed`; without one, a 1-CPU
// reference needs no f (also `assumed`), and any other gives `no_lower_point` and nothing computed.
[[nodiscard]] SpeedupEstimate estimate_speedup(int ref_cpus, double ref_s, int cpus, double time_s,
                                               double fallback_f) noexcept;

}  // namespace cosched::sa
