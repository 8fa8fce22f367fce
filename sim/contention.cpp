// Memory contention in the simulator, and the sensors that measure it (docs/simulator.md, "Memory
// contention"). The forward model is the one the counter-free sensor inverts (sensors/contention_model.hpp):
// a job of n threads whose thread alone moves `bandwidth` bytes/s has memory fraction m = bandwidth / b; with
// the running jobs' demands summing past B each is slowed by s = 1 + k·m·e. Sensing mirrors
// rm/daemon/sensing.cpp: an interval opens at the end of each quantum tick for every running job and is
// sampled at the start of the next, unless the job was stopped or moved in between; the sensors get the same
// Interval a daemon builds, computed from the model instead of read from an arena.
#include <algorithm>
#include <cmath>
#include <map>

#include "sensors/app_reported.hpp"
#include "sensors/counter_free.hpp"
#include "sim/simulator.hpp"

namespace cosched::sim {

namespace {

double memory_fraction(const AppModel& app, const sensors::Calibration& c) {
  if (app.bandwidth <= 0 || c.thread_bytes_per_s <= 0) return 0;
  return std::min(app.bandwidth / c.thread_bytes_per_s, 1.0);
}

}  // namespace

sensors::SensorSet make_sensors(const std::string& spec, const sensors::Calibration& cal) {
  std::vector<std::unique_ptr<sensors::Backend>> chain;
  if (spec == "auto" || spec == "app") chain.push_back(std::make_unique<sensors::AppReported>());
  if (spec == "auto" || spec == "counter-free") chain.push_back(std::make_unique<sensors::CounterFree>(cal));
  return sensors::SensorSet(std::move(chain), {}, cal);
}

void Simulator::update_contention() {
  if (!contention_on_) return;
  std::vector<policy::JobId> ids;
  std::vector<sensors::Demand> demands;
  for (auto& [id, slot] : running_) {
    const RunningJob& j = *slot.job;
    const int team = j.started() ? j.team() : 0;
    if (team <= 0) continue;  // stopped, or not started: no traffic
    ids.push_back(id);
    demands.push_back({team, memory_fraction(*j.spec().app, config_.memory)});
  }
  std::vector<double> s = config_.memory.calibrated() ? sensors::model_slowdowns(demands, config_.memory)
                                                      : std::vector<double>(ids.size(), 1.0);
  if (smt_on_) {
    // Shared cores (docs/simulator.md, "SMT cores"): each CPU of a job is slowed by 1 + its sensitivity × the
    // intensities of the other running jobs with a CPU on that core; a job goes at its slowest thread's pace
    // (our choice: a parallel job waits for its slowest thread at every barrier).
    std::map<int, std::vector<std::size_t>> on_core;  // core → running jobs (indices into ids) with a CPU there
    for (std::size_t i = 0; i < ids.size(); ++i) {
      for (int cpu : running_.at(ids[i]).cpus.to_vector()) {
        auto& v = on_core[core_of_cpu_.count(cpu) != 0 ? core_of_cpu_.at(cpu) : cpu];
        if (std::find(v.begin(), v.end(), i) == v.end()) v.push_back(i);
      }
    }
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const AppModel& me = *running_.at(ids[i]).job->spec().app;
      double worst = 1;
      for (int cpu : running_.at(ids[i]).cpus.to_vector()) {
        double x = 0;
        for (std::size_t o : on_core[core_of_cpu_.count(cpu) != 0 ? core_of_cpu_.at(cpu) : cpu]) {
          if (o != i) x += running_.at(ids[o]).job->spec().app->smt_intensity;
        }
        worst = std::max(worst, 1 + me.smt_sensitivity * x);
      }
      s[i] *= worst;
    }
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    RunningJob& j = *running_.at(ids[i]).job;
    if (std::fabs(j.progress().slowdown() - s[i]) <= 1e-12) continue;
    j.set_slowdown(now_, s[i]);
    schedule(ids[i]);
  }
  // A stopped job keeps its slowdown until it runs again; it makes no progress meanwhile anyway.
}

void Simulator::sample_sensors() {
  if (!sensing_on_) return;
  std::vector<sensors::Interval> intervals;
  for (auto& [id, slot] : running_) {
    if (!slot.mark_open) continue;
    slot.mark_open = false;
    const policy::JobView* v = view_of(id);
    const RunningJob& j = *slot.job;
    if (v == nullptr || !v->runnable || v->allocation != slot.mark_allocation || now_ <= slot.mark_at ||
        j.team() <= 0) {
      continue;
    }
    const double work = j.progress().done_at(now_) - slot.mark_work;
    if (!(work > 0)) continue;
    const AppModel& app = *j.spec().app;
    sensors::Interval iv;
    iv.id = id;
    iv.start = slot.mark_at;
    iv.end = now_;
    iv.since_arrival = now_ - v->arrival;
    iv.threads = v->allocation;
    iv.team = j.team();
    // What the SelfAnalyzer would measure: the interval's mean iteration time (its iterations are clean:
    // no stop or team change inside an interval).
    if (app.iteration_s > 0) iv.iteration_s = (now_ - slot.mark_at) * app.iteration_s / work;
    // What the program would report: its alone traffic per one-CPU second of work, times the work done.
    if (app.bandwidth >= 0) {
      iv.reports_bytes = true;
      iv.bytes = work * app.bandwidth * iv.team / catalog::speedup(app.speedup, iv.team);
    }
    intervals.push_back(iv);
  }
  sensors_.sample(intervals);
  for (auto& v : snapshot_.jobs) v.bandwidth = sensors_.bandwidth(v.id);
  if (!rates_on_) return;
  // Progress rates (the daemon's app-work source): the model's work per second over the interval, with the
  // group partners that ran the whole interval too.
  auto sampled = [&](policy::JobId id) {
    return std::any_of(intervals.begin(), intervals.end(), [id](const sensors::Interval& iv) { return iv.id == id; });
  };
  for (const auto& iv : intervals) {
    Slot& slot = running_.at(iv.id);
    policy::JobView* v = view_of(iv.id);
    const double work = slot.job->progress().done_at(now_) - slot.mark_work;
    policy::RateSample r{now_, iv.length(), work / iv.length(), iv.threads, "model", {}};
    for (policy::JobId p : slot.mark_partners) {
      if (sampled(p)) r.with.push_back(p);
    }
    v->rate.latest = std::move(r);
    v->rate.seq = ++rate_seq_;
  }
}

void Simulator::open_sensor_intervals() {
  if (!sensing_on_) return;
  for (auto& [id, slot] : running_) {
    const policy::JobView* v = view_of(id);
    // The view already holds this instant's decision (the job itself follows at the instant's end).
    if (slot.mark_open || v == nullptr || !v->runnable || !slot.job->started() || v->allocation < 1) {
      continue;
    }
    slot.mark_open = true;
    slot.mark_at = now_;
    slot.mark_allocation = v->allocation;
    slot.mark_work = slot.job->progress().done_at(now_);
    slot.mark_partners.clear();
    for (const auto& g : groups_) {
      if (std::find(g.begin(), g.end(), id) == g.end()) continue;
      for (policy::JobId o : g) {
        if (o != id) slot.mark_partners.push_back(o);
      }
    }
  }
}

}  // namespace cosched::sim
