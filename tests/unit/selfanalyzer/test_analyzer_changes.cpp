// Analyzer reactions to changes of behaviour: iteration-time jumps, a new loop, a lost and regained
// lock, and the explicit iteration API.
#include <gtest/gtest.h>

#include <algorithm>

#include "selfanalyzer/analyzer.hpp"
#include "synthetic_program.hpp"

namespace cosched::sa {
namespace {

using testing::AmdahlLoop;
using testing::Driver;
using testing::latest;
using testing::kTol;
using testing::region_ids;

// Count of regions run at team `team` from index `from` on.
long regions_at(const Driver& d, std::size_t from, int team) {
  return std::count(d.teams.begin() + static_cast<long>(from), d.teams.end(), team);
}

TEST(AnalyzerChanges, IterationTimeJumpRestartsMeasurement) {
  Analyzer a{Config{}};
  Driver d(a);
  d.granted = 2;
  AmdahlLoop loop{region_ids(4), 1.0, 0.9};
  ASSERT_TRUE(d.until_report(loop, 0));
  d.iterations(loop, 3);

  // The working set grows: every iteration now takes 3× longer at the same team size.
  loop.t1_s = 3.0;
  const std::uint64_t seq = a.report_seq();
  d.iterations(loop, 2);  // first slow iteration: outlier (dropped)
  EXPECT_EQ(a.phase(), Phase::measuring);
  d.iterations(loop, 1);  // second one in a row: behaviour changed
  EXPECT_EQ(a.phase(), Phase::baseline);
  EXPECT_EQ(a.team_for(2), 1);
  EXPECT_GE(a.report_seq(), seq);  // the old report stays readable meanwhile

  ASSERT_TRUE(d.until_report(loop, a.report_seq()));
  const Report r = latest(a);
  EXPECT_NEAR(r.baseline_s, 3.0, kTol);
  EXPECT_NEAR(r.iteration_s, 1.65, kTol);
  EXPECT_NEAR(r.speedup, 1.0 / 0.55, kTol);
}

TEST(AnalyzerChanges, OneSlowIterationIsOnlyAnOutlier) {
  Analyzer a{Config{}};
  Driver d(a);
  d.granted = 2;
  AmdahlLoop loop{region_ids(4), 1.0, 0.9};
  ASSERT_TRUE(d.until_report(loop, 0));
  d.iterations(loop, 2);
  AmdahlLoop slow = loop;
  slow.t1_s = 5.0;
  d.iterations(slow, 1);
  d.iterations(loop, 4);
  EXPECT_EQ(a.phase(), Phase::measuring);
  EXPECT_NEAR(latest(a).iteration_s, 0.55, kTol);
  EXPECT_NEAR(latest(a).spread, 0.0, kTol);  // the outlier never entered the window
}

TEST(AnalyzerChanges, ANewLoopRestartsWithANewBaseline) {
  Analyzer a{Config{}};
  Driver d(a);
  d.granted = 2;
  ASSERT_TRUE(d.until_report(AmdahlLoop{region_ids(4, 0x401000), 1.0, 0.9}, 0));
  EXPECT_EQ(latest(a).period, 4);

  // The program enters its second phase: another loop, 6 regions, less parallel.
  const AmdahlLoop second{region_ids(6, 0x500000), 2.0, 0.5};
  d.iterations(second, 1);
  EXPECT_EQ(a.phase(), Phase::detecting);
  EXPECT_EQ(a.team_for(2), 2);  // native while looking for the new period
  ASSERT_TRUE(d.until_report(second, a.report_seq()));
  const Report r = latest(a);
  EXPECT_EQ(r.period, 6);
  EXPECT_NEAR(r.baseline_s, 2.0, kTol);
  EXPECT_NEAR(r.speedup, 1.0 / (0.5 + 0.25), kTol);
  EXPECT_NEAR(r.amdahl_f, 0.5, kTol);
}

TEST(AnalyzerChanges, AnOddRegionDoesNotCostANewBaseline) {
  Analyzer a{Config{}};
  Driver d(a);
  d.granted = 2;
  const AmdahlLoop loop{region_ids(4), 1.0, 0.9};
  ASSERT_TRUE(d.until_report(loop, 0));
  d.iterations(loop, 1);

  const std::size_t mark = d.teams.size();
  d.region(0xdead00, 1000);  // e.g. a checkpoint region, once
  EXPECT_EQ(a.phase(), Phase::detecting);
  d.iterations(loop, 4);
  EXPECT_EQ(a.phase(), Phase::measuring);  // resumed, same loop
  EXPECT_EQ(regions_at(d, mark, 1), 0);     // no baseline re-run at 1 CPU
  const std::uint64_t seq = a.report_seq();
  d.iterations(loop, 2);
  EXPECT_GT(a.report_seq(), seq);
  EXPECT_NEAR(latest(a).speedup, 1.0 / 0.55, kTol);
}

TEST(AnalyzerChanges, ADiscardedIterationIsNeitherSampleNorOutlier) {
  Analyzer a{Config{}};
  Driver d(a);
  d.granted = 2;
  AmdahlLoop loop{region_ids(4), 1.0, 0.9};
  ASSERT_TRUE(d.until_report(loop, 0));
  d.iterations(loop, 1);
  const std::uint64_t seq = a.report_seq();
  // The job is stopped for 10 s in the middle of two successive iterations (time sharing): without
  // discard_iteration() these would count as a behaviour change.
  for (int k = 0; k < 2; ++k) {
    d.region(loop.regions[0], 0, &loop);
    d.region(loop.regions[1], 0, &loop);
    d.now_ns += 10'000'000'000ULL;
    a.discard_iteration();
    d.region(loop.regions[2], 0, &loop);
    d.region(loop.regions[3], 0, &loop);
  }
  EXPECT_EQ(a.phase(), Phase::measuring);
  EXPECT_EQ(a.report_seq(), seq + 1);  // only the clean iteration before the first stop reported
  d.iterations(loop, 2);
  EXPECT_EQ(a.report_seq(), seq + 2);
  EXPECT_NEAR(latest(a).iteration_s, 0.55, kTol);
}

TEST(AnalyzerChanges, ExplicitIterationsBypassTheDetector) {
  Analyzer a{Config{}};
  Driver d(a);
  d.granted = 4;
  // A loop whose region sequence alone would look non-periodic: the explicit API still measures it.
  const AmdahlLoop loop{region_ids(3), 1.0, 0.9};
  d.explicit_iterations(loop, 1, 1);
  EXPECT_TRUE(a.explicit_iterations());
  EXPECT_EQ(a.phase(), Phase::baseline);
  EXPECT_EQ(a.team_for(4), 1);

  // No region ran before the first iteration, so it is clean: three baseline iterations at 1 CPU, then
  // one warm-up at 4 and three clean ones. Explicit iterations end at on_iteration_end, so the report
  // comes with the end of the seventh iteration.
  d.explicit_iterations(loop, 1, 5);
  EXPECT_EQ(a.report_seq(), 0U);
  d.explicit_iterations(loop, 1, 1);
  ASSERT_EQ(a.report_seq(), 1U);
  const Report r = latest(a);
  EXPECT_EQ(r.period, 3);  // regions per explicit iteration
  EXPECT_EQ(r.cpus, 4);
  EXPECT_NEAR(r.speedup, 1.0 / (0.1 + 0.9 / 4), kTol);
}

TEST(AnalyzerChanges, ExplicitNestedLoopIgnoredNewLoopRestarts) {
  Analyzer a{Config{}};
  Driver d(a);
  d.granted = 2;
  const AmdahlLoop loop{region_ids(2), 1.0, 0.9};
  for (int k = 0; k < 9; ++k) {
    a.on_iteration_begin(7, d.now_ns, a.team_for(d.granted));
    a.on_iteration_begin(8, d.now_ns, a.team_for(d.granted));  // inner loop: ignored
    d.region(loop.regions[0], 0, &loop);
    a.on_iteration_end(8, d.now_ns, a.team_for(d.granted));
    d.region(loop.regions[1], 0, &loop);
    a.on_iteration_end(7, d.now_ns, a.team_for(d.granted));
  }
  ASSERT_EQ(a.report_seq(), 3U);  // 3 baseline, 1 warm-up at 2, then iterations 7, 8, 9 report
  EXPECT_NEAR(latest(a).speedup, 1.0 / 0.55, kTol);

  d.explicit_iterations(loop, 9, 1);  // another loop id: measurement starts over
  EXPECT_EQ(a.phase(), Phase::baseline);
}

TEST(AnalyzerChanges, ExplicitIterationWithoutRegionsUsesTheGivenTeam) {
  Analyzer a{Config{}};
  for (int k = 0; k < 20; ++k) {
    const std::uint64_t t = 1'000'000'000ULL * static_cast<std::uint64_t>(k);
    a.on_iteration_begin(1, t, 1);
    a.on_iteration_end(1, t + 500'000'000ULL, 1);
  }
  const Report r = latest(a);
  EXPECT_NEAR(r.iteration_s, 0.5, kTol);
  EXPECT_NEAR(r.speedup, 1.0, kTol);
  EXPECT_EQ(r.period, 0);
  EXPECT_EQ(r.fit, FitStatus::assumed);  // one team size only, 1-CPU baseline: f moot and unknown
  EXPECT_EQ(r.amdahl_f, -1.0);
}

}  // namespace
}  // namespace cosched::sa
