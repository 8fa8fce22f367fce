// Sensing: the daemon's side of the sensor layer (rm/sensors/). An interval opens at the end of a quantum
// for every job that runs (after that quantum's decision) and is sampled at the start of the next quantum,
// before anything moves, unless the job was stopped, suspended or given another allocation in between: a
// sample describes one job running on one allocation next to one set of neighbours for one whole quantum.
// The jobs sampled together are that set (the counter-free estimate needs it). The same intervals give
// each job's progress rate (rm/sensors/rates.hpp), with the group partners it had all along. With the RM's 100 ms quantum
// and the bandwidth policies' 200 ms one, a job is sampled twice per policy quantum, as in Antonopoulos et
// al. §4 ("updated twice per scheduling quantum").
#include <algorithm>

#include "cosched/log.hpp"
#include "daemon.hpp"
#include "sensors/detect.hpp"

namespace cosched::rm {

Status Daemon::start_sensors() {
  sensors::Calibration cal;
  cal.machine_bytes_per_s = cfg_.mem_bandwidth;
  cal.thread_bytes_per_s = cfg_.thread_bandwidth;
  cal.contention = cfg_.contention;
  auto set = sensors::make_sensor_set(cfg_.sensor, cal);
  if (!set) return set.error();
  sensors_ = std::move(*set);
  auto rates = sensors::RateSensor::make(cfg_.rate_sensor);
  if (!rates) return rates.error();
  rates_ = std::move(*rates);
  for (const auto& u : sensors_.unavailable()) COSCHED_INFO(sensor, "{}: unavailable: {}", u.name, u.why);
  std::string chain;
  for (const auto& n : sensors_.chain()) chain += (chain.empty() ? "" : " → ") + n;
  COSCHED_INFO(sensor, "bandwidth sensor: {} (tried per job in the order {}){}", sensors_.backend(),
               chain.empty() ? "none" : chain,
               cfg_.sensor == "auto" || cfg_.sensor == "counter-free"
                   ? (cal.calibrated() ? "" : "; counter-free is uncalibrated (no --mem-bandwidth/--thread-bandwidth): "
                                              "slowdowns only, no rates")
                   : "");
  return {};
}

void Daemon::sample_sensors() {
  const double t = now();
  std::vector<sensors::Interval> intervals;
  std::vector<sensors::RateInterval> rate_intervals;
  for (auto& [id, j] : jobs_) {
    SensorMark& m = j.sensor_mark;
    if (!m.open) continue;
    m.open = false;
    if (!j.runnable || j.suspended || j.allocation != m.allocation || t <= m.at) continue;
    const ArenaSensors c = j.arena->read_sensors();
    sensors::Interval iv;
    iv.id = id;
    iv.pid = j.pid;
    iv.start = m.at;
    iv.end = t;
    iv.since_arrival = t - j.arrival;
    iv.threads = j.allocation;
    // The job writes these counters; a total that went backwards is nonsense, never a negative rate.
    iv.reports_bytes = c.reports_bytes && c.bytes >= m.counters.bytes;
    if (c.reports_bytes && c.bytes < m.counters.bytes) {
      COSCHED_THROTTLED(sensor_log_, sensor, warn, "job {}: reported bytes went back from {} to {}: ignored", id,
                        m.counters.bytes, c.bytes);
    }
    if (iv.reports_bytes) iv.bytes = static_cast<double>(c.bytes - m.counters.bytes);
    // Mean clean iteration time over the interval, when every sample in it had one team size, net of the
    // time its threads waited for a CPU: a neighbour that takes the CPU is not one that takes the memory
    // (on a shared machine the first dwarfs the second). Never below a tenth of the wall time, whatever a
    // job writes.
    const bool same_team = c.clean_team == m.counters.clean_team || m.counters.clean_iterations == 0;
    if (c.clean_team > 0 && same_team && c.clean_iterations > m.counters.clean_iterations &&
        c.clean_ns > m.counters.clean_ns) {
      const double wall = static_cast<double>(c.clean_ns - m.counters.clean_ns) * 1e-9;
      const double wait = c.clean_wait_ns >= m.counters.clean_wait_ns
                              ? static_cast<double>(c.clean_wait_ns - m.counters.clean_wait_ns) * 1e-9 / c.clean_team
                              : 0.0;
      const double net = std::max(wall - wait, 0.1 * wall);
      iv.iteration_s = net / static_cast<double>(c.clean_iterations - m.counters.clean_iterations);
      iv.team = c.clean_team;
      iv.cpu_share = net / wall;
    }
    intervals.push_back(iv);

    sensors::RateInterval ri;
    ri.id = id;
    ri.seconds = t - m.at;
    ri.threads = j.allocation;
    ri.reports_work = c.reports_work && c.work >= m.counters.work;
    if (ri.reports_work) ri.work = static_cast<double>(c.work - m.counters.work);
    ri.has_loop = m.counters.clean_iterations > 0;
    ri.iteration_s = iv.iteration_s;
    ri.cpu_share = iv.iteration_s > 0 ? iv.cpu_share : 1.0;
    ri.regions = c.regions >= m.counters.regions ? static_cast<double>(c.regions - m.counters.regions) : 0.0;
    ri.with = m.group;
    rate_intervals.push_back(std::move(ri));
  }
  sensors_.sample(intervals);
  // Progress rates: a partner counts only if it ran the whole interval too; without groups, every job that did.
  auto sampled = [&](policy::JobId id) {
    return std::any_of(rate_intervals.begin(), rate_intervals.end(), [id](const auto& r) { return r.id == id; });
  };
  for (auto& ri : rate_intervals) {
    if (grouping_) {
      ri.with.erase(std::remove_if(ri.with.begin(), ri.with.end(), [&](policy::JobId p) { return !sampled(p); }),
                    ri.with.end());
    } else {
      ri.with.clear();
      for (const auto& o : rate_intervals) {
        if (o.id != ri.id) ri.with.push_back(o.id);
      }
    }
    auto sample = rates_.sample(ri, t);
    if (!sample) continue;
    Job& j = jobs_.at(ri.id);
    j.rate.latest = std::move(*sample);
    j.rate.seq = ++rate_seq_;
  }
}

void Daemon::open_sensor_intervals() {
  const double t = now();
  for (auto& [id, j] : jobs_) {
    if (j.sensor_mark.open || !j.runnable || j.suspended || j.allocation < 1) continue;
    auto p = partners_.find(view_id(j));
    j.sensor_mark = SensorMark{true, t, j.allocation, j.arena->read_sensors(),
                               p != partners_.end() ? p->second : std::vector<policy::JobId>{}};
    sensors_.open(id, t);
  }
}

}  // namespace cosched::rm
