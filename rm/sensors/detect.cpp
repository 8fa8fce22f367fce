#include "detect.hpp"

#include "app_reported.hpp"
#include "counter_free.hpp"
#include "papi.hpp"
#include "perf_event.hpp"
#include "replay.hpp"

namespace cosched::sensors {

Result<SensorSet> make_sensor_set(const std::string& spec, const Calibration& cal) {
  std::vector<std::unique_ptr<Backend>> chain;
  std::vector<Unavailable> unavailable;
  if (spec == "auto" || spec == "perf_event") {
    auto b = PerfEvent::probe(PerfEvent::llc_misses());
    if (b) {
      chain.push_back(std::move(*b));
    } else if (spec == "perf_event") {
      return make_error(Errc::unsupported, "--sensor perf_event: " + b.error().message);
    } else {
      unavailable.push_back({"perf_event", b.error().message});
    }
  }
  if (spec == "auto" || spec == "papi") {
    auto b = Papi::probe(Papi::cache_misses());
    if (b) {
      chain.push_back(std::move(*b));
    } else if (spec == "papi") {
      return make_error(Errc::unsupported, "--sensor papi: " + b.error().message);
    } else {
      unavailable.push_back({"papi", b.error().message});
    }
  }
  if (spec == "auto" || spec == "app") chain.push_back(std::make_unique<AppReported>());
  if (spec == "auto" || spec == "counter-free") chain.push_back(std::make_unique<CounterFree>(cal));
  if (spec.rfind("replay:", 0) == 0) {
    auto r = Replay::load(spec.substr(7));
    if (!r) return r.error();
    chain.push_back(std::move(*r));
  }
  if (chain.empty() && spec != "none") {
    return make_error(Errc::invalid_argument, "--sensor '" + spec + "': expected one of " + kSensorSpecs);
  }
  return SensorSet(std::move(chain), std::move(unavailable), cal);
}

}  // namespace cosched::sensors
