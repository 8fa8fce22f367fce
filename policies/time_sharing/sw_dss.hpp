// Sliding Window DSS and Step Sliding Window DSS (Polychronopoulos et al. §3.2.1, §3.2.2).
//
// A gang is a window of the ready queue (admission order, read as a ring) of consecutive jobs whose
// requests sum to at most 3P (eq. 4, Inequality 5; window.hpp). The window runs for one quantum with DSS
// (eqs. 1–3) applied to its jobs alone; the other jobs are stopped. At the end of each quantum the window
// moves:
//   step=window (sw-dss):  the next window begins with the job after the window's last one (§3.2.1);
//   step=one (ssw-dss):    the same window less its first job, replenished from the queue (§3.2.2).
// Both wrap round the queue ("recycling the ready queue pointer", §3.2.1), so every job runs once per
// scheduling phase and none starves. A job that leaves shrinks its window, which is refilled by the next
// jobs that fit at once ("the window is expanded with the next process in the row", §3.2.1).
// Every job gets quanta, so there is no multiprogramming limit of its own (may_start is always true).
#pragma once

#include "policies/param_spec.hpp"
#include "policies/policy.hpp"
#include "window.hpp"

namespace cosched::policy {

class SlidingWindowDss final : public TabledPolicy<SlidingWindowDss> {
 public:
  enum class Step { window, one };
  explicit SlidingWindowDss(Step step) : step_(step) {}
  [[nodiscard]] std::string_view name() const override { return step_ == Step::window ? "sw-dss" : "ssw-dss"; }
  [[nodiscard]] std::unique_ptr<Policy> clone() const override { return std::make_unique<SlidingWindowDss>(*this); }
  Decision decide(const Snapshot& s) override;
  [[nodiscard]] bool reacts_to_reports() const override { return false; }  // reads no estimate
  static const ParamTable<SlidingWindowDss>& param_table();
  // The window's first job: the whole state, with no clock in it (skip_rotation has nothing to move).
  bool rotation_key(std::string& key) const override;

 private:
  Step step_;
  WindowLimits limits_;
  // fill_remainder=1 (default, our choice for work conservation): CPUs the floor of eq. 2 leaves idle go
  // to the window's jobs with the largest remainders (dss_partition); 0: idle as in the paper.
  bool fill_remainder_ = true;
  JobId start_ = -1;  // the window begins at this job (or the first admitted after it); -1: the queue's head
  // decide()'s vectors, their storage kept from one quantum to the next (no state: not in the key).
  struct Scratch {
    std::vector<int> requests;
    std::vector<std::size_t> window;
    std::vector<int> win_requests;
    std::vector<int> place;
  } scratch_;
};

}  // namespace cosched::policy
