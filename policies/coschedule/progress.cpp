#include "progress.hpp"

#include <algorithm>

namespace cosched::policy {

namespace {

bool usable(const RateSample& s) { return s.per_s > 0 && s.seconds > 0; }

}  // namespace

ProgressTracker::Use ProgressTracker::feed(JobId id, const Rate& rate) {
  JobProgress& j = jobs_[id];
  if (!rate.valid() || rate.seq == j.seq) return Use::stale;
  j.seq = rate.seq;
  const RateSample& s = rate.latest;
  if (!usable(s)) return Use::stale;
  const double units = s.seconds / settings_.base_quantum_s;
  const bool comparable = j.alone > 0 && j.source == s.source && j.threads == s.threads;
  if (j.estimating && s.with.empty()) {
    // §6.1: the rate measured alone in its group, next to light-sharing groups, is the rate alone. Two
    // samples of one estimation quantum are averaged; the first one of a new estimation replaces the old.
    if (j.round_samples > 0 && comparable) {
      j.alone = (j.alone * j.alone_samples + s.per_s) / (j.alone_samples + 1);
      ++j.alone_samples;
    } else {
      j.alone = s.per_s;
      j.alone_samples = 1;
      j.source = s.source;
      j.threads = s.threads;
    }
    ++j.round_samples;
    j.since_estimate = 0;
    j.last_ratio = 1;
    j.progress += units;  // eq. 6.1 for an estimation quantum: IPC co-run = IPC alone
    return Use::alone_estimate;
  }
  if (!comparable) {
    // No rate alone in this source yet (a new job, or its source changed): the job progresses, and eq. 6.1
    // cannot say how fast. Counting it as alone keeps it from looking starved in the meantime; its estimate
    // is expired, so the policy measures one soon. Our choice: an estimate in another source expires at
    // once. A job's source only moves forward (sensors/rates.cpp: regions, iterations once a loop is found,
    // app-work once the program reports work, each for good), so an estimate in an earlier one is never
    // usable again; waiting for the 40 quanta of §6.2.4 would leave the job without a comparable estimate
    // for 8 s. Another thread count keeps the estimate until it expires: an allocation may come back to it.
    if (j.alone > 0 && j.source != s.source) j.since_estimate = settings_.expire_quanta;
    j.last_ratio = -1;
    j.progress += units;
    return Use::no_estimate;
  }
  const double ratio = std::min(s.per_s / j.alone, 1.0);
  j.last_ratio = ratio;
  j.progress += ratio * units;
  return Use::progress;
}

void ProgressTracker::begin_estimate(JobId id) {
  JobProgress& j = jobs_[id];
  j.estimating = true;
  j.round_samples = 0;
}

void ProgressTracker::end_estimate(JobId id) {
  auto it = jobs_.find(id);
  if (it != jobs_.end()) it->second.estimating = false;
}

void ProgressTracker::scheduled(JobId id) {
  JobProgress& j = jobs_[id];
  if (j.alone > 0) j.since_estimate = std::min(j.since_estimate + 1, settings_.expire_quanta);
}

bool ProgressTracker::expired(JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() || it->second.alone <= 0 || it->second.since_estimate >= settings_.expire_quanta;
}

bool ProgressTracker::close_to_expire(JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() || it->second.alone <= 0 || it->second.since_estimate >= settings_.close_quanta;
}

double ProgressTracker::progress(JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? 0.0 : it->second.progress;
}

std::optional<double> ProgressTracker::slowdown(JobId id, const RateSample& s) const {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || !usable(s)) return std::nullopt;
  const JobProgress& j = it->second;
  if (j.alone <= 0 || j.source != s.source || j.threads != s.threads) return std::nullopt;
  return j.alone / s.per_s;
}

const ProgressTracker::JobProgress* ProgressTracker::find(JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

}  // namespace cosched::policy
