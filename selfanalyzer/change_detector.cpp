#include "selfanalyzer/change_detector.hpp"

namespace cosched::sa {

ChangeDetector::ChangeDetector(double jump_high, double jump_low, int jump_confirm,
                               int min_samples) noexcept
    : jump_high_(jump_high), jump_low_(jump_low), jump_confirm_(jump_confirm), min_samples_(min_samples) {}

bool ChangeDetector::structure_changed(int period, std::uint64_t signature) noexcept {
  const bool changed = !has_structure_ || period != period_ || signature != signature_;
  has_structure_ = true;
  period_ = period;
  signature_ = signature;
  return changed;
}

ChangeDetector::TimeVerdict ChangeDetector::classify(double sample_s, double median_s,
                                                     int samples) noexcept {
  if (samples < min_samples_ || !(median_s > 0)) return TimeVerdict::accept;
  const double ratio = sample_s / median_s;
  const int side = ratio > jump_high_ ? 1 : ratio < jump_low_ ? -1 : 0;
  if (side == 0) {
    reset_times();
    return TimeVerdict::accept;
  }
  outlier_run_ = side == outlier_side_ ? outlier_run_ + 1 : 1;
  outlier_side_ = side;
  if (outlier_run_ >= jump_confirm_) {
    reset_times();
    return TimeVerdict::changed;
  }
  return TimeVerdict::outlier;
}

void ChangeDetector::reset_times() noexcept {
  outlier_side_ = 0;
  outlier_run_ = 0;
}

}  // namespace cosched::sa
