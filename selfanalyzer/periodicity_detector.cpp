#include "selfanalyzer/periodicity_detector.hpp"

#include <algorithm>

#include "selfanalyzer/config.hpp"

namespace cosched::sa {
namespace {

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

constexpr std::uint64_t kBase = 0x100000001b3ULL;  // multiplier of the rolling window hash (FNV prime)

std::uint64_t next_pow2(std::uint64_t n) {
  std::uint64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace

PeriodicityDetector::PeriodicityDetector(int max_period, int confirm_repeats, int min_matches, bool steady_state)
    : max_period_(std::clamp(max_period, 1, kMaxPeriodLimit)),
      window_(std::min(kWindow, max_period_)),
      repeats_(std::clamp(confirm_repeats, 1, 16)),
      floor_(std::clamp(min_matches, 1, 4 * kMaxPeriodLimit)),
      history_len_(2 * max_period_),
      history_(new std::uint32_t[2 * static_cast<std::size_t>(history_len_)]),
      steady_enabled_(steady_state),
      pattern_(new std::uint32_t[static_cast<std::size_t>(max_period_)]) {
  const std::uint64_t slots = next_pow2(4 * static_cast<std::uint64_t>(max_period_));
  table_hash_.reset(new std::uint64_t[slots]);
  table_pos_.reset(new std::uint64_t[slots]);
  table_mask_ = slots - 1;
  drop_factor_ = 1;
  for (int i = 0; i < window_; ++i) drop_factor_ *= kBase;
  // The cap must let every lag reach confirmation and be at least 2·max_period (see the header).
  coverage_cap_ = std::max(needed(max_period_) + max_period_, 2 * max_period_);
  clear();
}

void PeriodicityDetector::reset() noexcept {
  // Nothing pushed since the last reset (every path into the steady state goes through push_full, which
  // counts t_): the arrays are as this leaves them. The explicit iteration API resets a detector that has
  // usually seen no region yet; in cosched-sim, which builds one per job, this second fill of 80 KB was a
  // tenth of its instructions.
  if (t_ == 0 && !steady_) return;
  clear();
}

void PeriodicityDetector::clear() noexcept {
  std::fill_n(history_.get(), 2 * history_len_, 0U);
  std::fill_n(table_hash_.get(), table_mask_ + 1, 0U);
  std::fill_n(table_pos_.get(), table_mask_ + 1, ~std::uint64_t{0});
  std::fill_n(lags_, kTracked, 0);
  std::fill_n(runs_, kTracked, 0);
  tracked_ = 0;
  window_hash_ = 0;
  t_ = 0;
  head_ = 0;
  seen_ = 0;
  locked_ = 0;
  since_anchor_ = 0;
  signature_ = 0;
  steady_ = false;
  steady_phase_ = 0;
  steady_boundary_ = 0;
  steady_events_ = 0;
}

// The run of `lag` ending at the current event `id` (not yet stored): consecutive matches counted back
// through the history, as far as it reaches, capped like a tracked run.
std::int32_t PeriodicityDetector::run_back(int lag, std::uint32_t id) const noexcept {
  const std::uint32_t* past = history_.get() + head_ + 1;  // past[k-1] = x[t-k]
  if (lag > seen_ || past[lag - 1] != id) return 0;
  std::int32_t run = 1;
  const std::int32_t cap = coverage_cap_ - lag;
  for (int i = 1; i + lag <= seen_ && run < cap; ++i, ++run) {
    if (past[i - 1] != past[i + lag - 1]) break;
  }
  return std::min(run, cap);
}

// The window ending at the current event, looked up among the windows of the last max_period positions:
// the most recent identical one proposes its distance as a lag to track.
void PeriodicityDetector::propose(std::uint32_t id) noexcept {
  const std::uint64_t slot = (window_hash_ * 0x9e3779b97f4a7c15ULL >> 32) & table_mask_;
  const std::uint64_t then = table_pos_[slot];
  const bool same = table_hash_[slot] == window_hash_ && then < t_ && t_ - then <= static_cast<std::uint64_t>(max_period_);
  table_hash_[slot] = window_hash_;
  table_pos_[slot] = t_;
  if (!same) return;
  const int lag = static_cast<int>(t_ - then);
  if (lag == locked_) return;  // the locked lag is always followed (the common case in a steady loop)
  for (int k = 0; k < tracked_; ++k) {
    if (lags_[k] == lag) return;  // already followed
  }
  const std::int32_t run = run_back(lag, id);
  if (run == 0) return;  // a hash collision, or a window that does not end here
  int free_slot = tracked_ < kTracked ? tracked_++ : -1;  // the followed lags stay packed at the front
  if (free_slot < 0) {
    // Room from the tracked lag with the shortest run, never the locked one.
    for (int k = 0; k < kTracked; ++k) {
      if (lags_[k] == locked_) continue;
      if (free_slot < 0 || runs_[k] < runs_[free_slot]) free_slot = k;
    }
    if (runs_[free_slot] > run) return;
  }
  lags_[free_slot] = lag;
  runs_[free_slot] = run - 1;  // push() counts the current event's match next
}

PeriodicityDetector::Step PeriodicityDetector::push_full(std::uint64_t region_id) noexcept {
  const std::uint32_t id = fold(region_id);
  const std::uint32_t* past = history_.get() + head_ + 1;  // past[k-1] = x[t-k]

  // The window hash now covers the current event; a full window proposes a lag first, so that a proposed
  // lag is updated with the current event like every other.
  window_hash_ = window_hash_ * kBase + id;
  if (seen_ >= window_) window_hash_ -= drop_factor_ * past[window_ - 1];
  if (t_ + 1 >= static_cast<std::uint64_t>(window_)) propose(id);

  int best_lag = 0;
  std::int32_t best_coverage = 0;
  std::int32_t best_run = 0;
  for (int k = 0; k < tracked_; ++k) {
    const int lag = lags_[k];
    const std::int32_t r = lag <= seen_ && past[lag - 1] == id ? std::min(runs_[k] + 1, coverage_cap_ - lag) : 0;
    runs_[k] = r;
    if (lag == locked_) best_run = r;
    if (r >= needed(lag) && (r + lag > best_coverage || (r + lag == best_coverage && lag < best_lag))) {
      best_coverage = r + lag;
      best_lag = lag;
    }
  }

  // Store the event (both copies), then step head_ backwards so the past stays one contiguous slice.
  history_[head_] = id;
  history_[head_ + history_len_] = id;
  head_ = head_ == 0 ? history_len_ - 1 : head_ - 1;
  if (seen_ < history_len_) ++seen_;
  ++t_;

  Step step;
  if (best_lag != locked_) {
    step.lock_changed = true;
    if (best_lag == 0) {
      locked_ = 0;
      signature_ = 0;
    } else {
      std::int32_t run = 0;
      for (int k = 0; k < tracked_; ++k) {
        if (lags_[k] == best_lag) run = runs_[k];
      }
      lock(best_lag, run);
    }
  } else if (locked_ != 0) {
    since_anchor_ = since_anchor_ + 1 == locked_ ? 0 : since_anchor_ + 1;
    // Saturated: nothing can overtake the lock while it keeps matching (see the header).
    if (steady_enabled_ && best_run + locked_ >= coverage_cap_) enter_steady();
  }
  step.period = locked_;
  step.boundary = locked_ != 0 && since_anchor_ == 0;
  return step;
}

void PeriodicityDetector::enter_steady() noexcept {
  // The next event is expected to equal x[t-L], then x[t-L+1], ...: one period, oldest first.
  const std::uint32_t* past = history_.get() + head_ + 1;  // past[k-1] = x[t-k]
  for (int r = 0; r < locked_; ++r) pattern_[r] = past[locked_ - 1 - r];
  steady_ = true;
  steady_phase_ = 0;
  steady_boundary_ = locked_ - 1 - since_anchor_;  // the event that brings since_anchor_ back to 0
  steady_events_ = 0;
}

void PeriodicityDetector::leave_steady() noexcept {
  steady_ = false;
  since_anchor_ = (since_anchor_ + steady_phase_) % locked_;  // steady_phase_ = events skipped, modulo locked_
  // The skipped events repeated the pattern: store the most recent history_len_ of them, oldest first,
  // as push_full would have.
  const std::uint64_t skipped = steady_events_;
  const std::uint64_t stored = std::min<std::uint64_t>(skipped, static_cast<std::uint64_t>(history_len_));
  const std::uint64_t first = skipped - stored;
  head_ = static_cast<int>((static_cast<std::uint64_t>(head_) + static_cast<std::uint64_t>(history_len_) -
                            first % static_cast<std::uint64_t>(history_len_)) %
                           static_cast<std::uint64_t>(history_len_));
  for (std::uint64_t i = first; i < skipped; ++i) {
    const std::uint32_t id = pattern_[i % static_cast<std::uint64_t>(locked_)];
    history_[head_] = id;
    history_[head_ + history_len_] = id;
    head_ = head_ == 0 ? history_len_ - 1 : head_ - 1;
  }
  seen_ = static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(seen_) + skipped,
                                                   static_cast<std::uint64_t>(history_len_)));
  t_ += skipped;
  // The window hash of the last window_ events (newest with power 0), as the rolling update keeps it.
  const std::uint32_t* past = history_.get() + head_ + 1;
  window_hash_ = 0;
  for (int k = std::min(window_, seen_) - 1; k >= 0; --k) window_hash_ = window_hash_ * kBase + past[k];
  // Each tracked lag's run over the events stored so far, counted back as run_back does.
  for (int k = 0; k < tracked_; ++k) {
    const int lag = lags_[k];
    std::int32_t run = 0;
    const std::int32_t cap = coverage_cap_ - lag;
    while (run < cap && run + lag < seen_ && past[run] == past[run + lag]) ++run;
    runs_[k] = run;
  }
  steady_events_ = 0;
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
