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

constexpr std::uint64_t kTick = 4'000'000;  // 4 ms between readings, as the sampler's fast tick

// Reads the meter every 4 ms as the sampler thread does, and closes intervals when it asks. Between two
// readings the job's threads work `busy_ms(t)` milliseconds in all (at most cpus × 4), and wait for a CPU
// `wait_ms(t)`.
struct Feeder {
  EfficiencyMeter& m;
  std::uint64_t t = 0;
  std::uint64_t busy = 0;
  std::uint64_t wait = 0;
  template <typename Busy, typename Wait>
  void run(int ticks, int cpus, Busy busy_ms, Wait wait_ms, std::uint64_t iterations_every = 0,
           bool periodic = false) {
    for (int i = 0; i < ticks; ++i) {
      ++t;
      busy += static_cast<std::uint64_t>(busy_ms(t) * 1e6);
      wait += static_cast<std::uint64_t>(wait_ms(t) * 1e6);
      const std::uint64_t iterations = iterations_every > 0 ? t / iterations_every : 0;
      if (m.tick(t * kTick, busy, cpus, iterations, periodic)) m.close_interval(wait);
    }
  }
  template <typename Busy>
  void run(int ticks, int cpus, Busy busy_ms) {
    run(ticks, cpus, busy_ms, [](std::uint64_t) { return 0.0; });
  }
};

}  // namespace

// Two CPUs, the master alone half of the time: 1.5 of 2 CPUs working, E = 0.75 (6 ms of 8 per reading).
// Aperiodic: the first reading starts the warm-up interval, which ends after 40 ms (10 readings) and is never
// kept; then intervals of 200 ms (50 readings). The first estimate comes with the third.
TEST(EfficiencyMeter, SerialHalfOfTheTimeOnTwoCpusIsThreeQuarters) {
  EfficiencyMeter m{EfficiencyConfig{}};
  Feeder f{m};
  auto busy = [](std::uint64_t) { return 6.0; };
  f.run(1 + 10 + 2 * 50, 2, busy);
  EXPECT_EQ(m.estimate().seq, 0U) << "two intervals after the warm-up: not yet";
  EXPECT_EQ(m.pending(), EfficiencyPending::warming);
  f.run(50, 2, busy);
  ASSERT_EQ(m.estimate().seq, 1U);
  EXPECT_DOUBLE_EQ(m.estimate().efficiency, 0.75);
  EXPECT_DOUBLE_EQ(m.estimate().std_error, 0.0);
  EXPECT_EQ(m.estimate().cpus, 2);
  EXPECT_EQ(m.estimate().intervals, 3);
  EXPECT_NEAR(m.estimate().window_s, 3 * 0.2, 1e-9);
  EXPECT_EQ(m.pending(), EfficiencyPending::none);
}

// More working time than CPU time (nested teams, a team on fewer CPUs than threads) never makes it above 1.
TEST(EfficiencyMeter, NeverAboveOne) {
  EfficiencyMeter m{EfficiencyConfig{}};
  Feeder f{m};
  f.run(1 + 10 + 3 * 50, 2, [](std::uint64_t) { return 20.0; });
  ASSERT_GT(m.estimate().seq, 0U);
  EXPECT_DOUBLE_EQ(m.estimate().efficiency, 1.0);
}

// A loop of 10 readings (40 ms): 4 with both threads working (8 ms per reading), 6 with the master alone
// (4 ms): E = (4·8 + 6·4) / (10·8) = 0.7. With a period, intervals end at the first reading after an
// iteration boundary that comes once they last 40 ms, so each spans whole iterations give or take a
// reading at either end: over a window of 16 intervals of at least 10 readings, within 0.02 of 0.7.
TEST(EfficiencyMeter, PeriodicIntervalsSpanWholeIterations) {
  EfficiencyMeter m{EfficiencyConfig{}};
  Feeder f{m};
  auto busy = [](std::uint64_t t) { return t % 10 < 4 ? 8.0 : 4.0; };
  f.run(3000, 2, busy, [](std::uint64_t) { return 0.0; }, 10, true);
  ASSERT_GT(m.estimate().seq, 0U);
  EXPECT_NEAR(m.estimate().efficiency, 0.7, 0.02);
  EXPECT_EQ(m.estimate().intervals, 16);
}

// The first estimate at a CPU count needs a warm-up interval and three more; going back to a CPU count
// measured before publishes its window again at once (the end of a baseline at fewer CPUs).
TEST(EfficiencyMeter, EachCpuCountHasItsWindowAndTheLastOneIsKept) {
  EfficiencyMeter m{EfficiencyConfig{}};
  Feeder f{m};
  f.run(1 + 10 + 3 * 50, 4, [](std::uint64_t) { return 12.0; });
  ASSERT_EQ(m.estimate().cpus, 4);
  EXPECT_DOUBLE_EQ(m.estimate().efficiency, 0.75);
  const auto seq_at_4 = m.estimate().seq;

  f.run(1 + 10 + 2 * 50, 1, [](std::uint64_t) { return 4.0; });
  EXPECT_EQ(m.estimate().cpus, 4) << "not yet three intervals at 1 CPU: the estimate stays the one at 4";
  EXPECT_EQ(m.pending(), EfficiencyPending::warming);
  f.run(50, 1, [](std::uint64_t) { return 4.0; });
  EXPECT_EQ(m.estimate().cpus, 1);
  EXPECT_DOUBLE_EQ(m.estimate().efficiency, 1.0);

  f.run(1, 4, [](std::uint64_t) { return 12.0; });
  EXPECT_EQ(m.estimate().cpus, 4) << "back at 4 CPUs: the window measured there is published again";
  EXPECT_DOUBLE_EQ(m.estimate().efficiency, 0.75);
  EXPECT_GT(m.estimate().seq, seq_at_4);
}

// No team (before the first region): nothing is measured.
TEST(EfficiencyMeter, NoTeamNoEstimate) {
  EfficiencyMeter m{EfficiencyConfig{}};
  Feeder f{m};
  f.run(1000, 0, [](std::uint64_t) { return 4.0; });
  EXPECT_EQ(m.estimate().seq, 0U);
  EXPECT_EQ(m.pending(), EfficiencyPending::no_team);
}

// An interval the RM disturbed (a stop, a move of the CPUs) is not kept: with one perturbed, the first
// estimate needs one interval more.
TEST(EfficiencyMeter, PerturbedIntervalIsLeftOut) {
  EfficiencyMeter m{EfficiencyConfig{}};
  Feeder f{m};
  auto busy = [](std::uint64_t) { return 8.0; };
  f.run(1 + 10 + 25, 2, busy);
  m.perturb();
  f.run(25 + 3 * 50 - 1, 2, busy);
  EXPECT_EQ(m.estimate().seq, 0U);
  f.run(1, 2, busy);
  EXPECT_EQ(m.estimate().seq, 1U);
}

// Outside load (docs/selfanalyzer.md, "Outside load"): the run-queue share of an interval is its threads'
// waiting for a CPU over elapsed × CPUs. A quiet job waits 1 % (0.08 ms per 4-ms reading on 2 CPUs); a burst
// of 50 % (4 ms per reading) in one interval is left out; three in a row are a new load: the window starts
// over there and says so until it holds three intervals again.
TEST(EfficiencyMeter, OutsideLoadBurstIsLeftOutAndALastingOneStartsOver) {
  EfficiencyMeter m{EfficiencyConfig{}};
  Feeder f{m};
  auto busy = [](std::uint64_t) { return 8.0; };
  auto half = [](std::uint64_t) { return 4.0; };
  auto quiet = [](std::uint64_t) { return 0.08; };
  auto loaded = [](std::uint64_t) { return 4.0; };
  f.run(1 + 10 + 4 * 50, 2, busy, quiet);
  ASSERT_EQ(m.estimate().intervals, 4);
  EXPECT_NEAR(m.estimate().cpu_wait, 0.01, 1e-9);
  f.run(50, 2, half, loaded);
  EXPECT_EQ(m.contaminated(), 1U);
  EXPECT_EQ(m.estimate().intervals, 4) << "the burst's interval was left out";
  EXPECT_DOUBLE_EQ(m.estimate().efficiency, 1.0);
  f.run(50, 2, busy, quiet);
  EXPECT_EQ(m.estimate().intervals, 5);
  f.run(150, 2, half, loaded);
  EXPECT_EQ(m.contaminated(), 3U) << "two left out, the third starts the window over";
  EXPECT_EQ(m.pending(), EfficiencyPending::load_changing);
  f.run(100, 2, half, loaded);
  EXPECT_EQ(m.pending(), EfficiencyPending::none);
  EXPECT_DOUBLE_EQ(m.estimate().efficiency, 0.5) << "only intervals of the new load";
  EXPECT_NEAR(m.estimate().cpu_wait, 0.5, 1e-9);
  EXPECT_EQ(m.estimate().intervals, 3);
}

// The standard error of the mean of the intervals' efficiencies: intervals alternating 1.0 and 0.5 (both
// threads working, then one of two) have mean 0.75, sample standard deviation sqrt(4 · 0.0625 / 3) and
// standard error that over sqrt(4).
TEST(EfficiencyMeter, StandardErrorOfTheIntervals) {
  EfficiencyMeter m{EfficiencyConfig{}};
  Feeder f{m};
  f.run(1 + 10, 2, [](std::uint64_t) { return 8.0; });
  for (int k = 0; k < 4; ++k) f.run(50, 2, [k](std::uint64_t) { return k % 2 == 0 ? 8.0 : 4.0; });
  ASSERT_EQ(m.estimate().intervals, 4);
  EXPECT_DOUBLE_EQ(m.estimate().efficiency, 0.75);
  EXPECT_NEAR(m.estimate().std_error, std::sqrt(0.25 / 3) / 2, 1e-12);
}
