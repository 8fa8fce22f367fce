// Sensing: the daemon's side of the sensor layer (sensors/). An interval opens at the end of a quantum
// for every job that runs (after that quantum's decision) and is sampled at the start of the next quantum,
// before anything moves, unless the job was stopped, suspended or given another allocation in between: a
// sample describes one job running on one allocation next to one set of neighbours for one whole quantum.
// The jobs sampled together are that set (the counter-free estimate needs it). With the RM's 100 ms quantum
// and the bandwidth policies' 200 ms one, a job is sampled twice per policy quantum, as in Antonopoulos et
// al. §4 ("updated twice per scheduling quantum"). The same intervals carry the PMPI wrappers' byte counts
// to the network sensor (BW^N of MemBUS), and give each job's progress rate (sensors/rates.hpp) with the
// group partners it had all along.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>

#include "calibrate.hpp"
#include "cosched/log.hpp"
#include "cosched/rate.hpp"
#include "sensing.hpp"
#include "sensors/detect.hpp"

namespace cosched::rm {

Status Sensing::resolve_calibration(Config& cfg, const CpuSet& cpus) {
  if (!cfg.calibrate && cfg.calibration_file.empty()) {
    if (cfg.mem_bandwidth_given || cfg.thread_bandwidth_given) calibration_source_ = "options";
    return {};
  }
  sensors::Measured m;
  if (cfg.calibrate) {
    if (!cfg.synthetic_topology.empty()) {
      return make_error(Errc::invalid_argument, "--calibrate measures real CPUs: not with a modelled --topology");
    }
    COSCHED_INFO(sensor, "calibrating on CPUs {} ({} s per run, 9 runs)...", cpus.to_string(),
                 cfg.calibrate_seconds);
    CalibrateOptions o;
    o.cpus = cpus.to_vector();
    o.seconds = cfg.calibrate_seconds;
    auto r = calibrate_bandwidth(o);
    if (!r) return make_error(r.error().code, "--calibrate: " + r.error().message);
    m = *r;
    calibration_source_ = "measured at start";
    if (!cfg.calibration_file.empty()) {
      const auto stamp = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::system_clock::now().time_since_epoch()).count();
      const nlohmann::json extra = {{"cpus", cpus.to_string()}, {"seconds", cfg.calibrate_seconds},
                                    {"repeat", 3}, {"measured_at_epoch_s", stamp}, {"by", "cosched-rm --calibrate"}};
      std::ofstream out(cfg.calibration_file, std::ios::trunc);
      out << sensors::calibration_json(m, extra).dump(2) << "\n";
      if (!out) return make_error(Errc::io_error, "--calibrate: cannot write the calibration file " + cfg.calibration_file);
      calibration_source_ += ", saved to " + cfg.calibration_file;
    }
  } else {
    auto r = sensors::load_calibration(cfg.calibration_file);
    if (!r) return make_error(r.error().code, "--calibration: " + r.error().message);
    m = *r;
    calibration_source_ = "file " + cfg.calibration_file;
  }
  if (!cfg.thread_bandwidth_given) cfg.thread_bandwidth = m.thread_bytes_per_s;
  if (!cfg.mem_bandwidth_given) cfg.mem_bandwidth = m.machine_bytes_per_s;
  if (!cfg.contention_given && m.contention) cfg.contention = *m.contention;
  if (cfg.mem_bandwidth_given || cfg.thread_bandwidth_given || cfg.contention_given) {
    calibration_source_ += " (options override part of it)";
  }
  COSCHED_INFO(sensor, "calibration ({}): b = {}, B = {}, k = {:.2f}{}", calibration_source_,
               format_rate(cfg.thread_bandwidth), format_rate(cfg.mem_bandwidth), cfg.contention,
               m.contention || cfg.contention_given ? "" : " (default: two BBMAs showed no excess over B here)");
  return {};
}

nlohmann::json Sensing::status_json(const Config& cfg, const policy::Policy* policy) const {
  nlohmann::json s = sensors_.status_json();
  if (!s["calibration"].is_null()) s["calibration"]["source"] = calibration_source_;
  // How often a job is sampled: once per RM quantum it runs whole (sample_sensors), so a policy with a
  // longer quantum of its own sees that many samples per quantum of its own (Antonopoulos et al. §4: two).
  const double tick = cfg.quantum_ms / 1000.0;
  const double q = policy != nullptr ? policy->time_quantum_s().value_or(tick) : tick;
  s["sampling"] = {{"every_ms", cfg.quantum_ms},
                   {"quantum_ms", std::lround(q * 1000)},
                   {"samples_per_quantum", std::max(1L, std::lround(std::floor(q / tick + 1e-9)))}};
  return s;
}

Status Sensing::start(const Config& cfg) {
  sensors::Calibration cal;
  cal.machine_bytes_per_s = cfg.mem_bandwidth;
  cal.thread_bytes_per_s = cfg.thread_bandwidth;
  cal.contention = cfg.contention;
  sensors::SensorOptions opt;
  opt.sensor = cfg.sensor;
  opt.observe = cfg.also_sensor;
  opt.papi_event = cfg.papi_event;
  auto set = sensors::make_sensor_set(opt, cal);
  if (!set) return set.error();
  sensors_ = std::move(*set);
  auto rates = sensors::RateSensor::make(cfg.rate_sensor);
  if (!rates) return rates.error();
  rates_ = std::move(*rates);
  for (const auto& u : sensors_.unavailable()) COSCHED_INFO(sensor, "{}: unavailable: {}", u.name, u.why);
  for (const auto& o : sensors_.observers()) COSCHED_INFO(sensor, "{}: observed for comparison only", o);
  std::string chain;
  for (const auto& n : sensors_.chain()) chain += (chain.empty() ? "" : " → ") + n;
  COSCHED_INFO(sensor, "bandwidth sensor: {} (tried per job in the order {}){}", sensors_.backend(),
               chain.empty() ? "none" : chain,
               cfg.sensor == "auto" || cfg.sensor == "counter-free"
                   ? (cal.calibrated() ? "" : "; counter-free is uncalibrated (no --mem-bandwidth/--thread-bandwidth): "
                                              "slowdowns only, no rates")
                   : "");
  return {};
}

namespace {

// The bandwidth sensors' interval of one job from `m` (opened) to `t`; `log` throttles what a job can trigger.
sensors::Interval bandwidth_interval(policy::JobId id, const Job& j, const SensorMark& m, const ArenaSensors& c,
                                     double t, log::Throttle& log) {
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
    COSCHED_THROTTLED(log, sensor, warn, "job {}: reported bytes went back from {} to {}: ignored", id,
                      m.counters.bytes, c.bytes);
  }
  if (iv.reports_bytes) iv.bytes = static_cast<double>(c.bytes - m.counters.bytes);
  // The PMPI wrappers' counts (an MPI rank), monotonic as the job wrote them: BW^N for the network sensor.
  const ArenaProgress p = j.arena->read_progress();
  const std::uint64_t payload = p.net_bytes_out + p.net_bytes_in;
  // (A rank that only receives counts bytes in but no messages.)
  iv.counts_network = (p.net_messages > 0 || payload > 0) && payload >= m.net_bytes;
  if (iv.counts_network) iv.net_bytes = static_cast<double>(payload - m.net_bytes);
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
  return iv;
}

// The rate sensor's interval of the same job over the same time, its partners as the interval opened.
sensors::RateInterval rate_interval(const sensors::Interval& iv, const SensorMark& m, const ArenaSensors& c) {
  sensors::RateInterval ri;
  ri.id = iv.id;
  ri.seconds = iv.end - iv.start;
  ri.threads = iv.threads;
  ri.reports_work = c.reports_work && c.work >= m.counters.work;
  if (ri.reports_work) ri.work = static_cast<double>(c.work - m.counters.work);
  ri.has_loop = m.counters.clean_iterations > 0;
  ri.iteration_s = iv.iteration_s;
  ri.cpu_share = iv.iteration_s > 0 ? iv.cpu_share : 1.0;
  ri.regions = c.regions >= m.counters.regions ? static_cast<double>(c.regions - m.counters.regions) : 0.0;
  ri.with = m.group;
  return ri;
}

}  // namespace

void Sensing::sample(std::map<policy::JobId, Job>& jobs, double t) {
  std::vector<sensors::Interval> intervals;
  std::vector<sensors::RateInterval> rate_intervals;
  for (auto& [id, j] : jobs) {
    SensorMark& m = j.sensor_mark;
    if (!m.open) continue;
    m.open = false;
    if (!j.runnable || j.suspended || j.allocation != m.allocation || t <= m.at) continue;
    const ArenaSensors c = j.arena->read_sensors();
    intervals.push_back(bandwidth_interval(id, j, m, c, t, sensor_log_));
    rate_intervals.push_back(rate_interval(intervals.back(), m, c));
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
    Job& j = jobs.at(ri.id);
    j.rate.latest = std::move(*sample);
    j.rate.seq = ++rate_seq_;
  }
}

void Sensing::open(std::map<policy::JobId, Job>& jobs, double t) {
  for (auto& [id, j] : jobs) {
    if (j.sensor_mark.open || !j.runnable || j.suspended || j.allocation < 1) continue;
    const ArenaProgress p = j.arena->read_progress();
    // Groups name the policy's jobs: a rank's is the job of several it belongs to.
    auto partners = partners_.find(j.gang != 0 ? j.gang : j.id);
    j.sensor_mark = SensorMark{true, t, j.allocation, j.arena->read_sensors(), p.net_bytes_out + p.net_bytes_in,
                               partners != partners_.end() ? partners->second : std::vector<policy::JobId>{}};
    sensors_.open(id, t);
  }
}

}  // namespace cosched::rm
