// The daemon's sensing room: the bandwidth sensors and the progress-rate sensor, fed with one interval per
// job per quantum (sensing.cpp says which intervals count), the calibration that gives the counter-free
// sensor its constants, and the co-schedule groups a sample names as the job's partners.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config.hpp"
#include "cosched/cpuset.hpp"
#include "cosched/error.hpp"
#include "cosched/log.hpp"
#include "policies/policy.hpp"
#include "rm/job/job.hpp"
#include "sensors/rates.hpp"
#include "sensors/sensor_set.hpp"

namespace cosched::rm {

class Sensing {
 public:
  // --calibrate / --calibration FILE fill what the options did not give (explicit options win); `cpus` are
  // the CPUs a calibration run measures.
  Status resolve_calibration(Config& cfg, const CpuSet& cpus);
  // The sensor chain and the rate sensor the options ask for; an unavailable backend is logged, not an error.
  Status start(const Config& cfg);
  // For status: the sensors, where the calibration came from, and how often a job is sampled under `policy`.
  [[nodiscard]] nlohmann::json status_json(const Config& cfg, const policy::Policy* policy) const;

  // At a quantum's start, before anything moves: closes every open interval and samples those that count.
  void sample(std::map<policy::JobId, Job>& jobs, double t);
  // At a quantum's end, after its decision: opens an interval for every job that runs.
  void open(std::map<policy::JobId, Job>& jobs, double t);
  // The latest applied Decision::co_schedule: each job's group partners (by the policy's ids), and whether
  // the policy groups jobs at all (without groups a sample's partners are everyone who ran).
  void set_groups(std::map<policy::JobId, std::vector<policy::JobId>> partners, bool grouping) {
    partners_ = std::move(partners);
    grouping_ = grouping;
  }

  sensors::SensorSet& sensors() { return sensors_; }
  [[nodiscard]] const sensors::SensorSet& sensors() const { return sensors_; }
  [[nodiscard]] const sensors::RateSensor& rates() const { return rates_; }

 private:
  sensors::SensorSet sensors_;
  sensors::RateSensor rates_;
  std::uint64_t rate_seq_ = 0;  // numbers every progress-rate sample (policy::Rate::seq)
  std::map<policy::JobId, std::vector<policy::JobId>> partners_;
  bool grouping_ = false;
  std::string calibration_source_;  // where the counter-free constants came from, for status
  log::Throttle sensor_log_{5, 1.0};  // lines a job can trigger at will are throttled
};

}  // namespace cosched::rm
