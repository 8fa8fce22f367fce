#include "selfanalyzer/periodicity_detector.hpp"

#include <algorithm>

#include "selfanalyzer/config.hpp"

namespace cosched::sa {
namespace {

// Region id → 32-bit hash (multiplicative, Knuth's golden-ratio constant): nearby code addresses spread
// over the whole range, so collisions are as rare as for random values.
std::uint32_t fold(std::uint64_t id) noexcept {
  return static_cast<std::uint32_t>((id * 0x9e3779b97f4a7c15ULL) >> 32);
}

// A bijective 64-bit mix (splitmix64 finaliser constants) so that the sum over a period's ids does not
// collide for related loops.
std::uint64_t mix(std::uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// x86-64: an AVX2 clone of the lag scan, chosen once at load time (ifunc), runs 8 lags per instruction
// instead of SSE2's 4 (1.6× faster at max_period 64, docs/performance.md); other targets get one build.
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define COSCHED_SA_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef COSCHED_SA_CLONES
#define COSCHED_SA_CLONES
#endif

// One event against every lag. Returns the best key (coverage << 16 | (0xffff − lag)), 0 if no lag is
// confirmed: the max over keys picks the largest coverage and, on equal coverage, the smaller lag.
// Written branch-free over int32 lanes with restrict pointers so that compilers vectorise it (the match
// pattern of a periodic stream defeats branch prediction). Coverage < 2^15 and lag < 2^16 (config.hpp
// bounds), so keys stay positive. Lags not yet valid have cap 0, which keeps their run at 0.
COSCHED_SA_CLONES
std::int32_t scan_lags(const std::uint32_t* __restrict past, std::uint32_t id, std::int32_t* __restrict run,
                       const std::int32_t* __restrict cap, const std::int32_t* __restrict needed,
                       int lags) noexcept {
  std::int32_t best_key = 0;
  for (int i = 0; i < lags; ++i) {
    const std::int32_t lag = i + 1;
    const std::int32_t match = -static_cast<std::int32_t>(past[i] == id);
    const std::int32_t r = std::min(run[i] + 1, cap[i]) & match;
    run[i] = r;
    const std::int32_t confirmed = -static_cast<std::int32_t>(r >= needed[i]);
    const std::int32_t key = (((r + lag) << 16) | (0xffff - lag)) & confirmed;
    best_key = std::max(best_key, key);
  }
  return best_key;
}

}  // namespace

// Keys pack coverage into the upper 15 bits of a positive int32: the largest coverage, needed + lag with
// the sanitize() bounds, must stay below 2^15.
static_assert(16 * kMaxPeriodLimit + kMaxPeriodLimit < (1 << 15));
static_assert(4 * kMaxPeriodLimit + kMaxPeriodLimit < (1 << 15));

PeriodicityDetector::PeriodicityDetector(int max_period, int confirm_repeats, int min_matches)
    : max_period_(std::clamp(max_period, 1, kMaxPeriodLimit)),
      history_(new std::uint32_t[2 * static_cast<std::size_t>(max_period_)]),
      run_(new std::int32_t[static_cast<std::size_t>(max_period_)]),
      run_cap_(new std::int32_t[static_cast<std::size_t>(max_period_)]),
      needed_(new std::int32_t[static_cast<std::size_t>(max_period_)]) {
  const int repeats = std::clamp(confirm_repeats, 1, 16);
  const int floor = std::clamp(min_matches, 1, 4 * kMaxPeriodLimit);
  int most_needed = 0;
  for (int m = 1; m <= max_period_; ++m) {
    needed_[m - 1] = std::max(repeats * m, floor);
    most_needed = std::max(most_needed, needed_[m - 1] + m);
  }
  // The cap must let every lag reach confirmation and be at least 2·max_period (see the header).
  coverage_cap_ = std::max(most_needed, 2 * max_period_);
  reset();
}

void PeriodicityDetector::reset() noexcept {
  std::fill_n(history_.get(), 2 * max_period_, 0U);
  std::fill_n(run_.get(), max_period_, 0);
  std::fill_n(run_cap_.get(), max_period_, 0);  // every lag invalid until that many events were seen
  head_ = 0;
  seen_ = 0;
  locked_ = 0;
  since_anchor_ = 0;
  signature_ = 0;
}

PeriodicityDetector::Step PeriodicityDetector::push(std::uint64_t region_id) noexcept {
  const std::uint32_t id = fold(region_id);
  const std::int32_t best_key = scan_lags(history_.get() + head_ + 1, id, run_.get(), run_cap_.get(),
                                          needed_.get(), max_period_);
  const int best_lag = best_key == 0 ? 0 : 0xffff - (best_key & 0xffff);

  // Store the event (both copies), then step head_ backwards so the past stays one contiguous slice.
  history_[head_] = id;
  history_[head_ + max_period_] = id;
  head_ = head_ == 0 ? max_period_ - 1 : head_ - 1;
  if (seen_ < max_period_) {
    ++seen_;  // lag seen_ now has a real predecessor to compare with
    run_cap_[seen_ - 1] = coverage_cap_ - seen_;
  }

  Step step;
  if (best_lag != locked_) {
    step.lock_changed = true;
    if (best_lag == 0) {
      locked_ = 0;
      signature_ = 0;
    } else {
      lock(best_lag, run_[best_lag - 1]);
    }
  } else if (locked_ != 0) {
    since_anchor_ = since_anchor_ + 1 == locked_ ? 0 : since_anchor_ + 1;
  }
  step.period = locked_;
  step.boundary = locked_ != 0 && since_anchor_ == 0;
  return step;
}

void PeriodicityDetector::lock(int period, std::int32_t run) noexcept {
  locked_ = period;
  // The periodic suffix started run + period - 1 events ago; its first event is the anchor. Any phase
  // would give the same iteration times in steady state; the run start is the loop's first region when
  // the loop follows a prologue that does not happen to match it.
  since_anchor_ = (run + period - 1) % period;
  // history_ already holds the current event: x[t-k] == history_[head_ + 1 + k] after the head step.
  std::uint64_t sum = 0;
  const std::uint32_t* recent = history_.get() + head_ + 1;
  for (int k = 0; k < period; ++k) sum += mix(recent[k]);
  signature_ = sum;
}

}  // namespace cosched::sa
