#include "selfanalyzer/config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <strings.h>

namespace cosched::sa {

Config sanitize(Config c) noexcept {
  c.baseline_cpus = std::clamp(c.baseline_cpus, 1, 1024);
  c.baseline_iterations = std::clamp(c.baseline_iterations, 1, kMaxWindow);
  // At least the baseline's own iterations and its warm-up.
  c.baseline_max_samples = std::clamp(c.baseline_max_samples, c.baseline_iterations + 1, 1 << 20);
  c.baseline_backoff_iterations = std::clamp(c.baseline_backoff_iterations, 1, 1 << 20);
  c.window = std::clamp(c.window, 1, kMaxWindow);
  c.min_report_samples = std::clamp(c.min_report_samples, 1, c.window);
  c.max_period = std::clamp(c.max_period, 1, kMaxPeriodLimit);
  c.confirm_repeats = std::clamp(c.confirm_repeats, 1, 16);
  c.min_matches = std::clamp(c.min_matches, 1, 4 * kMaxPeriodLimit);
  // A jump threshold must bracket 1 or every sample would be an outlier.
  if (!std::isfinite(c.jump_high) || c.jump_high <= 1.0) c.jump_high = Config{}.jump_high;
  if (!std::isfinite(c.jump_low) || c.jump_low <= 0.0 || c.jump_low >= 1.0) c.jump_low = Config{}.jump_low;
  c.jump_confirm = std::clamp(c.jump_confirm, 1, kMaxWindow);
  c.jump_min_samples = std::clamp(c.jump_min_samples, 1, c.window);
  c.history = std::clamp(c.history, 1, kMaxHistory);
  if (!std::isfinite(c.same_work_tolerance) || c.same_work_tolerance <= 0) c.same_work_tolerance = Config{}.same_work_tolerance;
  if (!std::isfinite(c.superlinear_margin) || c.superlinear_margin < 0) c.superlinear_margin = Config{}.superlinear_margin;
  if (!std::isfinite(c.noisy_spread) || c.noisy_spread <= 0) c.noisy_spread = Config{}.noisy_spread;
  if (!std::isfinite(c.max_wait_fraction) || c.max_wait_fraction <= 0) c.max_wait_fraction = Config{}.max_wait_fraction;
  if (!std::isfinite(c.min_report_interval_s) || c.min_report_interval_s < 0) c.min_report_interval_s = 0;
  c.min_report_interval_s = std::min(c.min_report_interval_s, 10.0);
  if (!std::isfinite(c.min_sample_s) || c.min_sample_s < 0) c.min_sample_s = 0;
  c.min_sample_s = std::min(c.min_sample_s, 1.0);
  return c;
}

double released_spin_s(const char* kmp_blocktime, const char* omp_wait_policy) noexcept {
  constexpr double kDefault = 0.2;  // libomp's KMP_DEFAULT_BLOCKTIME
  constexpr double kCap = 1.0;
  if (kmp_blocktime != nullptr && *kmp_blocktime != '\0') {
    if (strncasecmp(kmp_blocktime, "infinit", 7) == 0) return kCap;
    double value = 0;
    char unit = '\0';
    char extra = '\0';
    const int n = std::sscanf(kmp_blocktime, "%lf%c%c", &value, &unit, &extra);
    if (n < 1 || n == 3 || !std::isfinite(value) || value < 0) return kDefault;
    double seconds_per_unit = 0.001;
    switch (n == 1 ? '\0' : unit) {
      case '\0': break;
      case 's': case 'S': seconds_per_unit = 1; break;
      case 'm': case 'M': seconds_per_unit = 60; break;
      case 'h': case 'H': seconds_per_unit = 3600; break;
      case 'd': case 'D': seconds_per_unit = 86400; break;
      default: return kDefault;
    }
    return std::min(value * seconds_per_unit, kCap);
  }
  if (omp_wait_policy != nullptr) {
    if (strcasecmp(omp_wait_policy, "active") == 0) return kCap;
    if (strcasecmp(omp_wait_policy, "passive") == 0) return 0;
  }
  return kDefault;
}

}  // namespace cosched::sa
