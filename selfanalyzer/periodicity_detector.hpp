// Dynamic Periodicity Detector (DPD): finds the period of the stream of outermost parallel-region ids
// and marks the event that starts each period ("iteration boundary").
//
// After F. Freitag, J. Corbalan, J. Labarta, "A Dynamic Periodicity Detector: Application to Speedup
// Computation", IPDPS 2001, as used by the SelfAnalyzer (Corbalan, Martorell, Labarta, PDPA paper §3.1:
// "receives as input the sequence of parallel loops executed ... and generates a Boolean indicating if it
// corresponds with the initial period of a loop or not"). The formulation below is ours; see
// docs/selfanalyzer.md for the argument behind each rule.
//
// Per candidate lag m (1..max_period) the detector keeps run[m], the number of consecutive most recent
// events x[t] with x[t] == x[t-m]. The suffix of the stream that is m-periodic is then run[m] + m events
// long (its "coverage"). A lag is *confirmed* once run[m] >= max(confirm_repeats·m, min_matches). The
// locked period is the confirmed lag with the largest coverage, ties going to the smaller lag:
//   - multiples of the true period have the same coverage, so the fundamental period wins;
//   - an inner loop (B C in A (B C)^4 D) keeps breaking at D and A while the outer lag 10 grows, so the
//     outermost iterative structure wins as soon as it is confirmed;
//   - a non-periodic prologue only delays confirmation; a new iterative phase takes over once the old
//     lag breaks and the new one is confirmed.
// Coverage saturates at a cap >= 2·max_period: two periods both holding over such a suffix imply their
// gcd is a period too (Fine and Wilf), so at saturation the smallest true period wins the tie.
//
// Region ids are folded to 32-bit hashes first: two distinct code addresses of one process collide with
// probability ~2^-32 per pair, and 32-bit lanes let the per-lag loop run 4 lags per SSE2 instruction
// (8 with AVX2, selected at load time on x86-64).
// Cost: one branch-free, vectorised pass over max_period lags per event (docs/performance.md); no
// allocation after construction.
#pragma once

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
  PeriodicityDetector(int max_period, int confirm_repeats, int min_matches);

  // Caller: the Analyzer, once per outermost region. Cost: O(max_period), no allocation.
  Step push(std::uint64_t region_id) noexcept;

  // Forget everything (the explicit iteration API took over, or a test restarts). O(max_period).
  void reset() noexcept;

  [[nodiscard]] int period() const noexcept { return locked_; }
  // Order-independent digest of the region ids of one locked period (0 when unlocked). It identifies
  // the loop regardless of where the anchor fell, so a lock that is lost and re-acquired on the same
  // loop can be recognised (ChangeDetector).
  [[nodiscard]] std::uint64_t signature() const noexcept { return signature_; }
  [[nodiscard]] int max_period() const noexcept { return max_period_; }

 private:
  void lock(int period, std::int32_t run) noexcept;

  int max_period_;
  // history_ holds each hashed id twice (at h and h + max_period) so that the previous max_period ids
  // are one contiguous slice: x[t-m] == history_[head_ + m] for m in 1..max_period.
  std::unique_ptr<std::uint32_t[]> history_;
  std::unique_ptr<std::int32_t[]> run_;      // run_[m-1]: consecutive matches at lag m
  std::unique_ptr<std::int32_t[]> run_cap_;  // run_cap_[m-1] = coverage cap - m; 0 while lag m is invalid
  std::unique_ptr<std::int32_t[]> needed_;   // needed_[m-1]: run length that confirms lag m
  int head_ = 0;                 // slot of the next event; decreases modulo max_period
  int seen_ = 0;                 // events pushed, saturating at max_period (lags beyond are invalid)
  int coverage_cap_ = 0;         // largest coverage counted (see the header)
  int locked_ = 0;               // current period, 0 = none
  int since_anchor_ = 0;         // events since the last boundary, modulo locked_
  std::uint64_t signature_ = 0;
};

}  // namespace cosched::sa
