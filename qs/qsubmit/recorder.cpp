#include "recorder.hpp"

namespace cosched::qsubmit {

namespace {

bool same_cpus(const results::CpuSegment& s, int cpus, const std::vector<int>& cpu_list) {
  return s.cpus == cpus && s.cpu_list == cpu_list;
}

}  // namespace

void AllocationRecorder::observe(double t, int cpus, const std::vector<int>& cpu_list) {
  if (open_) {
    auto& last = segments_.back();
    if (t < last.t1) return;  // out of order: samples are taken in time order, ignore a stale one
    last.t1 = t;
    if (same_cpus(last, cpus, cpu_list)) return;
    open_ = false;
    if (last.t1 <= last.t0) segments_.pop_back();  // replaced at the instant it began
  }
  if (cpus <= 0) return;
  // A → B → A within one instant leaves B out (above); A then simply goes on.
  if (!segments_.empty() && segments_.back().t1 == t && same_cpus(segments_.back(), cpus, cpu_list)) {
    open_ = true;
    return;
  }
  segments_.push_back(results::CpuSegment{t, t, cpus, cpu_list});
  open_ = true;
}

void AllocationRecorder::finish(double t) {
  if (!open_) return;
  open_ = false;
  auto& last = segments_.back();
  if (t > last.t1) last.t1 = t;
  if (last.t1 <= last.t0) segments_.pop_back();  // nothing was held for any time
}

void MlRecorder::observe(double t, int running, int queued) {
  if (!samples_.empty() && samples_.back().running == running && samples_.back().queued == queued) return;
  samples_.push_back(results::MlSample{t, running, queued});
}

}  // namespace cosched::qsubmit
