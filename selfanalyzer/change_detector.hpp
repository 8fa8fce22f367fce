// Decides when what the SelfAnalyzer measured no longer describes the program, so that measurement
// restarts (new baseline, empty history). PDPA paper §3.1 names this as the SelfAnalyzer's open problem
// ("iterative parallel region with a variable working set ... we are not currently able to detect that
// the application has changed its behavior"); we watch two signals:
//   1. structure: the loop being measured is not the one measured before — a different DPD period or
//      region signature (a new iterative phase, a new region mix), or a different explicit loop id. A
//      lock lost and re-acquired on the *same* loop (one odd region) is not a change.
//   2. time: at an unchanged team size, an iteration time above jump_high × or below jump_low × the
//      running median. One such sample is an outlier (dropped); jump_confirm consecutive ones on the
//      same side mean the behaviour changed (e.g. the working set grew).
#pragma once

#include <cstdint>

namespace cosched::sa {

class ChangeDetector {
 public:
  enum class TimeVerdict : std::uint8_t {
    accept,   // keep the sample
    outlier,  // drop it; not (yet) evidence of a change
    changed,  // the iteration time moved for good: restart measurement
  };

  ChangeDetector(double jump_high, double jump_low, int jump_confirm, int min_samples) noexcept;

  // Caller: the Analyzer when a loop is locked (DPD) or named (explicit API). Records the structure and
  // returns true when it differs from the previous one (or there was none). O(1).
  bool structure_changed(int period, std::uint64_t signature) noexcept;
  void forget_structure() noexcept { has_structure_ = false; }

  // Caller: the Analyzer for each clean iteration time at the current team size, with the median and
  // count of the samples kept so far at that size. Fewer than min_samples: always accept. O(1).
  TimeVerdict classify(double sample_s, double median_s, int samples) noexcept;
  // The team size changed or measurement restarted: the running median is no longer comparable.
  void reset_times() noexcept;

 private:
  double jump_high_;
  double jump_low_;
  int jump_confirm_;
  int min_samples_;
  bool has_structure_ = false;
  int period_ = 0;
  std::uint64_t signature_ = 0;
  int outlier_side_ = 0;  // +1 slower, −1 faster, 0 none
  int outlier_run_ = 0;
};

}  // namespace cosched::sa
