#include "sim/waiting_model.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "policies/rotation_key.hpp"

namespace cosched::sim {

WaitingModel::WaitingModel(bool enabled, double noise, std::uint64_t seed)
    : enabled_(enabled), noise_(std::max(noise, 0.0)) {
  if (enabled_ && noise_ > 0) rng_.emplace(seed);
}

void WaitingModel::set_due(double due) {
  due_ = due;
  ++generation_;
}

bool WaitingModel::update(double t, int cpus, double interval_s, double efficiency, double progress_from) {
  if (!enabled_) return false;
  cpus = std::max(cpus, 0);
  if (cpus == 0 || !(interval_s > 0)) interval_s = kInf;  // no progress, no interval ends
  progress_from = std::max(progress_from, t);
  // The same pace from the same instant: due() stands.
  if (cpus == cpus_ && interval_s == interval_s_ && progress_from <= std::max(since_, t)) return false;
  // The warm-up so far, at the pace it ran.
  if (cpus_ > 0 && std::isfinite(interval_s_) && (republish_ || !now_.ready) && t > since_) {
    left_ = std::max(0.0, left_ - (t - since_) / ((1 + kIntervals) * interval_s_));
  }
  since_ = progress_from;
  if (cpus > 0 && cpus != now_.cpus) {
    // Another CPU count: its own window; the one left is kept, and coming back to it finds its estimate.
    if (before_.cpus == cpus) {
      std::swap(now_, before_);
    } else {
      before_ = now_;
      now_ = Window{};
      now_.cpus = cpus;
    }
    // Back where it has an estimate: the kept one again, after one interval there (the meter publishes it at
    // its first sample; one interval later its next one). Our choice, so that every estimate follows some
    // progress: with --realloc-cost, a policy that moves a job at each of its reports could otherwise stall it
    // for ever between two kept windows.
    republish_ = now_.ready;
    left_ = republish_ ? 1.0 / (1 + kIntervals) : 1.0;
  }
  if (cpus > 0) now_.truth = efficiency;
  cpus_ = cpus;
  interval_s_ = interval_s;
  double due = kInf;
  if (cpus > 0 && (republish_ || !now_.ready) && std::isfinite(interval_s)) {
    due = since_ + left_ * (1 + kIntervals) * interval_s;
  }
  if (due == due_) return false;
  set_due(due);
  return true;
}

void WaitingModel::skip(double seconds) {
  since_ += seconds;
  if (std::isfinite(due_)) set_due(due_ + seconds);
}

void WaitingModel::append_key(policy::KeyWriter& w, double t) const {
  w << enabled_;
  if (!enabled_) return;  // a model that is off never changes (update() returns at once)
  const auto ns = [t](double at) { return std::isfinite(at) ? std::llround((at - t) * 1e9) : -1LL; };
  // The warm-up's start matters only while one runs towards an estimate (due_ finite; update() says so).
  w << (std::isfinite(due_) ? ns(since_) : -1LL) << ns(due_);
  for (const Window* v : {&now_, &before_}) w << v->cpus << v->ready << v->truth;
  w << cpus_ << interval_s_ << left_ << republish_ << estimate_.seq;
}

void WaitingModel::publish(double t) {
  (void)t;
  if (!enabled_ || now_.cpus <= 0) return;
  if (republish_) {
    republish_ = false;  // the kept window's estimate, as it was
  } else {
    // Our choice: each interval's efficiency has relative standard deviation noise_, so the mean of
    // kIntervals of them has noise_ / sqrt(kIntervals), which is also its relative standard error.
    const double rel = noise_ / std::sqrt(static_cast<double>(kIntervals));
    const double factor = rng_ ? std::max(0.05, 1.0 + rel * rng_->normal()) : 1.0;
    now_.ready = true;
    now_.efficiency = std::clamp(now_.truth * factor, 0.0, 1.0);
    now_.std_error = rel * now_.efficiency;
    now_.window_s = kIntervals * interval_s_;
    left_ = 0;
  }
  estimate_.valid = true;
  ++estimate_.seq;
  estimate_.efficiency = now_.efficiency;
  estimate_.std_error = now_.std_error;
  estimate_.cpu_wait = -1;  // no outside load in the simulator: unknown, as the meter without schedstat
  estimate_.window_s = now_.window_s;
  estimate_.cpus = now_.cpus;
  estimate_.intervals = kIntervals;
  set_due(kInf);
}

}  // namespace cosched::sim
