// The chain of working backends and each job's moving window of samples: what the daemon and the simulator
// hold. Each sampling round every backend sees every interval; a job's sample comes from the first backend
// of the chain that gave it a rate (perf_event, papi, app-reported, counter-free, in that order, of those
// that work here), and its window restarts when that backend changes. Every backend's latest value is
// kept too, so that status can show the counter-free estimate next to the bytes a program reports.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "contention_model.hpp"
#include "sensor.hpp"

namespace cosched::sensors {

// A backend that was tried and does not work here, and why (one sentence, logged once at start).
struct Unavailable {
  std::string name;
  std::string why;
};

class SensorSet {
 public:
  SensorSet() = default;  // no backend: every job's Bandwidth stays empty
  SensorSet(std::vector<std::unique_ptr<Backend>> chain, std::vector<Unavailable> unavailable, Calibration cal);

  // The backend `cosched-ctl status` names: the first of the chain that measures any job on its own
  // (app-reported needs the program's help, so it is named only when it is alone); "none" without any.
  [[nodiscard]] std::string backend() const;
  [[nodiscard]] const std::vector<Unavailable>& unavailable() const { return unavailable_; }
  [[nodiscard]] std::vector<std::string> chain() const;

  // The daemon: a job was admitted / left. Backends that fail to attach are logged and skip the job.
  void attach(policy::JobId id, pid_t pid);
  void forget(policy::JobId id);
  // The daemon: an interval begins for the job now (Backend::open).
  void open(policy::JobId id, double now);

  // One round: intervals that ended together (the co-running set). Updates every job's window.
  void sample(const std::vector<Interval>& jobs);

  // What JobView::bandwidth gets: the job's window (empty if none).
  [[nodiscard]] policy::Bandwidth bandwidth(policy::JobId id) const;
  // The latest rate each backend gave the job (bytes/s), for status and comparisons.
  [[nodiscard]] std::map<std::string, double> estimates(policy::JobId id) const;

  // `status --json`: the machine's {"backend", "chain", "unavailable", "unit", "window", "calibration"} and
  // each job's {"source", "bytes_per_s", "window_bytes_per_s", "samples", "slowdown", "estimates"} (null
  // until its first sample).
  [[nodiscard]] nlohmann::json status_json() const;
  [[nodiscard]] nlohmann::json job_json(policy::JobId id) const;

 private:
  struct JobSamples {
    policy::Bandwidth window;
    std::map<std::string, double> latest;  // backend → bytes/s
  };
  std::vector<std::unique_ptr<Backend>> chain_;
  std::vector<Unavailable> unavailable_;
  Calibration cal_;
  std::map<policy::JobId, JobSamples> jobs_;
  std::vector<Reading> scratch_;
};

}  // namespace cosched::sensors
