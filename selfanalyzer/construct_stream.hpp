// Iterations inside one long parallel region (docs/selfanalyzer.md, "Where the iterations are"). Codes that
// put one `#pragma omp parallel` around their whole time loop, with orphaned `omp for` loops in the functions
// it calls (the C++ port of the NAS benchmarks, many SPMD and CFD codes), or a task graph that repeats, show
// no period in the sequence of outermost regions: there is one region. They do show one in the sequence of
// constructs the master thread meets inside it: worksharing loops, barriers, taskwaits, task creations (OMPT
// work, sync_region_wait and task_create events, each named by its code pointer). This feeds that sequence to
// a second Dynamic Periodicity Detector, the same one the regions use (periodicity_detector.hpp).
//
// Only constructs past the first kLongRegion of an outermost region are fed: a code of many short regions
// (each a loop and its barrier) is described by its regions, and its constructs cost one counter each.
//
// Threading: one caller, the measuring thread (the master of the outermost regions). No allocation after
// construction; on_construct is O(1) in the detector's steady state.
#pragma once

#include <cstdint>

#include "selfanalyzer/periodicity_detector.hpp"

namespace cosched::sa {

class ConstructStream {
 public:
  // Our choice: a region that runs more than 64 constructs on its master is a loop of its own. Codes of many
  // regions run 1 to 4 (a loop, its barrier, a reduction's barrier, a single).
  static constexpr int kLongRegion = 64;

  ConstructStream(int max_period, int confirm_repeats, int min_matches)
      : detector_(max_period, confirm_repeats, min_matches) {}

  // Caller: the master, when an outermost region's implicit task begins. O(1).
  void on_region_begin() noexcept { in_region_ = 0; }

  // Caller: the master, for each construct it meets inside an outermost region (its code pointer). O(1) in
  // the steady state, else the detector's cost.
  void on_construct(std::uint64_t codeptr) noexcept {
    if (skip_in_short_region()) return;
    on_long_region_construct(codeptr);
  }
  // The first half of on_construct, for a caller that keeps the rest out of line: true (and counted) for a
  // construct among the first kLongRegion of its region, which feeds nothing.
  bool skip_in_short_region() noexcept {
    if (in_region_ >= kLongRegion) return false;
    ++in_region_;
    return true;
  }
  // The second half: a construct of a long region joins the detector.
  void on_long_region_construct(std::uint64_t codeptr) noexcept {
    const PeriodicityDetector::Step step = detector_.push(codeptr);
    period_ = step.period;
    if (step.boundary) ++iterations_;
    ++fed_;
  }

  // The locked period, in constructs (0: none); iterations completed at it; constructs fed in all.
  [[nodiscard]] int period() const noexcept { return period_; }
  [[nodiscard]] std::uint64_t iterations() const noexcept { return iterations_; }
  [[nodiscard]] std::uint64_t fed() const noexcept { return fed_; }

 private:
  PeriodicityDetector detector_;
  int in_region_ = 0;
  int period_ = 0;
  std::uint64_t iterations_ = 0;
  std::uint64_t fed_ = 0;
};

}  // namespace cosched::sa
