// The two cost controls libcosched turns on (Config::min_report_interval_s, Config::min_sample_s): they
// change how often the Analyzer works, never what it measures.
#include <gtest/gtest.h>

#include "synthetic_program.hpp"

using namespace cosched::sa;
using cosched::sa::testing::AmdahlLoop;
using cosched::sa::testing::Driver;
using cosched::sa::testing::region_ids;

namespace {

std::uint64_t g_clock_ns = 0;
int g_clock_reads = 0;
std::uint64_t counting_clock() noexcept {
  ++g_clock_reads;
  return g_clock_ns;
}

// Feeds `count` iterations of a period-1 loop through the lazy-clock entry point, as libcosched does.
void run_lazy(Analyzer& a, int granted, int count, double iteration_s_at_1, double f) {
  for (int k = 0; k < count; ++k) {
    const int team = a.team_for(granted);
    a.on_region(0x401000, team, &counting_clock);
    g_clock_ns += static_cast<std::uint64_t>(iteration_s_at_1 * ((1 - f) + f / team) * 1e9);
  }
}

}  // namespace

TEST(AnalyzerCosts, BatchedSamplesMeasureTheMeanIterationTime) {
  Config c;
  c.min_sample_s = 0.0005;
  Analyzer a(c);
  g_clock_ns = 1'000'000'000;
  g_clock_reads = 0;
  const int regions = 200000;
  run_lazy(a, 2, regions, 2e-6, 1.0);  // 2 µs at 1 CPU, perfectly parallel: 1 µs at 2
  Report r;
  ASSERT_TRUE(a.report(r));
  EXPECT_EQ(r.cpus, 2);
  EXPECT_NEAR(r.iteration_s, 1e-6, 1e-9);
  EXPECT_NEAR(r.baseline_s, 2e-6, 1e-9);
  EXPECT_NEAR(r.speedup, 2.0, 1e-3);
  // Batches of >= 0.5 ms of 1-2 µs iterations: a few hundred regions per clock read, not one.
  EXPECT_LT(g_clock_reads, regions / 100) << g_clock_reads;
  // Batched iterations still count: all but the detection prologue.
  EXPECT_GT(a.iterations(), static_cast<std::uint64_t>(regions) * 9 / 10);
}

TEST(AnalyzerCosts, WithoutBatchingEveryBoundaryReadsTheClock) {
  Config c;  // min_sample_s = 0
  Analyzer a(c);
  g_clock_ns = 1'000'000'000;
  g_clock_reads = 0;
  run_lazy(a, 2, 1000, 2e-6, 1.0);
  EXPECT_GT(g_clock_reads, 900);
}

TEST(AnalyzerCosts, LongIterationsAreNotBatched) {
  Config c;
  c.min_sample_s = 0.0005;
  Analyzer a(c);
  AmdahlLoop loop{region_ids(3), 0.01, 0.9};  // 10 ms iterations
  Driver d(a);
  d.granted = 2;
  d.iterations(loop, 40);
  Report r;
  ASSERT_TRUE(a.report(r));
  EXPECT_NEAR(r.iteration_s, 0.01 * (0.1 + 0.9 / 2), 1e-6);
  EXPECT_GE(r.samples, 3);
}

TEST(AnalyzerCosts, ReportsAreThrottledButTheFirstAtATeamSizeIsNot) {
  Config c;
  c.min_report_interval_s = 0.010;
  Analyzer a(c);
  AmdahlLoop loop{region_ids(1), 0.001, 1.0};  // 1 ms at 1 CPU
  Driver d(a);
  d.granted = 2;
  d.iterations(loop, 30);
  Report r;
  ASSERT_TRUE(a.report(r));
  const std::uint64_t first = a.report_seq();
  EXPECT_EQ(r.cpus, 2);
  d.iterations(loop, 100);  // 100 × 0.5 ms = 50 ms: about 5 more reports, not 100
  const std::uint64_t more = a.report_seq() - first;
  EXPECT_GE(more, 4U);
  EXPECT_LE(more, 6U);
  // A new allocation reports as soon as its first samples exist.
  d.granted = 1;
  ASSERT_GE(d.until_report_at(loop, 1, 20), 1);
}

TEST(AnalyzerBaseline, DisabledBaselineNeverShrinksTheTeam) {
  Analyzer a(Config{});
  a.set_baseline_enabled(false);
  AmdahlLoop loop{region_ids(2), 0.01, 0.9};
  Driver d(a);
  d.granted = 4;
  d.iterations(loop, 30);
  for (int t : d.teams) EXPECT_EQ(t, 4);
  EXPECT_EQ(a.phase(), Phase::measuring);
  Report r;
  EXPECT_FALSE(a.report(r));  // one team size only: no reference to compare with
  // The allocation changes (another job arrived): two points, a speedup from the Amdahl fit.
  d.granted = 2;
  ASSERT_GE(d.until_report_at(loop, 2, 30), 1);
  ASSERT_TRUE(a.report(r));
  EXPECT_NEAR(r.speedup, 1.0 / (0.1 + 0.9 / 2), 1e-6);
  EXPECT_NEAR(r.amdahl_f, 0.9, 1e-6);
}

TEST(AnalyzerBaseline, EnablingItStartsABaseline) {
  Analyzer a(Config{});
  a.set_baseline_enabled(false);
  AmdahlLoop loop{region_ids(1), 0.01, 0.9};
  Driver d(a);
  d.granted = 2;
  d.iterations(loop, 20);
  ASSERT_EQ(a.phase(), Phase::measuring);
  a.set_baseline_enabled(true);
  EXPECT_EQ(a.phase(), Phase::baseline);
  EXPECT_EQ(a.team_for(2), 1);
  ASSERT_GE(d.until_report_at(loop, 2, 40), 1);
  Report r;
  ASSERT_TRUE(a.report(r));
  EXPECT_EQ(r.baseline_team, 1);
  EXPECT_NEAR(r.speedup, 1.0 / (0.1 + 0.9 / 2), 1e-6);
}

namespace cosched::sa {
namespace {

using testing::AmdahlLoop;
using testing::Driver;

// A job granted 2 CPUs that starts alone (rm_baseline_waits set): 0.01-s one-CPU iterations, f = 0.9.
class AloneAtTwoCpus : public ::testing::Test {
 protected:
  AloneAtTwoCpus() {
    a.set_baseline_waits(true);
    d.granted = 2;
  }
  const AmdahlLoop loop{region_ids(2), 0.01, 0.9};
  Analyzer a{Config{}};
  Driver d{a};
};

// The job is alone: no attempt starts, and it runs at its grant. Another job comes: the baseline starts, and
// the speedup is Amdahl's, worked by hand: 1 / (0.1 + 0.9/2).
TEST_F(AloneAtTwoCpus, NoBaselineAttemptStartsWhileTheJobIsAlone) {
  d.explicit_iterations(loop, 1, 20);
  for (int t : d.teams) EXPECT_EQ(t, 2);
  EXPECT_EQ(a.phase(), Phase::measuring);

  a.set_baseline_waits(false);
  EXPECT_EQ(a.phase(), Phase::baseline);
  EXPECT_EQ(a.team_for(2), 1);
  Report r;
  for (int k = 0; k < 40 && !(a.report(r) && r.cpus == 2); ++k) d.explicit_iterations(loop, 1, 1);
  ASSERT_EQ(r.cpus, 2);
  EXPECT_EQ(r.baseline_team, 1);
  EXPECT_NEAR(r.baseline_s, 0.01, 1e-6);  // t1 · ((1 − f) + f/1)
  EXPECT_NEAR(r.speedup, 1.0 / (0.1 + 0.9 / 2), 1e-6);

  // Alone again, and back: the baseline it has stands.
  a.set_baseline_waits(true);
  a.set_baseline_waits(false);
  EXPECT_EQ(a.phase(), Phase::measuring);
  EXPECT_TRUE(a.has_baseline());
}

// Left alone during an attempt without a sample (the neighbour left before the first one), the attempt ends at
// once: the job runs at its grant.
TEST_F(AloneAtTwoCpus, ABaselineAttemptWithoutASampleEndsWhenTheJobIsLeftAlone) {
  d.explicit_iterations(loop, 1, 5);
  a.set_baseline_waits(false);
  ASSERT_EQ(a.phase(), Phase::baseline);
  a.set_baseline_waits(true);
  EXPECT_EQ(a.phase(), Phase::measuring);
  EXPECT_EQ(a.team_for(2), 2);
  const std::size_t from = d.teams.size();
  d.explicit_iterations(loop, 1, 10);
  for (std::size_t i = from; i < d.teams.size(); ++i) EXPECT_EQ(d.teams[i], 2);
  EXPECT_FALSE(a.has_baseline());
}

// Iterations run at team 1 (the baseline size) until the baseline completes, from where the driver is now.
int baseline_iterations_left(Analyzer& a, Driver& d, const AmdahlLoop& loop, int limit = 50) {
  int at_one = 0;
  for (int k = 0; k < limit && a.phase() != Phase::measuring; ++k) {
    const std::size_t before = d.teams.size();
    d.explicit_iterations(loop, 1, 1);
    if (d.teams[before] == 1) ++at_one;
  }
  return a.phase() == Phase::measuring ? at_one : -1;
}

// Left alone with samples in hand, the attempt pauses: the job runs at its grant at once. When a neighbour
// comes back (NPB BT's 10-s iterations in PDPA's workload 1), it resumes with those samples: one warm-up
// iteration at the baseline size and the one sample it lacked, not a whole attempt again.
TEST(AnalyzerBaselineWaits, AnAttemptPausesWhileTheJobIsAloneAndResumesWithItsSamples) {
  const AmdahlLoop loop{region_ids(2), 0.01, 0.9};
  Analyzer whole(Config{});
  Driver dw(whole);
  dw.granted = 2;
  const int uninterrupted = baseline_iterations_left(whole, dw, loop);
  ASSERT_EQ(uninterrupted, 3);  // Config::baseline_iterations samples; the first region ran at team 1 already

  Analyzer a(Config{});
  Driver d(a);
  d.granted = 2;
  d.explicit_iterations(loop, 1, 2);
  ASSERT_EQ(a.phase(), Phase::baseline);
  a.set_baseline_waits(true);
  EXPECT_EQ(a.phase(), Phase::measuring);
  EXPECT_EQ(a.team_for(2), 2);
  const std::size_t alone_from = d.teams.size();
  d.explicit_iterations(loop, 1, 6);
  for (std::size_t i = alone_from; i < d.teams.size(); ++i) EXPECT_EQ(d.teams[i], 2);

  a.set_baseline_waits(false);
  EXPECT_EQ(a.phase(), Phase::baseline);
  EXPECT_EQ(a.team_for(2), 1);
  EXPECT_EQ(baseline_iterations_left(a, d, loop), 2);  // the warm-up after the team change, then the last sample
  EXPECT_TRUE(a.has_baseline());
  Report r;
  for (int k = 0; k < 40 && !(a.report(r) && r.cpus == 2); ++k) d.explicit_iterations(loop, 1, 1);
  ASSERT_EQ(r.cpus, 2);
  EXPECT_NEAR(r.baseline_s, 0.01, 1e-6);
  EXPECT_NEAR(r.speedup, 1.0 / (0.1 + 0.9 / 2), 1e-6);
}

}  // namespace
}  // namespace cosched::sa
