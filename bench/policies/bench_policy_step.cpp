// One decide() for 1,000 jobs on 1,024 CPUs, per policy. Goal: well under 1 ms, so the daemon can run the
// policy on every event and the simulator can run thousands of them per simulated second.
//
//   ninja -C build-pol bench_policy_step
//   build-pol/bench/policies/bench_policy_step --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <memory>

#include "policies/space/equal_efficiency.hpp"
#include "policies/registry.hpp"

namespace {

using namespace cosched::policy;

constexpr int kCpus = 1024;
constexpr int kJobs = 1000;

// A steady state: every job admitted, holding the allocation `policy` gave it, and having reported once at
// that allocation with an Amdahl-shaped efficiency (f between 0.5 and 1).
Snapshot steady_state(Policy& policy) {
  Snapshot s;
  s.machine = Machine{kCpus, kCpus, 1, 1};
  for (int i = 0; i < kJobs; ++i) {
    JobView j;
    j.id = i + 1;
    j.request = 1 + (i * 37) % 64;
    j.arrival = i;
    s.jobs.push_back(j);
    s.event = Event::arrival;
    s.subject = j.id;
    const Decision d = policy.decide(s);
    for (std::size_t k = 0; k < s.jobs.size(); ++k) s.jobs[k].allocation = d.jobs[k].cpus;
  }
  // Let the policy react to the reports a few times so the snapshot is close to its fixed point (as in a
  // long-running daemon), then leave one consistent report per job.
  for (int round = 0; round < 4; ++round) {
    for (auto& j : s.jobs) {
      const double f = 0.5 + 0.5 * static_cast<double>((j.id * 13) % 100) / 100.0;
      j.perf.valid = true;
      j.perf.amdahl_f = f;
      j.perf.cpus = j.allocation;
      j.perf.efficiency = amdahl_efficiency(f, j.allocation);
      j.perf.speedup = j.perf.efficiency * j.allocation;
      j.perf.iteration_s = 1.0 / j.perf.speedup;
      ++j.perf.seq;
    }
    if (round == 3) break;
    s.event = Event::report;
    const Decision d = policy.decide(s);
    for (std::size_t k = 0; k < s.jobs.size(); ++k) s.jobs[k].allocation = d.jobs[k].cpus;
  }
  return s;
}

std::unique_ptr<Policy> make(const char* name) {
  auto p = make_policy(name, Machine{kCpus, kCpus, 1, 1});
  return std::move(*p);
}

// The policies that recompute everything on each event: one report event is representative.
void BM_Stateless(benchmark::State& state, const char* name) {
  auto policy = make(name);
  Snapshot s = steady_state(*policy);
  s.event = Event::report;
  s.subject = 1;
  for (auto _ : state) benchmark::DoNotOptimize(policy->decide(s));
  state.SetLabel(name);
}
BENCHMARK_CAPTURE(BM_Stateless, equip, "equip")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Stateless, equal_eff, "equal_eff")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Stateless, dss, "dss")->Unit(benchmark::kMicrosecond);

// PDPA, the usual case: one job publishes a new report.
void BM_PdpaOneReport(benchmark::State& state) {
  auto policy = make("pdpa");
  Snapshot s = steady_state(*policy);
  s.event = Event::report;
  std::size_t next = 0;
  for (auto _ : state) {
    auto& j = s.jobs[next];
    ++j.perf.seq;
    s.subject = j.id;
    benchmark::DoNotOptimize(policy->decide(s));
    next = (next + 1) % s.jobs.size();
  }
}
BENCHMARK(BM_PdpaOneReport)->Unit(benchmark::kMicrosecond);

// PDPA, the worst case: every job has a new report in the same call (a batched or restarted daemon).
void BM_PdpaAllReport(benchmark::State& state) {
  auto policy = make("pdpa");
  Snapshot s = steady_state(*policy);
  s.event = Event::report;
  s.subject = 1;
  for (auto _ : state) {
    state.PauseTiming();
    for (auto& j : s.jobs) ++j.perf.seq;
    state.ResumeTiming();
    benchmark::DoNotOptimize(policy->decide(s));
  }
}
BENCHMARK(BM_PdpaAllReport)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
