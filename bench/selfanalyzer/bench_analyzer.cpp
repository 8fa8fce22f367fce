// Cost of Analyzer::on_region per outermost region event, in steady state, for loops of period 3, 20
// and 64 and for a stream without period (Config defaults: max_period 1024). Also the whole per-region path the
// OMPT tool runs (team_for + on_region + report_seq), and the non-periodic cost against max_period.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "selfanalyzer/analyzer.hpp"

namespace {

using cosched::sa::Analyzer;
using cosched::sa::Config;

constexpr std::size_t kStreamLength = 1 << 14;  // cycled; a multiple of every period used below
constexpr std::uint64_t kRegionNs = 20'000;     // 20 µs per region: a plausible fine-grained code

// period > 0: a loop of `period` distinct regions; period == 0: random ids (the 16384-event cycle is far
// beyond max_period, so the detector sees no period).
std::vector<std::uint64_t> make_stream(int period) {
  std::vector<std::uint64_t> ids(kStreamLength);
  std::mt19937_64 rng(12345);
  for (std::size_t i = 0; i < kStreamLength; ++i)
    ids[i] = period > 0 ? 0x401000 + 0x40 * (i % static_cast<std::size_t>(period)) : rng();
  return ids;
}

// Feeds the stream long enough to reach steady state (measuring phase for periodic streams).
void warm_up(Analyzer& analyzer, const std::vector<std::uint64_t>& ids, std::uint64_t& now, int granted) {
  for (int round = 0; round < 4; ++round)
    for (const std::uint64_t id : ids) {
      analyzer.on_region(id, now, analyzer.team_for(granted));
      now += kRegionNs;
    }
}

void BM_OnRegion(benchmark::State& state) {
  const int period = static_cast<int>(state.range(0));
  const auto ids = make_stream(period);
  Analyzer analyzer{Config{}};
  std::uint64_t now = 1'000'000'000;
  warm_up(analyzer, ids, now, 4);
  const int team = analyzer.team_for(4);
  std::size_t i = 0;
  for (auto _ : state) {
    analyzer.on_region(ids[i], now, team);
    now += kRegionNs;
    i = (i + 1) & (kStreamLength - 1);
  }
  benchmark::DoNotOptimize(analyzer.report_seq());
  state.counters["period_found"] = analyzer.period();
  state.counters["reports"] = static_cast<double>(analyzer.report_seq());
}
BENCHMARK(BM_OnRegion)->ArgName("period")->Arg(3)->Arg(20)->Arg(64)->Arg(0);

// What libruntime does per outermost region: pick the team, feed the event, check for a new report.
void BM_RegionPath(benchmark::State& state) {
  const int period = static_cast<int>(state.range(0));
  const auto ids = make_stream(period);
  Analyzer analyzer{Config{}};
  std::uint64_t now = 1'000'000'000;
  warm_up(analyzer, ids, now, 4);
  std::uint64_t published = analyzer.report_seq();
  std::size_t i = 0;
  for (auto _ : state) {
    const int team = analyzer.team_for(4);
    analyzer.on_region(ids[i], now, team);
    if (analyzer.report_seq() != published) published = analyzer.report_seq();
    benchmark::DoNotOptimize(published);
    now += kRegionNs;
    i = (i + 1) & (kStreamLength - 1);
  }
}
BENCHMARK(BM_RegionPath)->ArgName("period")->Arg(3)->Arg(20)->Arg(64)->Arg(0);

// The per-event cost against max_period (it should not grow: only proposed lags are followed).
void BM_NonPeriodicVsMaxPeriod(benchmark::State& state) {
  Config cfg;
  cfg.max_period = static_cast<int>(state.range(0));
  const auto ids = make_stream(0);
  Analyzer analyzer{cfg};
  std::uint64_t now = 1'000'000'000;
  warm_up(analyzer, ids, now, 4);
  std::size_t i = 0;
  for (auto _ : state) {
    analyzer.on_region(ids[i], now, 4);
    now += kRegionNs;
    i = (i + 1) & (kStreamLength - 1);
  }
}
BENCHMARK(BM_NonPeriodicVsMaxPeriod)->ArgName("max_period")->Arg(16)->Arg(64)->Arg(256)->Arg(1024)->Arg(8192);

}  // namespace

BENCHMARK_MAIN();
