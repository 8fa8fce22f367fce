#include "policy.hpp"

#include <algorithm>
#include <string>

namespace cosched::policy {

const char* to_string(Event e) noexcept {
  switch (e) {
    case Event::arrival: return "arrival";
    case Event::departure: return "departure";
    case Event::report: return "report";
    case Event::quantum: return "quantum";
    case Event::timer: return "timer";
    case Event::param_change: return "param_change";
    case Event::query: return "query";
  }
  return "unknown";
}

const char* to_string(EstimateKind k) noexcept {
  switch (k) {
    case EstimateKind::measured_speedup: return "measured_speedup";
    case EstimateKind::waiting_time: return "waiting_time";
  }
  return "unknown";
}

const JobView* Snapshot::find(JobId id) const {
  for (const auto& j : jobs) {
    if (j.id == id) return &j;
  }
  return nullptr;
}

void admit_while_a_cpu_is_unshared(const Snapshot& s, Decision& d) {
  d.may_start = s.jobs_and_starting() < s.machine.cpus;
  if (d.may_start) {
    d.may_start_reason = "a new job would get a CPU of its own";
  } else if (s.starting > 0) {
    d.may_start_reason = "every CPU already holds a job, counting the " + std::to_string(s.starting) +
                         " being started";
  } else {
    d.may_start_reason = "every CPU already holds a job";
  }
}

double Bandwidth::mean_per_thread(int n) const {
  n = std::min(n, count);
  if (n <= 0) return 0;
  double sum = 0;
  for (int i = count - n; i < count; ++i) {
    const auto& s = samples[static_cast<std::size_t>(i)];
    sum += s.bytes_per_s / std::max(s.threads, 1);
  }
  return sum / n;
}

double Bandwidth::mean(int n) const {
  n = std::min(n, count);
  if (n <= 0) return 0;
  double sum = 0;
  for (int i = count - n; i < count; ++i) sum += samples[static_cast<std::size_t>(i)].bytes_per_s;
  return sum / n;
}

int Bandwidth::count_after(double t) const {
  int n = 0;
  for (int i = count - 1; i >= 0 && samples[static_cast<std::size_t>(i)].at > t; --i) ++n;
  return n;
}

void Bandwidth::push(const BandwidthSample& s) {
  if (count == kWindow) {
    std::rotate(samples.begin(), samples.begin() + 1, samples.end());
    --count;
  }
  samples[static_cast<std::size_t>(count++)] = s;
}

const Allocation* Decision::find(JobId id) const {
  for (const auto& a : jobs) {
    if (a.id == id) return &a;
  }
  return nullptr;
}

Status Policy::set_param(std::string_view name, std::string_view /*value*/) {
  return make_error(Errc::invalid_argument,
                    "policy '" + std::string(this->name()) + "' has no parameter '" + std::string(name) + "'");
}

}  // namespace cosched::policy
