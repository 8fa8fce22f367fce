#include "sim/recorder.hpp"

namespace cosched::sim {

Recorder::Recorder(const std::vector<JobSpec>& jobs) : open_(jobs.size(), 0) {
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

void Recorder::close_segment(std::size_t index, double t) {
  if (!open_[index]) return;
  open_[index] = 0;
  auto& segments = jobs_[index].allocation;
  segments.back().t1 = t;
  if (!(segments.back().t1 > segments.back().t0)) segments.pop_back();  // superseded at the same instant
}

void Recorder::allocation(std::size_t index, double t, int cpus, std::vector<int> cpu_list) {
  close_segment(index, t);
  if (cpus <= 0) return;
  jobs_[index].allocation.push_back(results::CpuSegment{t, t, cpus, std::move(cpu_list)});
  open_[index] = 1;
}

void Recorder::ended(std::size_t index, double t) {
  close_segment(index, t);
  jobs_[index].end = t;
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
