// Fuzz target for the RM's reader of a job's arena: whatever bytes a job writes into its JobBlock (the RM
// trusts nothing a job writes), ArenaHost::read_report and read_progress must return values a policy can
// use, or say which field is out of range. Properties beyond "no crash, no sanitizer report":
//  - a report marked valid passes check_report, and all its numbers are finite;
//  - a present but invalid report names the field;
//  - every progress counter is clamped to its documented range.
#include <sys/mman.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "cosched/protocol.hpp"
#include "rm/job/arena_host.hpp"
#include "rm/job/report_check.hpp"

namespace rm = cosched::rm;
namespace proto = cosched::proto;

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::fprintf(stderr, "fuzz_arena_report: property failed: %s\n", #cond);   \
      std::abort();                                                              \
    }                                                                            \
  } while (0)

namespace {

// One arena for the whole run (a memfd and a mapping per input would only slow the fuzzer down).
struct Fixture {
  std::unique_ptr<rm::ArenaHost> host;
  unsigned char* job = nullptr;  // the JobBlock, as the job maps it
  Fixture() {
    auto h = rm::ArenaHost::create(1);
    CHECK(h.ok());
    host = std::move(*h);
    void* p = ::mmap(nullptr, proto::kArenaSize, PROT_READ | PROT_WRITE, MAP_SHARED, host->fd(), 0);
    CHECK(p != MAP_FAILED);
    job = static_cast<unsigned char*>(p) + offsetof(proto::Arena, job);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Fixture fx;
  std::memset(fx.job, 0, sizeof(proto::JobBlock));
  std::memcpy(fx.job, data, std::min(size, sizeof(proto::JobBlock)));

  const rm::ArenaReport r = fx.host->read_report();
  if (r.valid) {
    CHECK(r.present);
    CHECK(rm::check_report(r.perf).empty());
    CHECK(std::isfinite(r.perf.speedup) && std::isfinite(r.perf.efficiency));
    CHECK(std::isfinite(r.perf.iteration_s) && std::isfinite(r.perf.baseline_s));
    CHECK(r.perf.cpus >= 1 && r.perf.cpus <= proto::kMaxCpus);
  } else if (r.present) {
    CHECK(!r.invalid_field.empty());
  }

  const rm::ArenaProgress p = fx.host->read_progress();
  CHECK(p.last_team >= 0 && p.last_team <= proto::kMaxCpus);
  CHECK(static_cast<std::uint32_t>(p.team_mode) <= proto::kTeamModeMax);
  CHECK(static_cast<std::uint32_t>(p.restart_reason) <= proto::kMeasureRestartMax);
  CHECK(static_cast<std::uint32_t>(p.no_speedup) <= proto::kNoSpeedupMax);
  CHECK(p.cpu_wait == -1 || (p.cpu_wait >= 0 && p.cpu_wait <= 64));
  CHECK(p.period >= 0 && p.period <= (1 << 20));
  CHECK(static_cast<std::uint32_t>(p.phase) <= static_cast<std::uint32_t>(proto::Phase::measuring));
  return 0;
}
