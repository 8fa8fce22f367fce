// How far a running job has got: work done, the rate at which it goes, and the progress lost to team
// changes. Pure arithmetic over simulated time; the engine asks it "when will the work reach X?".
//
// Rate: S(team) one-CPU seconds of work per second (catalog::speedup of the job's curve), where `team` is the
// number of threads the job really runs (the SelfAnalyzer's baseline may run fewer than allocated; a job
// stopped by a time-sharing policy runs 0).
// Reallocation cost: each change of team, after the first, stalls the job for `stall_s` seconds of no
// progress (thread start/stop, cache and page migration; --realloc-cost). A change during a stall restarts
// the stall.
#pragma once

#include <string>

#include "policies/rotation_key.hpp"
#include "qs/catalog.hpp"

namespace cosched::sim {

class JobProgress {
 public:
  JobProgress(double total_work, const catalog::SpeedupModel& model) : total_(total_work), model_(&model) {}

  // Brings the work done up to time t (t never goes back).
  void advance(double t);
  // The job's threads run on `team` CPUs (0 = stopped) from time t (the work up to t is counted first), each
  // unit of work taking `oversub` (>= 1) times as long as on a team of that size (more threads than CPUs).
  void set_team(double t, int team, double stall_s, double oversub = 1.0);
  // From time t the job's work goes `slowdown` (>= 1) times slower: memory contention (sim/contention.cpp).
  void set_slowdown(double t, double slowdown);
  // From time t the job's threads get `share` (0, 1] of their CPUs: other jobs' threads run there too, and
  // the kernel time-shares each CPU evenly among them (sim/cpu_sharing.cpp).
  void set_cpu_share(double t, double share);
  // Moves the work done to exactly `work` (an event's target), so float drift never makes an event
  // fire twice or an iteration last zero seconds. Only forward, never past the total.
  void snap_to(double work);
  // cosched-sim's fast-forward (docs/simulator.md, "Steady rotations"): `seconds` later and `work` further on,
  // at the same rate; a stall still running moves with the clock.
  void skip(double seconds, double work);
  // Appends the rate's ingredients (not the work done nor the clock) to a rotation key.
  void append_key(policy::KeyWriter& key) const;

  // The time at which the work done will reach `target` if nothing changes; +inf if it never will.
  [[nodiscard]] double time_when(double target) const;

  [[nodiscard]] double done() const { return done_; }
  // The work done at time t >= the last update, without updating (what a sensor reads).
  [[nodiscard]] double done_at(double t) const;
  [[nodiscard]] double slowdown() const { return slowdown_; }
  [[nodiscard]] double cpu_share() const { return share_; }
  [[nodiscard]] double total() const { return total_; }
  [[nodiscard]] double rate() const { return rate_; }
  [[nodiscard]] int team() const { return team_; }
  [[nodiscard]] double stalled_until() const { return stall_until_; }

 private:
  void update_rate();
  static constexpr double kEndTolerance = 1e-9;  // our choice, as RunningJob's kBoundaryTolerance
  double total_;
  const catalog::SpeedupModel* model_;
  double done_ = 0;
  double updated_at_ = 0;
  double stall_until_ = 0;
  double rate_ = 0;
  double slowdown_ = 1;
  double oversub_ = 1;
  double share_ = 1;
  int team_ = -1;  // -1: never set (the first team costs nothing)
};

}  // namespace cosched::sim
