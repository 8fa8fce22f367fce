// The symbiotic policy's schedule search per quantum (docs/performance.md, "Co-runner matching"): for n jobs
// on n/2 SMT2 cores, LEMON's blossom over the complete graph of predicted pair costs
// (policies/coschedule/matching.hpp), and a whole symbiotic decide() with a learned matrix. The thesis
// reports about 0.1 ms per quantum for its scheduler (§6.5) with 12-40 processes; the per-quantum budget here
// is the 100 ms quantum.
//
//   cmake --build --preset release --target bench_matching
//   build/release/bench/policies/bench_matching --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <random>

#include "policies/coschedule/interference.hpp"
#include "policies/coschedule/matching.hpp"
#include "policies/registry.hpp"

namespace {

using namespace cosched::policy;

// A learned matrix over n jobs: every pair seen, slowdowns in [1, 2].
InterferenceMatrix learned(int n) {
  InterferenceMatrix m;
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> d(1.0, 2.0);
  for (int i = 1; i <= n; ++i) {
    for (int j = 1; j <= n; ++j) {
      if (i != j) m.add(i, {j}, d(rng), 1.0);
    }
  }
  m.set_now(1.0);
  return m;
}

void BM_Blossom(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const InterferenceMatrix m = learned(n);
  const GroupCost cost = [&](const std::vector<int>& g) {
    std::vector<JobId> ids;
    for (int i : g) ids.push_back(i + 1);
    double c = 0;
    for (JobId id : ids) c += m.predict_group(id, ids);
    return c;
  };
  for (auto _ : state) benchmark::DoNotOptimize(min_cost_groups(n, {2, n / 2, 2}, cost));
  state.SetLabel(std::to_string(n) + " jobs, " + std::to_string(n / 2) + " SMT2 cores");
}
BENCHMARK(BM_Blossom)->RangeMultiplier(2)->Range(16, 1024)->Unit(benchmark::kMillisecond);

void BM_SymbioticDecide(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Snapshot s;
  s.machine = Machine{n, n / 2, 1, 2};
  auto made = make_policy("symbiotic", s.machine, {{"explore", "0"}});  // the registry's symbiotic preset
  Policy& p = **made;
  s.quantum = 0.1;
  for (int i = 1; i <= n; ++i) {
    JobView j;
    j.id = i;
    j.request = 1;
    s.jobs.push_back(j);
  }
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> d(50, 100);
  std::uint64_t seq = 0;
  double now = 0;
  // Warm up: rates alone and partners learned through the policy's own quanta.
  auto tick = [&] {
    now += 0.1;
    for (auto& j : s.jobs) {
      j.rate.latest = RateSample{now, 0.1, d(rng), 1, "model", {j.id == n ? 1 : j.id + 1}};
      j.rate.seq = ++seq;
    }
    s.now = now;
    s.event = Event::quantum;
    return p.decide(s);
  };
  for (int q = 0; q < 20; ++q) tick();
  for (auto _ : state) benchmark::DoNotOptimize(tick());
  state.SetLabel(std::to_string(n) + " jobs, " + std::to_string(n / 2) + " SMT2 cores");
}
BENCHMARK(BM_SymbioticDecide)->RangeMultiplier(2)->Range(16, 1024)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
