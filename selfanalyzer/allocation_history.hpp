// Median iteration time per team size the job was measured at, most recent first: the second point of
// the Amdahl fit when the current team size equals the baseline's (docs/selfanalyzer.md, "Which two
// points"). Fixed array, no allocation.
#pragma once

#include <algorithm>

#include "selfanalyzer/config.hpp"

namespace cosched::sa {

struct AllocationPoint {
  int cpus = 0;
  double median_s = 0;
  int samples = 0;
  double load = -1;  // outside-load level (CPU wait share) of its samples; -1 unknown
};

class AllocationHistory {
 public:
  explicit AllocationHistory(int capacity) noexcept : capacity_(std::clamp(capacity, 1, kMaxHistory)) {}

  void clear() noexcept { size_ = 0; }

  // Records the latest median at `cpus`, moving that team size to the front (replacing its older
  // entry); the least recent team size falls off when full.
  void record(int cpus, double median_s, int samples, double load = -1) noexcept {
    int at = 0;
    while (at < size_ && points_[at].cpus != cpus) ++at;
    if (at == size_) at = size_ < capacity_ ? size_++ : size_ - 1;
    std::move_backward(points_, points_ + at, points_ + at + 1);
    points_[0] = AllocationPoint{cpus, median_s, samples, load};
  }

  // The most recent point measured at a team size other than `cpus`, or nullptr.
  [[nodiscard]] const AllocationPoint* latest_other_than(int cpus) const noexcept {
    for (int i = 0; i < size_; ++i)
      if (points_[i].cpus != cpus) return &points_[i];
    return nullptr;
  }

  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] const AllocationPoint& at(int i) const noexcept { return points_[i]; }

 private:
  int capacity_;
  int size_ = 0;
  AllocationPoint points_[kMaxHistory] = {};
};

}  // namespace cosched::sa
