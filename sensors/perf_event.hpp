// The perf_event backend: a hardware counter of last-level-cache misses in every thread of the job
// (perf_event_open per thread, user space only), times the cache-line size: the bytes the job's threads
// brought in from memory. Needs a PMU the kernel exposes; on a VM without one (this CI) probe() says so.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "per_thread.hpp"

namespace cosched::sensors {

struct PerfEventSpec {
  std::uint32_t type = 0;      // perf_event_attr.type (PERF_TYPE_HARDWARE, ...)
  std::uint64_t config = 0;    // perf_event_attr.config
  double bytes_per_count = 64; // a cache line
  std::string label;           // for messages: "PERF_COUNT_HW_CACHE_MISSES"
};

class PerfEvent final : public PerThreadCounting {
 public:
  // PERF_COUNT_HW_CACHE_MISSES (the kernel's generic last-level-cache misses) × the L3 line size.
  static PerfEventSpec llc_misses();
  // Opens `spec` on the calling thread to see whether this machine counts it; Errc::unsupported with one
  // sentence saying why not (no PMU: ENOENT/EOPNOTSUPP; not permitted: perf_event_paranoid).
  static Result<std::unique_ptr<PerfEvent>> probe(const PerfEventSpec& spec);
  ~PerfEvent() override { stop_all(); }

  [[nodiscard]] std::string_view name() const override { return "perf_event"; }

 private:
  explicit PerfEvent(const PerfEventSpec& spec) : PerThreadCounting(spec.bytes_per_count), spec_(spec) {}
  Result<long> start_thread(pid_t tid) override;
  std::optional<std::uint64_t> read_thread(long handle) override;
  void stop_thread(long handle) override;
  PerfEventSpec spec_;
};

}  // namespace cosched::sensors
