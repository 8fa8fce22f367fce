#include "detect.hpp"

#include "app_reported.hpp"
#include "counter_free.hpp"
#include "papi.hpp"
#include "perf_event.hpp"
#include "replay.hpp"

namespace cosched::sensors {

namespace {

// One backend by its --sensor name, or why it cannot be had here.
Result<std::unique_ptr<Backend>> make_backend(const std::string& name, const Calibration& cal,
                                              const PapiSpec& papi) {
  if (name == "perf_event") {
    auto b = PerfEvent::probe(PerfEvent::llc_misses());
    if (!b) return b.error();
    return std::unique_ptr<Backend>(std::move(*b));
  }
  if (name == "papi") {
    auto b = Papi::probe(papi);
    if (!b) return b.error();
    return std::unique_ptr<Backend>(std::move(*b));
  }
  if (name == "app") return std::unique_ptr<Backend>(std::make_unique<AppReported>());
  if (name == "counter-free") return std::unique_ptr<Backend>(std::make_unique<CounterFree>(cal));
  if (name.rfind("replay:", 0) == 0) {
    auto r = Replay::load(name.substr(7));
    if (!r) return r.error();
    return std::unique_ptr<Backend>(std::move(*r));
  }
  return make_error(Errc::invalid_argument, "expected one of " + std::string(kSensorSpecs));
}

}  // namespace

Result<SensorSet> make_sensor_set(const SensorOptions& o, const Calibration& cal) {
  const std::string& spec = o.sensor;
  const PapiSpec papi = Papi::cache_misses(o.papi_event);
  std::vector<std::unique_ptr<Backend>> chain;
  std::vector<Unavailable> unavailable;
  if (spec == "auto") {
    for (const char* pmu : {"perf_event", "papi"}) {
      auto b = make_backend(pmu, cal, papi);
      if (b) chain.push_back(std::move(*b));
      else unavailable.push_back({pmu, b.error().message});
    }
    chain.push_back(std::make_unique<AppReported>());
    chain.push_back(std::make_unique<CounterFree>(cal));
  } else if (spec != "none") {
    auto b = make_backend(spec, cal, papi);
    if (!b) return make_error(b.error().code, "--sensor " + spec + ": " + b.error().message);
    chain.push_back(std::move(*b));
  }
  std::vector<std::unique_ptr<Backend>> observers;
  for (const auto& name : o.observe) {
    if (name == "auto" || name == "none") {
      return make_error(Errc::invalid_argument, "--also-sensor " + name + ": name one backend (" +
                                                    std::string(kSensorSpecs) + " but auto and none)");
    }
    auto b = make_backend(name, cal, papi);
    if (!b) return make_error(b.error().code, "--also-sensor " + name + ": " + b.error().message);
    observers.push_back(std::move(*b));
  }
  return SensorSet(std::move(chain), std::move(unavailable), cal, std::move(observers));
}

}  // namespace cosched::sensors
