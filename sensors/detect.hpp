// Which sensors work on this machine: the chain cosched-rm --sensor builds (docs/usage.md).
//
//   auto          perf_event, papi, app-reported, counter-free: each PMU backend is probed and, when it
//                 does not work, listed with the reason (SensorSet::unavailable); app-reported and
//                 counter-free always join (they need no hardware)
//   perf_event, papi, app, counter-free
//                 that backend alone; a PMU backend that does not work here is an error
//   replay:FILE   rates from FILE (replay.hpp) alone
//   none          no sensor: bandwidth-aware policies fall back to gang order
//
// --also-sensor NAME (any of those but auto and none) runs a backend on every job for comparison only:
// its rate is shown in status next to the one in use, never given to a policy (SensorSet's observers).
#pragma once

#include <string>
#include <vector>

#include "sensor_set.hpp"

namespace cosched::sensors {

struct SensorOptions {
  std::string sensor = "auto";      // --sensor
  std::vector<std::string> observe; // --also-sensor, in order
  std::string papi_event;           // --papi-event: tried before PAPI's presets; empty: presets only
};

Result<SensorSet> make_sensor_set(const SensorOptions& o, const Calibration& cal);

// The accepted spellings, for --help and errors.
inline constexpr const char* kSensorSpecs = "auto, perf_event, papi, app, counter-free, replay:FILE, none";

}  // namespace cosched::sensors
