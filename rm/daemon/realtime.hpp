// The RM at a real-time priority (--rt-priority), guarded by RLIMIT_RTTIME (realtime.cpp says why and how).
#pragma once

namespace cosched::rm {

class RealtimePriority {
 public:
  // SCHED_FIFO at `priority` (nothing for 0), with the guard that puts the RM back to normal scheduling
  // once it runs too long without blocking. Call it last in start-up: what was set up before runs normally.
  void enter(int priority);
  // After each wake-up: logs, once, that the guard demoted the RM.
  void check();
  [[nodiscard]] bool active() const { return active_; }

 private:
  bool active_ = false;  // at SCHED_FIFO now, not demoted by the guard
};

}  // namespace cosched::rm
