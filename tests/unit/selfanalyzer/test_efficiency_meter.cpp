// The waiting-time efficiency (selfanalyzer/efficiency_meter.hpp), with values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "selfanalyzer/analyzer.hpp"
#include "selfanalyzer/efficiency_meter.hpp"

using cosched::proto::EfficiencyPending;
using cosched::sa::EfficiencyConfig;
using cosched::sa::EfficiencyMeter;

namespace {

constexpr std::uint64_t kTick = 2'000'000;  // 2 ms

// Feeds ticks and closes intervals when the meter asks, as the sampler thread does. `working(t)` gives the
// working threads at tick t (from 0); the run-queue total grows by `wait_per_tick(t)` ns per tick.
struct Feeder {
  EfficiencyMeter& m;
  std::uint64_t t = 0;
  std::uint64_t wait = 0;
  int closed = 0;
  template <typename Working, typename Wait>
  void run(int ticks, int cpus, Working working, Wait wait_per_tick, std::uint64_t iterations_every = 0,
           bool periodic = false) {
    for (int i = 0; i < ticks; ++i, ++t) {
      wait += wait_per_tick(t);
      const std::uint64_t iterations = iterations_every > 0 ? t / iterations_every : 0;
      if (m.tick(t * kTick, working(t), cpus, iterations, periodic)) {
        m.close_interval(t * kTick, wait);
        ++closed;
      }
    }
  }
  template <typename Working>
  void run(int ticks, int cpus, Working working) {
    run(ticks, cpus, working, [](std::uint64_t) { return std::uint64_t{0}; });
  }
};

}  // namespace

// Two CPUs, the master alone half the time: 1.5 of 2 CPUs busy, E = 0.75. Aperiodic: a warm-up interval of
// min_interval_ticks (10), never kept, then intervals of 100 ticks; the first estimate comes with the third.
TEST(EfficiencyMeter, SerialHalfOfTheTimeOnTwoCpusIsThreeQuarters) {
  EfficiencyMeter m{EfficiencyConfig{}};
  Feeder f{m};
  auto working = [](std::uint64_t t) { return t % 2 == 0 ? 2 : 1; };
  f.run(10 + 2 * 100, 2, working);
  EXPECT_EQ(m.estimate().seq, 0U) << "two intervals after the warm-up: not yet";
  EXPECT_EQ(m.pending(), EfficiencyPending::warming);
  f.run(100, 2, working);
  ASSERT_EQ(m.estimate().seq, 1U);
  EXPECT_DOUBLE_EQ(m.estimate().efficiency, 0.75);  // (50·2 + 50·1) / (100·2) in each interval
  EXPECT_DOUBLE_EQ(m.estimate().std_error, 0.0);
  EXPECT_EQ(m.estimate().cpus, 2);
  EXPECT_EQ(m.estimate().intervals, 3);
  EXPECT_NEAR(m.estimate().window_s, 3 * 100 * 2e-3, 1e-9);
  EXPECT_EQ(m.pending(), EfficiencyPending::none);
}

// Threads beyond the CPUs (nested teams, a team on fewer CPUs than threads) never make it above 1: at most
// `cpus` CPUs can be busy at once.
TEST(EfficiencyMeter, NeverAboveOne) {
  EfficiencyMeter m{EfficiencyConfig{}};
  Feeder f{m};
  f.run(10 + 3 * 100, 2, [](std::uint64_t) { return 5; });
  ASSERT_GT(m.estimate().seq, 0U);
  EXPECT_DOUBLE_EQ(m.estimate().efficiency, 1.0);
}

// A loop of 10 ticks: 4 with both threads working, 6 with the master alone: E = (4·2 + 6·1) / 20 = 0.7.
// With a period, intervals end just after an iteration boundary, so the window's edges cut at most a tick
// of an iteration each: over 16 intervals of at least 10 ticks, within 2 / 160 of 0.7 plus rounding.
TEST(EfficiencyMeter, PeriodicIntervalsSpanWholeIterations) {
  EfficiencyMeter m{EfficiencyConfig{}};
  Feeder f{m};
  auto working = [](std::uint64_t t) { return t % 10 < 4 ? 2 : 1; };
  f.run(2000, 2, working, [](std::uint64_t) { return std::uint64_t{0}; }, 10, true);
  ASSERT_GT(m.estimate().seq, 0U);
  EXPECT_NEAR(m.estimate().efficiency, 0.7, 0.02);
  EXPECT_EQ(m.estimate().intervals, 16);
}

// The first estimate at a CPU count needs a warm-up interval and three more; going back to a CPU count
// measured before publishes its window again at once (the end of a baseline at fewer CPUs).
TEST(EfficiencyMeter, EachCpuCountHasItsWindowAndTheLastOneIsKept) {
  EfficiencyMeter m{EfficiencyConfig{}};
  Feeder f{m};
  f.run(10 + 3 * 100, 4, [](std::uint64_t) { return 3; });
  ASSERT_EQ(m.estimate().cpus, 4);
  EXPECT_DOUBLE_EQ(m.estimate().efficiency, 0.75);
  const auto seq_at_4 = m.estimate().seq;

  f.run(10 + 2 * 100, 1, [](std::uint64_t) { return 1; });
  EXPECT_EQ(m.estimate().cpus, 4) << "not yet three intervals at 1 CPU: the estimate stays the one at 4";
  EXPECT_EQ(m.pending(), EfficiencyPending::warming);
  f.run(100, 1, [](std::uint64_t) { return 1; });
  EXPECT_EQ(m.estimate().cpus, 1);
  EXPECT_DOUBLE_EQ(m.estimate().efficiency, 1.0);

  f.run(1, 4, [](std::uint64_t) { return 3; });
  EXPECT_EQ(m.estimate().cpus, 4) << "back at 4 CPUs: the window measured there is published again";
  EXPECT_DOUBLE_EQ(m.estimate().efficiency, 0.75);
  EXPECT_GT(m.estimate().seq, seq_at_4);
}

// No team (before the first region): nothing is measured.
TEST(EfficiencyMeter, NoTeamNoEstimate) {
  EfficiencyMeter m{EfficiencyConfig{}};
  Feeder f{m};
  f.run(1000, 0, [](std::uint64_t) { return 1; });
  EXPECT_EQ(m.estimate().seq, 0U);
  EXPECT_EQ(m.pending(), EfficiencyPending::no_team);
}

// An interval the RM disturbed (a stop, a move of the CPUs) is not kept: with one perturbed, the first
// estimate needs one interval more.
TEST(EfficiencyMeter, PerturbedIntervalIsLeftOut) {
  EfficiencyMeter m{EfficiencyConfig{}};
  Feeder f{m};
  f.run(10 + 50, 2, [](std::uint64_t) { return 2; });
  m.perturb();
  f.run(50 + 3 * 100 - 1, 2, [](std::uint64_t) { return 2; });
  EXPECT_EQ(m.estimate().seq, 0U);
  f.run(1, 2, [](std::uint64_t) { return 2; });
  EXPECT_EQ(m.estimate().seq, 1U);
}

// Outside load (docs/selfanalyzer.md, "Outside load"): the run-queue share of an interval is its threads'
// waiting for a CPU over elapsed × CPUs. A quiet job waits 1 % (0.04 ms per 2-ms tick on 2 CPUs); a burst
// of 50 % (2 ms per tick) in one interval is left out; three in a row are a new load: the window starts over
// there and says so until it holds three intervals again.
TEST(EfficiencyMeter, OutsideLoadBurstIsLeftOutAndALastingOneStartsOver) {
  EfficiencyMeter m{EfficiencyConfig{}};
  Feeder f{m};
  auto busy = [](std::uint64_t) { return 2; };
  auto quiet = [](std::uint64_t) { return std::uint64_t{40'000}; };
  auto loaded = [](std::uint64_t) { return std::uint64_t{2'000'000}; };
  f.run(10 + 4 * 100, 2, busy, quiet);
  ASSERT_EQ(m.estimate().intervals, 4);
  EXPECT_NEAR(m.estimate().cpu_wait, 0.01, 1e-9);
  f.run(100, 2, [](std::uint64_t) { return 1; }, loaded);
  EXPECT_EQ(m.contaminated(), 1U);
  EXPECT_EQ(m.estimate().intervals, 4) << "the burst's interval was left out";
  EXPECT_DOUBLE_EQ(m.estimate().efficiency, 1.0);
  f.run(100, 2, busy, quiet);
  EXPECT_EQ(m.estimate().intervals, 5);
  f.run(300, 2, [](std::uint64_t) { return 1; }, loaded);
  EXPECT_EQ(m.contaminated(), 3U) << "two left out, the third starts the window over";
  EXPECT_EQ(m.pending(), EfficiencyPending::load_changing);
  f.run(200, 2, [](std::uint64_t) { return 1; }, loaded);
  EXPECT_EQ(m.pending(), EfficiencyPending::none);
  EXPECT_DOUBLE_EQ(m.estimate().efficiency, 0.5) << "only intervals of the new load";
  EXPECT_NEAR(m.estimate().cpu_wait, 0.5, 1e-9);
  EXPECT_EQ(m.estimate().intervals, 3);
}

// The standard error of the mean of the intervals' efficiencies: intervals alternating 1.0 and 0.5 (all
// threads working, then one of two) have mean 0.75, sample standard deviation sqrt(4 · 0.0625 / 3) and
// standard error that over sqrt(4).
TEST(EfficiencyMeter, StandardErrorOfTheIntervals) {
  EfficiencyMeter m{EfficiencyConfig{}};
  Feeder f{m};
  f.run(10, 2, [](std::uint64_t) { return 2; });
  for (int k = 0; k < 4; ++k) f.run(100, 2, [k](std::uint64_t) { return k % 2 == 0 ? 2 : 1; });
  ASSERT_EQ(m.estimate().intervals, 4);
  EXPECT_DOUBLE_EQ(m.estimate().efficiency, 0.75);
  EXPECT_NEAR(m.estimate().std_error, std::sqrt(0.25 / 3) / 2, 1e-12);
}
