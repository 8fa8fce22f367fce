// Dynamic Periodicity Detector (DPD): finds the period of the stream of outermost parallel-region ids
// and marks the event that starts each period ("iteration boundary").
//
// After F. Freitag, J. Corbalan, J. Labarta, "A Dynamic Periodicity Detector: Application to Speedup
// Computation", IPDPS 2001, as used by the SelfAnalyzer (Corbalan, Martorell, Labarta, PDPA paper §3.1:
// "receives as input the sequence of parallel loops executed ... and generates a Boolean indicating if it
// corresponds with the initial period of a loop or not"). The formulation below is ours; see
// docs/selfanalyzer.md for the argument behind each rule.
//
// For a candidate lag m the detector keeps run[m], the number of consecutive most recent events x[t] with
// x[t] == x[t-m]. The suffix of the stream that is m-periodic is then run[m] + m events long (its
// "coverage"). A lag is *confirmed* once run[m] >= max(confirm_repeats·m, min_matches). The locked period is
// the confirmed lag with the largest coverage, ties going to the smaller lag:
//   - multiples of the true period have the same coverage, so the fundamental period wins;
//   - an inner loop (B C in A (B C)^4 D) keeps breaking at D and A while the outer lag 10 grows, so the
//     outermost iterative structure wins as soon as it is confirmed;
//   - a non-periodic prologue only delays confirmation; a new iterative phase takes over once the old
//     lag breaks and the new one is confirmed.
// Coverage saturates at a cap >= 2·max_period: two periods both holding over such a suffix imply their
// gcd is a period too (Fine and Wilf), so at saturation the smallest true period wins the tie.
//
// Which lags are candidates. Real applications run hundreds of parallel regions per iteration (a
// hydrodynamics proxy: about 490), so the search must reach periods of 1024 and more at a per-event cost that
// does not grow with max_period. Only lags that some recent event proposed are tracked (at most kTracked):
// a rolling hash of the last w events is looked up in a table of the window hashes of the last max_period
// positions, and the most recent identical window proposes its distance. In an m-periodic stream every
// window recurs at lag m, and a window that is unique within one period (every iteration has one: where
// its inner loops begin or end) recurs first at exactly m, so the true period is proposed within one
// period of the stream becoming periodic. A proposed lag starts with its true run, counted back through the
// history (once, O(max_period)); tracked lags are updated in O(1) each per event; the lag with the smallest
// run makes room for a new one. Lags proposed by repeated inner windows are tracked too and lose to the
// outer period on coverage, as above.
//
// Steady state. Once the locked lag's coverage is saturated, no other lag can overtake it while it keeps
// matching (a lag only wins on larger coverage, and coverage never exceeds the cap), so each event is only
// checked against the locked period: one compare, no history store, no proposals, no per-lag update. The
// first event that does not repeat the period rebuilds what was skipped (the history is the period
// repeated; the window hash; each tracked lag's run, counted back) in O(kTracked · max_period), once per
// steady phase, and is then handled as usual. Two things differ from never entering the steady state:
// windows seen during it propose no lag after it (a lag they would propose is proposed one period later),
// and a loop that turns into a proper divisor of itself (A B A C → A B A B keeps repeating at the old
// lag) keeps its old period, whose iterations are then whole multiples of the new loop's.
//
// Region ids are folded to 32-bit hashes first: two distinct code addresses of one process collide with
// probability ~2^-32 per pair. A proposal is checked against the w events themselves, so a hash collision
// never creates a lag.
// Cost: O(1) per event in the steady state, else O(kTracked + w), whatever max_period
// (docs/performance.md); no allocation after construction.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

namespace cosched::sa {

class PeriodicityDetector {
 public:
  // What one event changed. `boundary` is true on the event that starts a period of the locked lag
  // (the anchor: the first event of the first periodic copy, then every `period` events).
  struct Step {
    int period = 0;             // locked period after this event; 0 = none
    bool boundary = false;      // this event starts an iteration of `period`
    bool lock_changed = false;  // the locked period was acquired, lost or replaced at this event
  };

  // Arguments are taken as given; Config sanitisation (config.hpp) bounds them. Allocates its arrays.
  // `steady_state` false: never take the steady-state shortcut (tests compare the two).
  PeriodicityDetector(int max_period, int confirm_repeats, int min_matches, bool steady_state = true);

  // Caller: the Analyzer, once per outermost region. Cost: O(kTracked + w), and O(max_period) when a new lag
  // is proposed; no allocation.
  Step push(std::uint64_t region_id) noexcept {
    if (steady_) {
      if (fold(region_id) == pattern_[steady_phase_]) return Step{locked_, steady_advance(), false};
      leave_steady();
    }
    return push_full(region_id);
  }

  // The steady state's question, asked before push(): whether `region_id` is the event the locked period
  // expects next (then push() returns Step{period(), boundary, false} and only advances counters). Returns
  // 1 when it is and starts an iteration, 0 when it is and does not, -1 otherwise (not in the steady state,
  // or another event: push() then does the full work). Changes nothing. O(1).
  [[nodiscard]] int steady_peek(std::uint64_t region_id) const noexcept {
    if (!steady_ || fold(region_id) != pattern_[steady_phase_]) return -1;
    return steady_phase_ == steady_boundary_ ? 1 : 0;
  }
  // What push() does for an event steady_peek() accepted; returns whether it starts an iteration. O(1).
  bool steady_advance() noexcept {
    const bool boundary = steady_phase_ == steady_boundary_;
    steady_phase_ = steady_phase_ + 1 == locked_ ? 0 : steady_phase_ + 1;
    ++steady_events_;
    return boundary;
  }

  // Forget everything (the explicit iteration API took over, or a test restarts). O(max_period).
  void reset() noexcept;

  [[nodiscard]] int period() const noexcept { return locked_; }
  // Order-independent digest of the region ids of one locked period (0 when unlocked). It identifies
  // the loop regardless of where the anchor fell, so a lock that is lost and re-acquired on the same
  // loop can be recognised (ChangeDetector).
  [[nodiscard]] std::uint64_t signature() const noexcept { return signature_; }
  [[nodiscard]] int max_period() const noexcept { return max_period_; }

 private:
  void clear() noexcept;  // what reset() does, unconditionally (the constructor: the arrays are new)
  static constexpr int kTracked = 16;  // candidate lags followed at once (our choice: inner loops + the outer)
  static constexpr int kWindow = 8;    // events per window hash (our choice: short enough to recur early)

  // Region id → 32-bit hash (multiplicative, Knuth's golden-ratio constant): nearby code addresses spread
  // over the whole range, so collisions are as rare as for random values.
  static std::uint32_t fold(std::uint64_t id) noexcept {
    return static_cast<std::uint32_t>((id * 0x9e3779b97f4a7c15ULL) >> 32);
  }
  Step push_full(std::uint64_t region_id) noexcept;
  void enter_steady() noexcept;
  void leave_steady() noexcept;
  void lock(int period, std::int32_t run) noexcept;
  void propose(std::uint32_t id) noexcept;
  [[nodiscard]] std::int32_t run_back(int lag, std::uint32_t id) const noexcept;
  [[nodiscard]] std::int32_t needed(int lag) const noexcept { return std::max(repeats_ * lag, floor_); }

  int max_period_;
  int window_;                   // min(kWindow, max_period)
  int repeats_;
  int floor_;
  // history_ holds the last history_len_ = 2·max_period hashed ids, each twice (at h and h + history_len_)
  // so that they are one contiguous slice: x[t-m] == history_[head_ + m] for m in 1..history_len_. Twice the
  // longest lag, so that a lag proposed late still has its run counted back far enough to place its anchor.
  int history_len_;
  std::unique_ptr<std::uint32_t[]> history_;
  // Window hashes of recent positions: direct-mapped, a slot holds (hash, position); stale or overwritten
  // entries only cost a missed proposal, which a later window makes again.
  std::unique_ptr<std::uint64_t[]> table_hash_;
  std::unique_ptr<std::uint64_t[]> table_pos_;
  std::uint64_t table_mask_ = 0;
  std::uint64_t window_hash_ = 0;  // polynomial hash of the last window_ ids
  std::uint64_t drop_factor_ = 0;  // kBase^window_: removes the id leaving the window
  std::uint64_t t_ = 0;            // events pushed
  int lags_[kTracked] = {};        // followed lags, packed: lags_[0..tracked_)
  int tracked_ = 0;
  std::int32_t runs_[kTracked] = {};
  int head_ = 0;                 // slot of the next event; decreases modulo history_len_
  int seen_ = 0;                 // events pushed, saturating at history_len_ (a lag > seen_ is not valid yet)
  int coverage_cap_ = 0;         // largest coverage counted (see the header)
  int locked_ = 0;               // current period, 0 = none
  int since_anchor_ = 0;         // events since the last boundary, modulo locked_ (not kept in the steady state)
  // Steady state (see the header): pattern_[0..locked_) is one period, pattern_[steady_phase_] the event
  // expected next; steady_events_ events matched it since entering, none of them stored in history_. The
  // event expected at steady_phase_ == steady_boundary_ starts an iteration; since_anchor_ keeps its value
  // from entering the steady state, to which steady_phase_ is added when leaving it.
  bool steady_enabled_;
  bool steady_ = false;
  std::unique_ptr<std::uint32_t[]> pattern_;
  int steady_phase_ = 0;
  int steady_boundary_ = 0;
  std::uint64_t steady_events_ = 0;
  std::uint64_t signature_ = 0;
};

}  // namespace cosched::sa
