#include "sim/job_progress.hpp"

#include <algorithm>
#include <limits>

#include "policies/rotation_key.hpp"

namespace cosched::sim {

void JobProgress::advance(double t) {
  if (t <= updated_at_) return;
  const double from = std::max(updated_at_, stall_until_);
  if (t > from) done_ = std::min(total_, done_ + (t - from) * rate_);
  // Float drift, summed over many stretches, must not decide whether a job ends at an instant or a whole
  // time-sharing turn later (stopped a hair before its end): work this close to the total is all done.
  if (total_ - done_ <= kEndTolerance * total_) done_ = total_;
  updated_at_ = t;
}

void JobProgress::set_team(double t, int team, double stall_s, double oversub) {
  advance(t);
  oversub = std::max(oversub, 1.0);
  if (team == team_ && oversub == oversub_) return;
  updated_at_ = std::max(updated_at_, t);
  if (team != team_ && team_ >= 0 && stall_s > 0) stall_until_ = std::max(stall_until_, t + stall_s);
  team_ = team;
  oversub_ = oversub;
  update_rate();
}

void JobProgress::set_slowdown(double t, double slowdown) {
  advance(t);
  updated_at_ = std::max(updated_at_, t);
  slowdown_ = std::max(slowdown, 1.0);
  update_rate();
}

void JobProgress::set_cpu_share(double t, double share) {
  advance(t);
  updated_at_ = std::max(updated_at_, t);
  share_ = std::clamp(share, 1e-6, 1.0);
  update_rate();
}

void JobProgress::update_rate() {
  rate_ = team_ > 0 ? catalog::speedup(*model_, team_) * share_ / (slowdown_ * oversub_) : 0.0;
}

double JobProgress::done_at(double t) const {
  const double from = std::max(updated_at_, stall_until_);
  return t > from ? std::min(total_, done_ + (t - from) * rate_) : done_;
}

void JobProgress::skip(double seconds, double work) {
  if (stall_until_ > updated_at_) stall_until_ += seconds;
  updated_at_ += seconds;
  done_ = std::min(total_, done_ + work);
}

void JobProgress::append_key(policy::KeyWriter& key) const {
  key << team_ << rate_ << slowdown_ << oversub_ << share_;
}

void JobProgress::snap_to(double work) { done_ = std::clamp(work, done_, total_); }

double JobProgress::time_when(double target) const {
  if (target <= done_) return updated_at_;
  if (!(rate_ > 0)) return std::numeric_limits<double>::infinity();
  return std::max(updated_at_, stall_until_) + (target - done_) / rate_;
}

}  // namespace cosched::sim
