#include "selfanalyzer/speedup.hpp"

#include <algorithm>
#include <cmath>

#include "selfanalyzer/config.hpp"

namespace cosched::sa {

const char* to_string(FitStatus s) noexcept {
  switch (s) {
    case FitStatus::measured: return "measured";
    case FitStatus::clamped: return "clamped";
    case FitStatus::assumed: return "assumed";
    case FitStatus::same_cpus: return "same_cpus";
    case FitStatus::invalid: return "invalid";
    case FitStatus::no_lower_point: return "no_lower_point";
  }
  return "invalid";
}

double median_of(const double* values, int n) noexcept {
  if (n <= 0) return 0;
  n = std::min(n, kMaxWindow);
  double sorted[kMaxWindow];
  std::copy_n(values, n, sorted);
  // Insertion sort: n <= 32 and usually 3–5; called once per iteration, not per region.
  for (int i = 1; i < n; ++i) {
    const double v = sorted[i];
    int j = i - 1;
    while (j >= 0 && sorted[j] > v) {
      sorted[j + 1] = sorted[j];
      --j;
    }
    sorted[j + 1] = v;
  }
  return n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

double relative_spread(const double* values, int n, double median) noexcept {
  if (n <= 1 || !(median > 0)) return 0;
  const auto [lo, hi] = std::minmax_element(values, values + n);
  return (*hi - *lo) / median;
}

bool valid_time(double t) noexcept { return std::isfinite(t) && t > 0; }

double amdahl_time(double t1, double f, int cpus) noexcept {
  return t1 * ((1.0 - f) + f / static_cast<double>(cpus));
}

AmdahlFit fit_amdahl(int cpus_a, double time_a, int cpus_b, double time_b) noexcept {
  AmdahlFit fit;
  fit.f = std::nan("");
  fit.t1 = std::nan("");
  if (cpus_a < 1 || cpus_b < 1 || !valid_time(time_a) || !valid_time(time_b)) return fit;
  if (cpus_a == cpus_b) {
    fit.status = FitStatus::same_cpus;
    return fit;
  }
  // Order the points: the low-CPU point anchors T1 (less extrapolation to p = 1).
  const bool a_is_low = cpus_a < cpus_b;
  const double p_lo = a_is_low ? cpus_a : cpus_b;
  const double p_hi = a_is_low ? cpus_b : cpus_a;
  const double t_lo = a_is_low ? time_a : time_b;
  const double t_hi = a_is_low ? time_b : time_a;

  const double ratio = t_lo / t_hi;  // R: speedup of p_hi over p_lo
  double f;
  fit.status = FitStatus::measured;
  if (ratio < 1.0) {
    // More CPUs made it slower: no parallel fraction explains that (the closed form would even give a
    // positive f for very small R, where both numerator and denominator turn negative).
    f = 0.0;
    fit.status = FitStatus::clamped;
  } else {
    // Solve R·((1−f) + f/p_hi) = (1−f) + f/p_lo for f; the denominator is > 0 for R >= 1, p_hi > p_lo.
    f = (ratio - 1.0) / (ratio * (1.0 - 1.0 / p_hi) - (1.0 - 1.0 / p_lo));
    // Above 1: super-linear between the two points (cache effects) or noise. Rounding alone can put an
    // exactly linear pair a few ulps above 1; that is still a measurement, not a clamp.
    constexpr double kRoundingSlack = 1e-9;
    if (f > 1.0 + kRoundingSlack) fit.status = FitStatus::clamped;
    f = std::min(f, 1.0);
  }
  fit.f = f;
  fit.t1 = t_lo / ((1.0 - f) + f / p_lo);
  return fit;
}

SpeedupEstimate estimate_speedup(int ref_cpus, double ref_s, int cpus, double time_s,
                                 double fallback_f) noexcept {
  SpeedupEstimate est;
  if (ref_cpus < 1 || cpus < 1 || !valid_time(ref_s) || !valid_time(time_s)) return est;
  const AmdahlFit fit = fit_amdahl(ref_cpus, ref_s, cpus, time_s);
  if (fit.status == FitStatus::same_cpus) {
    // One point only: normalise the reference with an f from elsewhere (PDPA paper §3.1 leaves this
    // case open; see docs/selfanalyzer.md). With a 1-CPU reference f changes nothing. Above 1 CPU without
    // an earlier fit, any f is an assumption about a curve never measured (f = 1 would turn a job that
    // does not scale at all into a speedup of ref_cpus): no estimate.
    if (!std::isfinite(fallback_f) && ref_cpus > 1) {
      est.status = FitStatus::no_lower_point;
      return est;
    }
    est.f = std::isfinite(fallback_f) ? std::clamp(fallback_f, 0.0, 1.0) : 1.0;
    est.t1 = ref_s / ((1.0 - est.f) + est.f / static_cast<double>(ref_cpus));
    est.status = FitStatus::assumed;
  } else if (fit.status == FitStatus::measured || fit.status == FitStatus::clamped) {
    est.f = fit.f;
    est.t1 = fit.t1;
    est.status = fit.status;
  } else {
    return est;
  }
  est.speedup = est.t1 / time_s;  // measured T_P, not the model's: the fit only supplies T1
  est.efficiency = est.speedup / static_cast<double>(cpus);
  return est;
}

}  // namespace cosched::sa
