#include "efficiency_sampler.hpp"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "constructs.hpp"
#include "cpu_wait.hpp"
#include "selfanalyzer/efficiency_meter.hpp"
#include "tool_state.hpp"
#include "tool_thread.hpp"
#include "work_state.hpp"

namespace cosched::rt {
namespace {
namespace sampling {  // named: the unity build merges every file's anonymous namespace

// Our choice: a job that ran this long with a team and showed no period in either sequence has none.
constexpr std::uint64_t kStructureNoneNs = 2'000'000'000ULL;

std::uint64_t now_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

// xorshift64: the jitter needs no quality, only no fixed phase.
std::uint64_t next_random(std::uint64_t& state) noexcept {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

struct Sampler {
  proto::Arena* arena = nullptr;
  long tick_ns = 4'000'000;
  sa::EfficiencyMeter meter{sa::EfficiencyConfig{}};
  std::uint32_t seen_stops = 0;
  std::uint64_t seen_generation = 0;
  std::uint64_t published_seq = 0;
  proto::Structure structure = proto::Structure::unknown;
  proto::EfficiencyPending pending = proto::EfficiencyPending::no_team;
  int period = 0;
  std::uint64_t team_since_ns = 0;  // first sample with a team (0: none yet)
  std::uint64_t ticks = 0;
};

// How the program repeats: its regions' period first (what the SelfAnalyzer's baseline check measures),
// then one inside a long region; none once it ran kStructureNoneNs with a team and showed neither.
void follow_structure(Sampler& s, std::uint64_t t_ns) noexcept {
  const auto& job = s.arena->job;
  const auto phase = static_cast<proto::Phase>(job.phase.load(std::memory_order_relaxed));
  const int region_period = job.period.load(std::memory_order_relaxed);
  const int construct_period = g_constructs.period.load(std::memory_order_relaxed);
  if (region_period > 0 && (phase == proto::Phase::baseline || phase == proto::Phase::measuring)) {
    s.structure = proto::Structure::regions;
    s.period = region_period;
  } else if (construct_period > 0) {
    s.structure = proto::Structure::constructs;
    s.period = construct_period;
  } else {
    s.period = 0;
    const bool long_enough = s.team_since_ns != 0 && t_ns - s.team_since_ns >= kStructureNoneNs;
    s.structure = long_enough ? proto::Structure::none : proto::Structure::unknown;
  }
}

void publish(Sampler& s) noexcept {
  auto& b = s.arena->efficiency;
  b.ticks.store(s.ticks, std::memory_order_relaxed);
  b.construct_iterations.store(g_constructs.iterations.load(std::memory_order_relaxed), std::memory_order_relaxed);
  const sa::EfficiencyEstimate& e = s.meter.estimate();
  const auto pending = s.meter.pending();
  const auto structure = static_cast<std::uint32_t>(s.structure);
  if (e.seq == s.published_seq && pending == s.pending && structure == b.structure.load(std::memory_order_relaxed) &&
      s.period == b.period.load(std::memory_order_relaxed)) {
    return;
  }
  s.pending = pending;
  const std::uint32_t q = b.seq.load(std::memory_order_relaxed);
  b.seq.store(q + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  b.structure.store(structure, std::memory_order_relaxed);
  b.period.store(s.period, std::memory_order_relaxed);
  b.pending.store(static_cast<std::uint32_t>(pending), std::memory_order_relaxed);
  if (e.seq != s.published_seq) {
    b.efficiency.store(e.efficiency, std::memory_order_relaxed);
    b.std_error.store(e.std_error, std::memory_order_relaxed);
    b.cpu_wait.store(e.cpu_wait, std::memory_order_relaxed);
    b.window_s.store(e.window_s, std::memory_order_relaxed);
    b.cpus.store(e.cpus, std::memory_order_relaxed);
    b.intervals.store(e.intervals, std::memory_order_relaxed);
    b.reports.store(e.seq, std::memory_order_relaxed);
    s.published_seq = e.seq;
  }
  b.seq.store(q + 2, std::memory_order_release);
}

void sample(Sampler& s) noexcept {
  const std::uint64_t t = now_ns();
  ++s.ticks;
  const auto& rm = s.arena->rm;
  const std::uint32_t stops = rm.stops.load(std::memory_order_relaxed);
  const std::uint64_t generation = rm.generation.load(std::memory_order_relaxed);
  if (stops != s.seen_stops || generation != s.seen_generation) {
    s.seen_stops = stops;
    s.seen_generation = generation;
    s.meter.perturb();  // the job was stopped, or its CPUs moved, during this interval
  }
  const int team = s.arena->job.last_team.load(std::memory_order_relaxed);
  const int granted = std::max(granted_team(), 1);
  const int cpus = team > 0 ? std::min(team, granted) : 0;
  if (cpus > 0 && s.team_since_ns == 0) s.team_since_ns = t;
  follow_structure(s, t);
  const std::uint64_t iterations = s.arena->job.iterations.load(std::memory_order_relaxed) +
                                   g_constructs.iterations.load(std::memory_order_relaxed);
  const bool periodic = s.structure == proto::Structure::regions || s.structure == proto::Structure::constructs;
  // The threads' working time is on the coarse clock (work_state.hpp): the interval's length too.
  const std::uint64_t coarse = coarse_now_ns();
  if (s.meter.tick(coarse, work_state_busy_ns(coarse), cpus, iterations, periodic)) {
    s.meter.close_interval(cpu_wait_ns());
  }
  publish(s);
}

void* sampler_main(void* arg) {
  sigset_t all;  // never let a signal meant for the program land here
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  work_state_exclude_self();
  Sampler& s = *static_cast<Sampler*>(arg);
  std::uint64_t rng = now_ns() | 1U;
  for (;;) {
    // Once the estimate is at the CPUs the job holds, a slower tick keeps it current at a quarter of the cost
    // (our choice: each wake-up costs about 20 us of CPU on the 2-vCPU guest, docs/performance.md); a change
    // of CPUs, or of load, brings the fast tick back until the new estimate stands. The tick only decides
    // where intervals end: what is measured is the threads' working time, which they keep themselves.
    const long tick = s.meter.pending() == proto::EfficiencyPending::none ? 4 * s.tick_ns : s.tick_ns;
    const long spread = tick / 4;
    const long ns = tick + static_cast<long>(next_random(rng) % static_cast<std::uint64_t>(2 * spread + 1)) - spread;
    const timespec nap{ns / 1'000'000'000L, ns % 1'000'000'000L};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, nullptr);
    sample(s);
  }
  return nullptr;
}

}  // namespace sampling
}  // namespace

void efficiency_sampler_start(proto::Arena* arena, int tick_ms) noexcept {
  static std::atomic<bool> started{false};
  if (arena == nullptr || tick_ms <= 0 || started.exchange(true)) return;
  using namespace sampling;
  static Sampler s;
  s.arena = arena;
  s.tick_ns = static_cast<long>(tick_ms) * 1'000'000L;
  s.seen_stops = arena->rm.stops.load(std::memory_order_relaxed);
  s.seen_generation = arena->rm.generation.load(std::memory_order_relaxed);
  start_tool_thread(sampler_main, &s, 64 * 1024, "cosched-sampler");
}

}  // namespace cosched::rt
