// Summary statistics of a Run (summary.json) and the per-job derived values. Pure functions: no I/O here,
// so qsubmit, cosched-sim and the tests get the very same numbers (the formulas are in docs/results.md).
#include "qs/results.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

namespace cosched::results {

namespace {

// A segment's usable length: odd input (reversed, NaN or infinite bounds) counts as zero, never negative.
double held_seconds(const CpuSegment& s) {
  double d = s.t1 - s.t0;
  return std::isfinite(d) && d > 0 ? d : 0.0;
}

bool known(double t) { return std::isfinite(t) && t >= 0; }

// The CPUs a job held as intervals: its segments, or [start, end) × requested when none is recorded.
struct Held {
  double t0;
  double t1;
  int cpus;
};

std::vector<Held> held_intervals(const JobRecord& j) {
  std::vector<Held> held;
  if (j.allocation.empty()) {
    if (j.execution() > 0) held.push_back({j.start, j.end, std::max(0, j.requested)});
    return held;
  }
  for (const auto& s : j.allocation) {
    if (held_seconds(s) > 0 && s.cpus > 0) held.push_back({s.t0, s.t1, s.cpus});
  }
  return held;
}

// ∫ min(Σ cpus held at t, machine) dt: the CPU·seconds the machine actually delivered. Native runs start
// more threads than there are CPUs; that excess is time sharing, not extra capacity, so it counts once.
// nullopt when the machine was never oversubscribed: then delivered = held, exactly (no rounding drift).
std::optional<double> delivered_cpu_seconds(const std::vector<const JobRecord*>& jobs, int machine_cpus) {
  std::vector<std::pair<double, long long>> changes;
  for (const JobRecord* j : jobs) {
    for (const Held& h : held_intervals(*j)) {
      changes.push_back({h.t0, h.cpus});
      changes.push_back({h.t1, -static_cast<long long>(h.cpus)});
    }
  }
  std::sort(changes.begin(), changes.end());
  double area = 0;
  long long held = 0;
  bool oversubscribed = false;
  for (std::size_t i = 0; i < changes.size(); ++i) {
    held += changes[i].second;
    // Only what is held over a non-empty stretch counts (a job ending as another starts is no excess).
    if (i + 1 < changes.size() && changes[i + 1].first > changes[i].first) {
      oversubscribed |= held > machine_cpus;
      area += static_cast<double>(std::min<long long>(held, machine_cpus)) * (changes[i + 1].first - changes[i].first);
    }
  }
  if (!oversubscribed) return std::nullopt;
  return area;
}

// DSS eq. 11 for one benchmark: T̄_ideal / T̄_s, the mean dedicated run time (SWF field 4) of its completed
// jobs over their mean turnaround (response) time. nullopt when no completed job has an ideal time. The
// paper also discards the first and last few executions of each instance; we keep them all (a closed
// workload's chains are not recorded in JobRecord).
std::optional<double> normalized_throughput(const std::vector<const JobRecord*>& jobs) {
  double ideal = 0;
  double response = 0;
  int n = 0;
  for (const JobRecord* j : jobs) {
    if (j->ideal <= 0 || j->response() <= 0) continue;
    ideal += j->ideal;
    response += j->response();
    ++n;
  }
  if (n == 0 || response <= 0) return std::nullopt;
  return ideal / response;
}

// The multiprogram metrics of Feliu's thesis (§3.4, after Eyerman and Eeckhout), over the completed jobs with a
// known run time alone (SWF field 4, `ideal`): a job's slowdown is its turnaround in the mix — end − start,
// time stopped by time sharing included (§3.4: "including the time where the process is not scheduled") —
// over its time alone.
//   STP = Σ_i T_i^alone / T_i^together            (eq. 3.5: the sum of the speedups)
//   ANTT = (1/N) Σ_i T_i^together / T_i^alone     (eq. 3.6)
//   Unfairness = max_i slowdown_i / min_i slowdown_i   (eq. 3.7)
struct MixMetrics {
  std::optional<double> stp, antt, unfairness;
  int jobs = 0;
};

MixMetrics mix_metrics(const std::vector<const JobRecord*>& jobs) {
  MixMetrics m;
  double stp = 0;
  double antt = 0;
  double lo = 0;
  double hi = 0;
  for (const JobRecord* j : jobs) {
    if (j->ideal <= 0 || j->execution() <= 0) continue;
    const double slowdown = j->execution() / j->ideal;
    stp += 1 / slowdown;
    antt += slowdown;
    lo = m.jobs == 0 ? slowdown : std::min(lo, slowdown);
    hi = m.jobs == 0 ? slowdown : std::max(hi, slowdown);
    ++m.jobs;
  }
  if (m.jobs == 0) return m;
  m.stp = stp;
  m.antt = antt / m.jobs;
  m.unfairness = hi / lo;
  return m;
}

nlohmann::json number_or_null(std::optional<double> v) {
  if (v && std::isfinite(*v)) return *v;
  return nullptr;
}

std::optional<double> mean_of(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

std::optional<double> median_of(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The window every rate is measured over: from the first submission to the last moment a job is known to
// have held CPUs or ended. Jobs that never ended do not shorten it; they only fail to extend it.
struct Window {
  double begin = 0;
  double end = 0;
  [[nodiscard]] double length() const { return end > begin ? end - begin : 0; }
};

Window run_window(const std::vector<const JobRecord*>& jobs) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  for (const JobRecord* j : jobs) {
    if (known(j->submit)) lo = std::min(lo, j->submit);
    if (known(j->end)) hi = std::max(hi, j->end);
    if (j->held && known(j->held->last_end)) hi = std::max(hi, j->held->last_end);
    for (const auto& s : j->allocation) {
      if (known(s.t1) && held_seconds(s) > 0) hi = std::max(hi, s.t1);
    }
  }
  if (!std::isfinite(lo) || !std::isfinite(hi) || hi < lo) return {};
  return {lo, hi};
}

// ∫ running(t) dt over the window, where running(t) is the value of the latest sample at or before t
// (0 before the first sample). Samples need not be sorted.
double integrate_running(std::vector<MlSample> ml, Window w) {
  std::stable_sort(ml.begin(), ml.end(), [](const MlSample& a, const MlSample& b) { return a.t < b.t; });
  double area = 0;
  for (std::size_t i = 0; i < ml.size(); ++i) {
    if (!std::isfinite(ml[i].t)) continue;
    double from = std::max(ml[i].t, w.begin);
    double to = i + 1 < ml.size() && std::isfinite(ml[i + 1].t) ? std::min(ml[i + 1].t, w.end) : w.end;
    if (to > from) area += std::max(0, ml[i].running) * (to - from);
  }
  return area;
}

// Running time of one job clipped to the window: end−start, or window end − start for a job still running.
double running_seconds(const JobRecord& j, Window w) {
  if (!known(j.start)) return 0;
  double stop = known(j.end) ? j.end : w.end;
  double d = std::min(stop, w.end) - std::max(j.start, w.begin);
  return d > 0 ? d : 0;
}

// Statistics of one group of jobs (a class, or all of them). `window` is the whole run's: utilisation and
// ML of a class are its share of the machine over the run, so that the classes add up to the overall value.
// `delivered_share` = delivered / held CPU·seconds of the whole run (1 unless oversubscribed): a class's
// utilisation is its held CPU·seconds scaled by it, so that classes add up to the overall utilisation.
nlohmann::json group_stats(const std::vector<const JobRecord*>& jobs, const Run& run, Window window,
                           std::optional<double> run_ml_area, double delivered_share) {
  std::vector<double> response;
  std::vector<double> execution;
  std::vector<double> wait;
  double cpu_seconds = 0;
  double running_area = 0;
  int started = 0;
  for (const JobRecord* j : jobs) {
    if (j->response() >= 0) response.push_back(j->response());
    if (j->execution() >= 0) execution.push_back(j->execution());
    if (j->wait() >= 0) wait.push_back(j->wait());
    if (known(j->start)) ++started;
    cpu_seconds += j->cpu_seconds();
    running_area += running_seconds(*j, window);
  }
  Window own = run_window(jobs);
  double capacity = static_cast<double>(std::max(run.machine_cpus, 1)) * window.length();
  double ml_area = run_ml_area.value_or(running_area);

  nlohmann::json g;
  g["count"] = jobs.size();
  g["started"] = started;
  g["completed"] = response.size();
  g["mean_response"] = number_or_null(mean_of(response));
  g["median_response"] = number_or_null(median_of(response));
  g["mean_execution"] = number_or_null(mean_of(execution));
  g["median_execution"] = number_or_null(median_of(execution));
  g["mean_wait"] = number_or_null(mean_of(wait));
  g["makespan"] = own.length();
  g["cpu_seconds"] = cpu_seconds;
  g["cpu_utilisation"] =
      number_or_null(capacity > 0 ? std::optional(cpu_seconds * delivered_share / capacity) : std::nullopt);
  g["mean_ml"] = number_or_null(window.length() > 0 ? std::optional(ml_area / window.length()) : std::nullopt);
  g["normalized_throughput"] = number_or_null(normalized_throughput(jobs));
  const MixMetrics mix = mix_metrics(jobs);
  g["stp"] = number_or_null(mix.stp);
  g["antt"] = number_or_null(mix.antt);
  g["unfairness"] = number_or_null(mix.unfairness);
  g["mix_jobs"] = mix.jobs;
  // Eq. 3.1: the longest turnaround (end − start, stopped time included) of the group's completed jobs.
  g["turnaround"] = number_or_null(execution.empty() ? std::nullopt
                                                     : std::optional(*std::max_element(execution.begin(), execution.end())));
  return g;
}

std::string class_of(const JobRecord& j) {
  if (!j.app_class.empty()) return j.app_class;
  if (!j.app.empty()) return j.app;
  return "unknown";
}

}  // namespace

double JobRecord::mean_cpus() const {
  double area = held ? held->cpu_seconds : 0;
  double covered = held ? held->seconds : 0;
  for (const auto& s : allocation) {
    area += std::max(0, s.cpus) * held_seconds(s);
    covered += held_seconds(s);
  }
  if (covered <= 0) return requested;
  // Over the execution when it is known, so that time spent stopped (no segment) counts as 0 CPUs.
  double over = execution() > 0 ? execution() : covered;
  return area / over;
}

double JobRecord::cpu_seconds() const {
  if (held && held->seconds > 0) return held->cpu_seconds;
  double area = 0;
  for (const Held& h : held_intervals(*this)) area += h.cpus * (h.t1 - h.t0);
  return area;
}

std::vector<MlSample> derive_ml(const std::vector<JobRecord>& jobs) {
  // (time, Δrunning, Δqueued); a job that starts before its submit time is taken as submitted at its start.
  struct Change {
    double t;
    int running;
    int queued;
  };
  std::vector<Change> changes;
  for (const auto& j : jobs) {
    bool started = known(j.start);
    double submit = known(j.submit) ? j.submit : (started ? j.start : -1);
    if (submit < 0) continue;
    if (started) submit = std::min(submit, j.start);
    changes.push_back({submit, 0, +1});
    if (!started) continue;
    changes.push_back({j.start, +1, -1});
    if (known(j.end)) changes.push_back({std::max(j.end, j.start), -1, 0});
  }
  std::stable_sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) { return a.t < b.t; });
  std::vector<MlSample> ml;
  MlSample now;
  for (std::size_t i = 0; i < changes.size(); ++i) {
    now.running += changes[i].running;
    now.queued += changes[i].queued;
    // One sample per distinct time, after all of that instant's changes.
    if (i + 1 == changes.size() || changes[i + 1].t != changes[i].t) {
      now.t = changes[i].t;
      ml.push_back(now);
    }
  }
  return ml;
}

nlohmann::json summarize(const Run& run) {
  std::vector<const JobRecord*> all;
  std::map<std::string, std::vector<const JobRecord*>> by_class;
  for (const auto& j : run.jobs) {
    all.push_back(&j);
    by_class[class_of(j)].push_back(&j);
  }
  Window window = run_window(all);
  std::optional<double> ml_area;
  if (!run.ml.empty()) ml_area = integrate_running(run.ml, window);

  nlohmann::json s;
  s["format"] = "cosched-results";
  s["version"] = 1;
  s["name"] = run.name;
  s["mode"] = run.mode;
  s["policy"] = run.policy;
  s["params"] = run.params;
  s["machine_cpus"] = run.machine_cpus;
  s["workload"] = run.workload;
  s["time_scale"] = run.time_scale;
  if (run.unmanaged_jobs >= 0) s["unmanaged_jobs"] = run.unmanaged_jobs;
  if (run.skipped_lines > 0) s["skipped_lines"] = run.skipped_lines;
  s["window"] = {{"begin", window.begin}, {"end", window.end}};
  double held = 0;
  for (const JobRecord* j : all) held += j->cpu_seconds();
  auto delivered = run.delivered ? (run.delivered->oversubscribed ? std::optional(run.delivered->cpu_seconds) : std::nullopt)
                                 : delivered_cpu_seconds(all, std::max(run.machine_cpus, 1));
  double share = delivered && held > 0 ? *delivered / held : 1.0;
  s["overall"] = group_stats(all, run, window, ml_area, share);
  int max_ml = 0;
  for (const auto& m : run.ml.empty() ? derive_ml(run.jobs) : run.ml) max_ml = std::max(max_ml, m.running);
  s["overall"]["max_ml"] = max_ml;
  s["classes"] = nlohmann::json::object();
  for (const auto& [name, jobs] : by_class) s["classes"][name] = group_stats(jobs, run, window, std::nullopt, share);
  // DSS eq. 10: the mean of the benchmarks' (classes') eq. 11 values; the per-class values are in "classes".
  double sum = 0;
  int n = 0;
  for (const auto& [name, jobs] : by_class) {
    if (auto v = normalized_throughput(jobs)) {
      sum += *v;
      ++n;
    }
  }
  s["overall"]["normalized_throughput"] = n > 0 ? nlohmann::json(sum / n) : nlohmann::json(nullptr);
  return s;
}

}  // namespace cosched::results
