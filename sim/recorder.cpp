#include "sim/recorder.hpp"

#include <algorithm>

namespace cosched::sim {

namespace {
// What one kept segment costs in memory, its CPU list included.
std::size_t segment_size(std::size_t cpus_listed) {
  return sizeof(results::CpuSegment) + cpus_listed * sizeof(int);
}
}  // namespace

Recorder::Recorder(const std::vector<JobSpec>& jobs, std::size_t segment_bytes, int machine_cpus)
    : keep_segments_(segment_bytes > 0), segment_budget_(segment_bytes), machine_cpus_(std::max(machine_cpus, 1)),
      open_(jobs.size(), 0), open_at_(jobs.size()), totals_(jobs.size()) {
  jobs_.reserve(jobs.size());
  for (const auto& j : jobs) {
    results::JobRecord r;
    r.id = j.number;
    r.app = j.app != nullptr ? j.app->name : std::string();
    r.app_class = j.app != nullptr ? j.app->app_class : std::string();
    r.submit = j.submit;
    r.ideal = j.ideal;
    r.requested = j.request;
    r.exit_status = j.usable() ? 0 : -1;  // never started: no program, no status
    jobs_.push_back(std::move(r));
  }
}

void Recorder::machine_change(double t, int delta) {
  // As results::delivered_cpu_seconds: only what is held over a non-empty stretch counts.
  if (t > machine_t_) {
    delivered_.cpu_seconds += static_cast<double>(std::min<long long>(held_, machine_cpus_)) * (t - machine_t_);
    delivered_.oversubscribed = delivered_.oversubscribed || held_ > machine_cpus_;
    machine_t_ = t;
  }
  held_ += delta;
}

void Recorder::charge_segments(std::size_t added) {
  if (added > segment_budget_ - segment_bytes_) {
    drop_segments();
    return;
  }
  segment_bytes_ += added;
}

void Recorder::drop_segments() {
  // Past the budget: the totals, kept all along, go on alone.
  keep_segments_ = false;
  segment_bytes_ = 0;
  for (results::JobRecord& j : jobs_) std::vector<results::CpuSegment>().swap(j.allocation);
}

void Recorder::close_segment(std::size_t index, double t) {
  if (!open_[index]) return;
  open_[index] = 0;
  const Open& o = open_at_[index];
  machine_change(t, -o.cpus);
  if (t > o.t0) {
    results::HeldTotals& h = totals_[index];
    h.cpu_seconds += o.cpus * (t - o.t0);
    h.seconds += t - o.t0;
    h.last_end = std::max(h.last_end, t);
  }
  if (!keep_segments_) return;
  auto& segments = jobs_[index].allocation;
  segments.back().t1 = t;
  if (!(segments.back().t1 > segments.back().t0)) segments.pop_back();  // superseded at the same instant
}

void Recorder::allocation(std::size_t index, double t, int cpus, std::vector<int> cpu_list) {
  close_segment(index, t);
  if (cpus <= 0) return;
  open_[index] = 1;
  open_at_[index] = Open{t, cpus};
  machine_change(t, cpus);
  if (!keep_segments_) return;
  charge_segments(segment_size(cpu_list.size()));
  if (!keep_segments_) return;
  jobs_[index].allocation.push_back(results::CpuSegment{t, t, cpus, std::move(cpu_list)});
}

Recorder::Position Recorder::position(std::size_t index, double t) const {
  Position p;
  p.open = open_[index] != 0;
  p.segments_kept = keep_segments_;
  if (keep_segments_) p.segments = jobs_[index].allocation.size();
  const results::HeldTotals& h = totals_[index];
  p.cpu_seconds = h.cpu_seconds;
  p.seconds = h.seconds;
  if (p.open && t > open_at_[index].t0) {
    p.cpu_seconds += open_at_[index].cpus * (t - open_at_[index].t0);
    p.seconds += t - open_at_[index].t0;
  }
  return p;
}

double Recorder::delivered_at(double t) const {
  const double stretch = t > machine_t_ ? t - machine_t_ : 0;
  return delivered_.cpu_seconds + static_cast<double>(std::min<long long>(held_, machine_cpus_)) * stretch;
}

void Recorder::repeat(std::size_t index, const Position& start, double t, double period, std::uint64_t times,
                      double skipped) {
  const bool open = open_[index] != 0;
  {
    // The totals at t grow by the turn's `times` over; an open segment goes on from t + skipped.
    const Position now = position(index, t);
    results::HeldTotals& h = totals_[index];
    const auto n = static_cast<double>(times);
    h.cpu_seconds = now.cpu_seconds + n * (now.cpu_seconds - start.cpu_seconds);
    h.seconds = now.seconds + n * (now.seconds - start.seconds);
    if (now.seconds > start.seconds) h.last_end = std::max(h.last_end, t + skipped);
    if (open) open_at_[index].t0 = t + skipped;
  }
  if (!keep_segments_ || !start.segments_kept) return;
  auto& segments = jobs_[index].allocation;
  const std::size_t first = start.segments;
  const std::size_t last = segments.size();
  // Nothing began in the turn (an open segment just goes on), or an open turn with nothing before it.
  if (first >= last || times == 0 || (open && first == 0)) return;
  std::size_t bytes = 0;
  for (std::size_t i = first; i < last; ++i) bytes += segment_size(segments[i].cpu_list.size());
  if (static_cast<double>(bytes) * static_cast<double>(times) > static_cast<double>(segment_budget_ - segment_bytes_)) {
    drop_segments();
    return;
  }
  charge_segments(bytes * times);
  // The open segment ends a turn after its counterpart of the turn before, the segment before `first` (open
  // when the turn began, closed during it); each copy likewise, one turn later each time.
  if (open) segments[last - 1].t1 = segments[first - 1].t1 + period;
  segments.reserve(last + (last - first) * times);
  for (std::uint64_t m = 1; m <= times; ++m) {
    const double shift = static_cast<double>(m) * period;
    for (std::size_t i = first; i < last; ++i) {
      results::CpuSegment s = segments[i];
      s.t0 += shift;
      s.t1 += shift;
      segments.push_back(std::move(s));
    }
  }
  if (open) segments.back().t1 = segments.back().t0;  // still open, as Recorder::allocation leaves one
}

void Recorder::repeat_machine(double start_delivered, double t, std::uint64_t times, double skipped) {
  const double now = delivered_at(t);
  delivered_.cpu_seconds = now + static_cast<double>(times) * (now - start_delivered);
  machine_t_ = t + skipped;
}

void Recorder::ended(std::size_t index, double t) {
  close_segment(index, t);
  jobs_[index].end = t;
}

std::vector<results::JobRecord> Recorder::take_jobs() {
  if (!keep_segments_) {
    for (std::size_t i = 0; i < jobs_.size(); ++i) jobs_[i].held = totals_[i];
  }
  return std::move(jobs_);
}

std::optional<results::DeliveredTotals> Recorder::delivered() const {
  if (keep_segments_) return std::nullopt;
  return delivered_;
}

void Recorder::ml(double t, int running, int queued) {
  if (!ml_.empty() && ml_.back().t == t) {
    ml_.back().running = running;
    ml_.back().queued = queued;
    return;
  }
  if (!ml_.empty() && ml_.back().running == running && ml_.back().queued == queued) return;
  ml_.push_back(results::MlSample{t, running, queued});
}

}  // namespace cosched::sim
