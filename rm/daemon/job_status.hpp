// What `cosched-ctl status` shows of one job, a room of the daemon: its allocation and CPUs, its state,
// what it reported of its teams and iterations, both speedup estimates and the one the policy uses, its
// sensors' latest figures. A function of the job and of what the caller knows besides, for unit tests.
#pragma once

#include <nlohmann/json.hpp>

#include "rm/job/job.hpp"
#include "sensors/sensor_set.hpp"

namespace cosched::rm {

struct JobStatusContext {
  double now = 0;                               // RM seconds
  bool baseline_waits = false;                  // the RM holds baselines back (alone, --baseline auto)
  const sensors::SensorSet* sensors = nullptr;  // the network rate and bandwidth window of the job
};

// The job's status object; the same keys for every job (null where it has nothing yet).
nlohmann::json job_json(const Job& j, const JobStatusContext& ctx);

}  // namespace cosched::rm
