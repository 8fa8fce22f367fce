// The PAPI backend: PAPI_L3_TCM (total L3 misses; else PAPI_L2_TCM) in every thread of the job through
// PAPI_attach, times the cache-line size; or, instead of those presets, the one event the operator names
// (cosched-rm --papi-event: a preset, or a native event of the CPU's PMU such as an uncore memory-read
// count), each count taken as one cache line moved. Tried after perf_event: PAPI's perf_event component sits on the
// same kernel interface, but maps its presets to native events through libpfm4, which knows CPUs the
// kernel's generic events do not. Built only where libpapi is found (COSCHED_HAVE_PAPI).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "per_thread.hpp"

namespace cosched::sensors {

struct PapiSpec {
  std::vector<std::string> events;  // tried in order; the first this machine counts is used
  double bytes_per_count = 64;
};

class Papi final : public PerThreadCounting {
 public:
  // PAPI_L3_TCM, else PAPI_L2_TCM, × the L3 line size; or `event` alone (× the line size) when not empty.
  static PapiSpec cache_misses(const std::string& event = {});
  // Initialises PAPI and finds the first event of `spec` this machine counts (created, attached to the
  // calling thread and started once); Errc::unsupported with one sentence saying why not.
  static Result<std::unique_ptr<Papi>> probe(const PapiSpec& spec);
  ~Papi() override;

  [[nodiscard]] std::string_view name() const override { return "papi"; }
  [[nodiscard]] const std::string& event() const { return event_; }

 private:
  Papi(int code, std::string event, int component, double bytes_per_count)
      : PerThreadCounting(bytes_per_count), code_(code), event_(std::move(event)), component_(component) {}
  Result<long> start_thread(pid_t tid) override;
  std::optional<std::uint64_t> read_thread(long handle) override;
  void stop_thread(long handle) override;
  int code_;
  std::string event_;
  int component_;
};

}  // namespace cosched::sensors
