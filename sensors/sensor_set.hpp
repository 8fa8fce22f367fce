// The chain of working backends and each job's moving window of samples: what the daemon and the simulator
// hold. Each sampling round every backend sees every interval; a job's sample comes from the first backend
// of the chain that gave it a rate (perf_event, papi, app-reported, counter-free, in that order, of those
// that work here), and its window restarts when that backend changes. Every backend's latest value is
// kept too, so that status can show the counter-free estimate next to the bytes a program reports; so is
// that of "observers", backends run on every job for comparison only (cosched-rm --also-sensor), whose
// rates never enter a window. The network sensor (network.hpp) keeps a second window per job: MPI payload.
//
// The windows are per process (a job id of the daemon's; an MPI rank is one). A job of several processes
// is their sum, sample by sample (sum_windows).
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
  SensorSet();  // no memory backend: every job's memory Bandwidth stays empty (the network sensor works)
  SensorSet(std::vector<std::unique_ptr<Backend>> chain, std::vector<Unavailable> unavailable, Calibration cal,
            std::vector<std::unique_ptr<Backend>> observers = {});

  // The backend `cosched-ctl status` names: the first of the chain that measures any job on its own
  // (app-reported needs the program's help, so it is named only when it is alone); "none" without any.
  [[nodiscard]] std::string backend() const;
  [[nodiscard]] const std::vector<Unavailable>& unavailable() const { return unavailable_; }
  [[nodiscard]] std::vector<std::string> chain() const;
  [[nodiscard]] std::vector<std::string> observers() const;

  // The daemon: a job was admitted / left. Backends that fail to attach are logged and skip the job.
  void attach(policy::JobId id, pid_t pid);
  void forget(policy::JobId id);
  // The daemon: an interval begins for the job now (Backend::open).
  void open(policy::JobId id, double now);

  // One round: intervals that ended together (the co-running set). Updates every job's window.
  void sample(const std::vector<Interval>& jobs);

  // What JobView::bandwidth gets: the job's window (empty if none); for a job of several processes, the sum
  // of theirs (sum_windows).
  [[nodiscard]] policy::Bandwidth bandwidth(policy::JobId id) const;
  [[nodiscard]] policy::Bandwidth bandwidth(const std::vector<policy::JobId>& processes) const;
  // What JobView::network gets: the window of MPI payload rates (source "pmpi"; empty for a process that is
  // no MPI rank), per process or summed over a job's processes.
  [[nodiscard]] policy::Bandwidth network(policy::JobId id) const;
  [[nodiscard]] policy::Bandwidth network(const std::vector<policy::JobId>& processes) const;
  // The latest rate each backend gave the job (bytes/s), for status and comparisons.
  [[nodiscard]] std::map<std::string, double> estimates(policy::JobId id) const;

  // `status --json`: the machine's {"backend", "chain", "unavailable", "unit", "window", "calibration"} and
  // each job's {"source", "bytes_per_s", "window_bytes_per_s", "samples", "slowdown", "estimates",
  // "network"} (null until its first sample).
  [[nodiscard]] nlohmann::json status_json() const;
  [[nodiscard]] nlohmann::json job_json(policy::JobId id) const;

 private:
  struct JobSamples {
    policy::Bandwidth window;
    policy::Bandwidth network;
    std::map<std::string, double> latest;  // backend → bytes/s
  };
  void sample_network(const std::vector<Interval>& jobs);
  std::vector<std::unique_ptr<Backend>> chain_;
  std::vector<std::unique_ptr<Backend>> observers_;
  std::unique_ptr<Backend> network_;
  std::vector<Unavailable> unavailable_;
  Calibration cal_;
  std::map<policy::JobId, JobSamples> jobs_;
  std::vector<Reading> scratch_;
};

// The windows of one job's processes as one window: at each instant every process with samples was sampled
// at (the daemon samples all processes of a round at one instant), the sum of their rates and of their
// threads; instants where one of them has no sample (it was stopped, moved or joined later) are dropped, so
// that every sample of the sum covers the same processes. Processes without any sample take no part (no
// reading is not a reading of 0). The latest Bandwidth::kWindow such instants are kept. source: theirs when
// they agree, else their names joined with '+'; slowdown: the largest (a job goes at its slowest process's
// pace; our choice).
policy::Bandwidth sum_windows(const std::vector<policy::Bandwidth>& parts);

}  // namespace cosched::sensors
