// The last few clean iteration times at one team size: a fixed ring, no allocation.
#pragma once

#include <algorithm>

#include "selfanalyzer/config.hpp"
#include "selfanalyzer/speedup.hpp"

namespace cosched::sa {

class SampleWindow {
 public:
  explicit SampleWindow(int capacity) noexcept : capacity_(std::clamp(capacity, 1, kMaxWindow)) {}

  void clear() noexcept {
    size_ = 0;
    next_ = 0;
    median_ = 0;
  }
  // Keeps the newest `capacity` samples; the oldest is overwritten. O(size) for the median, computed
  // here once per iteration so that readers are O(1).
  void push(double seconds) noexcept {
    samples_[next_] = seconds;
    next_ = next_ + 1 == capacity_ ? 0 : next_ + 1;
    size_ = std::min(size_ + 1, capacity_);
    median_ = median_of(samples_, size_);
  }
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] double median() const noexcept { return median_; }  // 0 when empty
  [[nodiscard]] double spread() const noexcept { return relative_spread(samples_, size_, median_); }

 private:
  int capacity_;
  int size_ = 0;
  int next_ = 0;  // slot of the next push
  double median_ = 0;
  double samples_[kMaxWindow] = {};
};

}  // namespace cosched::sa
