// App-reported memory traffic: the bytes a program adds with cosched_report_bytes() over the interval,
// divided by its length. Exact to the program's own accounting (our microbenchmarks count every line a
// sweep fetches and writes back: examples/microbench/). Jobs that never called the API get no reading, so
// the next backend of the chain (counter-free) measures them.
#pragma once

#include "sensor.hpp"

namespace cosched::sensors {

class AppReported final : public Backend {
 public:
  [[nodiscard]] std::string_view name() const override { return "app-reported"; }
  [[nodiscard]] bool serves_every_job() const override { return false; }
  void sample(const std::vector<Interval>& jobs, std::vector<Reading>& out) override;
};

}  // namespace cosched::sensors
