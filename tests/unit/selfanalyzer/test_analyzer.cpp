// Analyzer end to end on a known Amdahl curve (f = 0.9, T1 = 1 s): phases, team_for, the baseline, the
// Amdahl normalisation at successive allocations, and the report's mapping onto the arena.
#include <gtest/gtest.h>

#include <random>

#include "selfanalyzer/analyzer.hpp"
#include "selfanalyzer/arena_report.hpp"
#include "synthetic_program.hpp"

namespace cosched::sa {
namespace {

using testing::AmdahlLoop;
using testing::Driver;
using testing::latest;
using testing::kTol;
using testing::region_ids;

double amdahl_speedup(double f, int p) { return 1.0 / ((1.0 - f) + f / p); }

TEST(Analyzer, NoReportBeforeAnything) {
  Analyzer a{Config{}};
  Report r;
  EXPECT_FALSE(a.report(r));
  EXPECT_EQ(a.report_seq(), 0U);
  EXPECT_EQ(a.phase(), Phase::detecting);
  EXPECT_EQ(a.team_for(6), 6);
}

TEST(Analyzer, BaselineOneThenTwoThenFourCpus) {
  Analyzer a{Config{}};
  Driver d(a);
  const AmdahlLoop loop{region_ids(5), 1.0, 0.9};
  d.granted = 2;

  // Three iterations to detect the period (5 regions, confirmed after two repeats), at the allocation.
  d.iterations(loop, 3);
  EXPECT_EQ(a.phase(), Phase::baseline);
  EXPECT_EQ(a.period(), 5);
  for (int i = 0; i < 15; ++i) EXPECT_EQ(d.teams[static_cast<std::size_t>(i)], 2) << i;
  EXPECT_EQ(a.team_for(2), 1);  // baseline: min(baseline_cpus, granted)

  // One warm-up iteration (the team changed in it) and three baseline iterations at 1 CPU, then one
  // warm-up at 2 CPUs and three measured ones: the first report.
  ASSERT_TRUE(d.until_report(loop, 0));
  EXPECT_EQ(a.phase(), Phase::measuring);
  EXPECT_EQ(a.iterations(), 8U);  // complete iterations seen since the lock
  EXPECT_EQ(a.team_for(2), 2);
  Report r = latest(a);
  EXPECT_EQ(r.seq, 1U);
  EXPECT_EQ(r.phase, Phase::measuring);
  EXPECT_EQ(r.cpus, 2);
  EXPECT_EQ(r.baseline_team, 1);
  EXPECT_EQ(r.period, 5);
  EXPECT_EQ(r.samples, 3);
  EXPECT_NEAR(r.baseline_s, 1.0, kTol);
  EXPECT_NEAR(r.iteration_s, 0.55, kTol);
  EXPECT_NEAR(r.speedup, amdahl_speedup(0.9, 2), kTol);
  EXPECT_NEAR(r.efficiency, amdahl_speedup(0.9, 2) / 2, kTol);
  EXPECT_NEAR(r.amdahl_f, 0.9, kTol);
  EXPECT_EQ(r.fit, FitStatus::measured);
  EXPECT_NEAR(r.spread, 0.0, kTol);

  // Every further clean iteration refreshes the report.
  d.iterations(loop, 2);
  r = latest(a);
  EXPECT_EQ(r.seq, 3U);
  EXPECT_EQ(r.samples, 5);
  d.iterations(loop, 3);
  EXPECT_EQ(latest(a).samples, 5);  // the window holds the last 5

  // The RM grants 4: the iteration whose first region ran at 4 is a warm-up, three clean ones follow,
  // and the report appears at the first region of the fifth iteration at 4.
  d.granted = 4;
  EXPECT_EQ(d.until_report_at(loop, 4), 5);
  r = latest(a);
  EXPECT_EQ(r.cpus, 4);
  EXPECT_EQ(r.samples, 3);
  EXPECT_NEAR(r.iteration_s, 0.325, kTol);
  EXPECT_NEAR(r.speedup, amdahl_speedup(0.9, 4), kTol);
  EXPECT_NEAR(r.efficiency, amdahl_speedup(0.9, 4) / 4, kTol);
  EXPECT_NEAR(r.amdahl_f, 0.9, kTol);

  // Back to the baseline size: the second point comes from the history (4 CPUs).
  d.granted = 1;
  ASSERT_GT(d.until_report_at(loop, 1), 0);
  r = latest(a);
  EXPECT_EQ(r.cpus, 1);
  EXPECT_NEAR(r.speedup, 1.0, kTol);
  EXPECT_NEAR(r.amdahl_f, 0.9, kTol);
  EXPECT_EQ(r.fit, FitStatus::measured);
}

TEST(Analyzer, TeamForFollowsThePhases) {
  Analyzer a{Config{}};
  Driver d(a);
  const AmdahlLoop loop{region_ids(3), 0.3, 0.8};
  d.granted = 3;
  ASSERT_TRUE(d.until_report(loop, 0));
  // detecting → team 3; baseline → team 1; measuring → team 3; never anything else, and in that order.
  int transitions = 0;
  for (std::size_t i = 1; i < d.teams.size(); ++i) {
    const int team = d.teams[i];
    EXPECT_TRUE(team == 1 || team == 3);
    if (team != d.teams[i - 1]) ++transitions;
    const Phase phase_before = d.phases[i - 1];  // team_for ran before this region's on_region
    EXPECT_EQ(team, phase_before == Phase::baseline ? 1 : 3) << "region " << i;
  }
  EXPECT_EQ(transitions, 2);
}

TEST(Analyzer, BaselineLargerThanOneCpu) {
  Config cfg;
  cfg.baseline_cpus = 2;
  Analyzer a{cfg};
  Driver d(a);
  const AmdahlLoop loop{region_ids(4), 1.0, 0.9};

  // Baseline at 2 below an allocation of 4: T(2) = 0.55, T(4) = 0.325 (T1 = 1, f = 0.9), R = 1.6923,
  // f = (R - 1) / (R (1 - 1/4) - (1 - 1/2)) = 0.6923 / 0.7692 = 0.9, T1 = 0.55 / (0.1 + 0.45) = 1...
  d.granted = 4;
  ASSERT_GT(d.until_report_at(loop, 4), 0);
  EXPECT_EQ(a.no_speedup(), proto::NoSpeedup::none);
  Report r = latest(a);
  EXPECT_EQ(r.baseline_team, 2);
  EXPECT_EQ(r.fit, FitStatus::measured);
  EXPECT_NEAR(r.amdahl_f, 0.9, kTol);
  EXPECT_NEAR(r.speedup, amdahl_speedup(0.9, 4), kTol);

  // ... which then normalises the baseline size too (P = 2 = the baseline: the 4-CPU point is the other).
  d.granted = 2;
  ASSERT_GT(d.until_report_at(loop, 2), 0);
  r = latest(a);
  EXPECT_EQ(r.cpus, 2);
  EXPECT_NEAR(r.speedup, amdahl_speedup(0.9, 2), kTol);
  EXPECT_NEAR(r.efficiency, amdahl_speedup(0.9, 2) / 2, kTol);
}

TEST(Analyzer, BaselineAtTheAllocationGivesAnIterationTimeButNoSpeedup) {
  Config cfg;
  cfg.baseline_cpus = 4;
  Analyzer a{cfg};
  Driver d(a);
  d.granted = 2;
  const AmdahlLoop loop{region_ids(2), 0.1, 0.5};
  // A baseline at 4 on 2 CPUs is clamped to the allocation, 2: nothing below 2 CPUs is measured, so no
  // speedup (f = 1 assumed would say 2.00). The window's time is still published: T(2) = 0.1 (0.5 + 0.25)
  // = 0.075 s at 2 CPUs.
  EXPECT_EQ(a.team_for(2), 2);
  EXPECT_FALSE(d.until_report(loop, 0, 60));
  EXPECT_EQ(a.no_speedup(), proto::NoSpeedup::no_lower_point);
  EXPECT_NEAR(a.unreported_s(), 0.075, kTol);
  EXPECT_EQ(a.unreported_cpus(), 2);
  // The job is never run below its allocation for that.
  for (int t : d.teams) EXPECT_EQ(t, 2);
}

// A job that does not scale at all (its master works while the others wait: T(p) = 1 s for every p) whose
// team floor keeps its baseline at 2 on 2 CPUs: never reported as scalable. With f = 1 assumed it read
// speedup 2.00, efficiency 1.00 (issue 29). Only once it has really run on 1 CPU (a team of 2 confined to
// one CPU counts as 1 CPU) is there a lower point: fit(1 CPU: 1 s, 2 CPUs: 1 s) gives R = 1, f = 0, T1 = 1 s,
// so speedup 1.00 at 1 CPU, and back at 2 CPUs speedup 1.00, efficiency 0.50.
TEST(Analyzer, JobThatDoesNotScaleIsNeverReportedAsScalable) {
  Config cfg;
  cfg.baseline_cpus = 2;  // libcosched raises the baseline to the floor
  Analyzer a{cfg};
  Driver d(a);
  d.floor = 2;
  const AmdahlLoop loop{region_ids(3), 1.0, 0.0};
  d.granted = 2;
  EXPECT_FALSE(d.until_report(loop, 0, 60));
  EXPECT_EQ(a.no_speedup(), proto::NoSpeedup::no_lower_point);
  EXPECT_NEAR(a.unreported_s(), 1.0, kTol);
  EXPECT_EQ(a.unreported_cpus(), 2);

  d.granted = 1;
  ASSERT_GT(d.until_report_at(loop, 1), 0);
  Report r = latest(a);
  EXPECT_NEAR(r.speedup, 1.0, kTol);
  EXPECT_NEAR(r.efficiency, 1.0, kTol);
  EXPECT_EQ(r.fit, FitStatus::measured);
  EXPECT_NEAR(r.amdahl_f, 0.0, kTol);

  d.granted = 2;
  ASSERT_GT(d.until_report_at(loop, 2), 0);
  r = latest(a);
  EXPECT_NEAR(r.speedup, 1.0, kTol);
  EXPECT_NEAR(r.efficiency, 0.5, kTol);
  EXPECT_EQ(a.no_speedup(), proto::NoSpeedup::none);
  EXPECT_EQ(a.unreported_s(), 0.0);  // the report carries the time now
}

TEST(Analyzer, RmCanChangeTheBaselineSize) {
  Analyzer a{Config{}};
  a.set_baseline_cpus(3);
  Driver d(a);
  d.granted = 8;
  const AmdahlLoop loop{region_ids(2), 0.1, 0.5};
  d.iterations(loop, 8);  // locked (a window of 8 regions recurs, then 6 matches), not yet through the baseline
  EXPECT_EQ(a.phase(), Phase::baseline);
  EXPECT_EQ(a.team_for(8), 3);
  a.set_baseline_cpus(0);  // back to the configured size
  EXPECT_EQ(a.team_for(8), 1);
}

TEST(Analyzer, NonPeriodicProgramNeverReports) {
  Analyzer a{Config{}};
  Driver d(a);
  d.granted = 4;
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) d.region(rng(), 1000);
  Report r;
  EXPECT_FALSE(a.report(r));
  EXPECT_EQ(a.phase(), Phase::detecting);
  EXPECT_EQ(a.regions(), 20000U);
  for (const int team : d.teams) ASSERT_EQ(team, 4);  // native behaviour throughout
}

TEST(Analyzer, AnIterationWithATeamChangeInsideIsNotASample) {
  Analyzer a{Config{}};
  Driver d(a);
  const AmdahlLoop loop{region_ids(4), 1.0, 0.9};
  d.granted = 2;
  ASSERT_TRUE(d.until_report(loop, 0));
  const Report before = latest(a);
  // The allocation changes to 4 at an iteration's first region (the region also ends the previous,
  // clean iteration: one more report), then back to 2 in the middle of the same iteration.
  d.granted = 4;
  d.region(loop.regions[0], 0, &loop);
  const std::uint64_t seq = a.report_seq();
  EXPECT_EQ(seq, before.seq + 1);
  d.region(loop.regions[1], 0, &loop);
  d.granted = 2;
  d.region(loop.regions[2], 0, &loop);
  d.region(loop.regions[3], 0, &loop);
  d.iterations(loop, 1);  // ends the mixed iteration: no sample, no report
  EXPECT_EQ(a.report_seq(), seq);
  d.iterations(loop, 1);  // ends a clean iteration at 2 (its first region did not change team)
  const Report after = latest(a);
  EXPECT_EQ(after.seq, seq + 1);
  EXPECT_NEAR(after.iteration_s, 0.55, kTol);
}

TEST(Analyzer, ReportMapsOntoTheArenaJobBlock) {
  Analyzer a{Config{}};
  Driver d(a);
  d.granted = 2;
  ASSERT_TRUE(d.until_report(AmdahlLoop{region_ids(3), 1.0, 0.9}, 0));
  const Report r = latest(a);

  // The runtime's own mapping (libruntime/measure.cpp publishes with it; phase and period are stored next
  // to it from the Analyzer's accessors).
  proto::JobBlock job{};
  store_report(r, job);
  job.phase.store(static_cast<std::uint32_t>(r.phase), std::memory_order_relaxed);
  job.period.store(r.period, std::memory_order_relaxed);

  EXPECT_EQ(job.phase.load(), 3U);  // proto::Phase::measuring
  EXPECT_EQ(job.period.load(), 3);
  EXPECT_EQ(job.cpus.load(), 2);
  EXPECT_DOUBLE_EQ(job.speedup.load(), r.speedup);
  EXPECT_NEAR(job.amdahl_f.load(), 0.9, kTol);
  EXPECT_EQ(job.reports.load(), r.seq);
  EXPECT_DOUBLE_EQ(job.efficiency.load(), r.efficiency);
  EXPECT_DOUBLE_EQ(job.iteration_s.load(), r.iteration_s);
  EXPECT_DOUBLE_EQ(job.baseline_s.load(), r.baseline_s);
  EXPECT_EQ(job.samples.load(), r.samples);
  EXPECT_EQ(job.baseline_team.load(), r.baseline_team);
}

}  // namespace
}  // namespace cosched::sa

namespace cosched::sa {
namespace {

// The counter-free bandwidth sensor's input (proto::SensorBlock): every clean iteration, cumulated, even
// the ones the change detector would call a jump (a memory-hungry neighbour makes exactly such jumps).
TEST(Analyzer, CleanSamplesAreCumulatedForTheSensors) {
  Config c;
  c.min_sample_s = 0;  // one sample per iteration
  Analyzer a{c};
  a.set_baseline_enabled(false);
  std::uint64_t t = 0;
  auto iteration = [&](std::uint64_t ns, bool stopped = false) {
    a.on_iteration_begin(1, t, 2);
    a.on_region(7, t + 1, 2);
    if (stopped) a.discard_iteration();  // the RM stopped the job during it: not clean
    t += ns;
    a.on_iteration_end(1, t, 2);
  };
  iteration(10'000'000);  // the first iteration opens the loop: a sample
  iteration(10'000'000);
  EXPECT_EQ(a.clean_iterations(), 2U);
  EXPECT_EQ(a.clean_ns(), 20'000'000U);
  EXPECT_EQ(a.clean_team(), 2);
  iteration(50'000'000, true);
  EXPECT_EQ(a.clean_iterations(), 2U);
  iteration(30'000'000);  // three times slower next to a streamer: still a clean sample
  EXPECT_EQ(a.clean_iterations(), 3U);
  EXPECT_EQ(a.clean_ns(), 50'000'000U);
  EXPECT_EQ(a.clean_wait_ns(), 0U);  // no wait source: nothing known
}

std::uint64_t g_wait = 0;
std::uint64_t fake_wait() noexcept { return g_wait; }

TEST(Analyzer, CleanSamplesCarryTheirWaitForACpu) {
  Config c;
  c.min_sample_s = 0;
  c.max_wait_fraction = 1.0;  // keep every sample: this is about the sum, not the outside-load filter
  Analyzer a{c};
  a.set_baseline_enabled(false);
  a.set_wait_source(&fake_wait);
  std::uint64_t t = 0;
  auto iteration = [&](std::uint64_t ns, std::uint64_t waited) {
    a.on_iteration_begin(1, t, 2);
    a.on_region(7, t + 1, 2);
    t += ns;
    g_wait += waited;
    a.on_iteration_end(1, t, 2);
  };
  iteration(10'000'000, 0);
  iteration(20'000'000, 16'000'000);  // two threads, 8 ms each in the run queue
  EXPECT_EQ(a.clean_iterations(), 2U);
  EXPECT_EQ(a.clean_ns(), 30'000'000U);
  EXPECT_EQ(a.clean_wait_ns(), 16'000'000U);
}

}  // namespace
}  // namespace cosched::sa

namespace cosched::sa {
namespace {

using testing::AmdahlLoop;
using testing::Driver;
using testing::latest;
using testing::region_ids;

// A bounded baseline (Config::baseline_max_samples = 10, baseline_backoff_iterations = 20, doubling): a
// program whose last region of each iteration runs a team latched at the grant (it read the team size
// earlier) changes team inside every iteration while the baseline shrinks the others, so no baseline
// sample is ever clean. Before, the job stayed in its baseline (at 1 CPU for most regions) for ever.
TEST(Analyzer, BaselineThatCannotCompleteIsAbandonedAndRetriedWithBackoff) {
  Config cfg;
  Analyzer a{cfg};
  const std::vector<std::uint64_t> ids = region_ids(3);
  std::uint64_t now = 1'000'000'000;
  const int granted = 2;
  std::vector<Phase> phase_at;  // the phase at the start of every iteration
  auto iteration = [&] {
    phase_at.push_back(a.phase());
    for (std::size_t r = 0; r < ids.size(); ++r) {
      const int team = r + 1 == ids.size() ? granted : a.team_for(granted);  // the latched region
      a.on_region(ids[r], now, team);
      now += 10'000'000;
    }
  };
  for (int k = 0; k < 120; ++k) iteration();
  // Phases per iteration: detecting, then attempts of at most 10 iterations in baseline, with 20, then 40
  // iterations at the grant between them.
  std::vector<std::pair<Phase, int>> runs;
  for (Phase p : phase_at) {
    if (runs.empty() || runs.back().first != p) runs.emplace_back(p, 0);
    ++runs.back().second;
  }
  ASSERT_GE(runs.size(), 6U);
  EXPECT_EQ(runs[0].first, Phase::detecting);
  EXPECT_EQ(runs[1].first, Phase::baseline);
  EXPECT_LE(runs[1].second, 12);  // 10, plus the iteration the lock came in and the one the bound is checked at
  EXPECT_EQ(runs[2].first, Phase::measuring);
  EXPECT_NEAR(runs[2].second, 20, 1);
  EXPECT_EQ(runs[3].first, Phase::baseline);
  EXPECT_LE(runs[3].second, 12);
  EXPECT_EQ(runs[4].first, Phase::measuring);
  EXPECT_NEAR(runs[4].second, 40, 1);
  EXPECT_EQ(runs[5].first, Phase::baseline);
  EXPECT_GE(a.baseline_abandoned(), 2);
  // While measuring at the grant, the iteration time goes out without a speedup: nothing below P was measured.
  EXPECT_EQ(a.report_seq(), 0U);
  EXPECT_EQ(a.no_speedup(), proto::NoSpeedup::no_lower_point);
  EXPECT_NEAR(a.unreported_s(), 0.03, 1e-6);
  EXPECT_EQ(a.unreported_cpus(), 2);
}

// A baseline by narrowing (docs/selfanalyzer.md, "Teams that cannot shrink"): the same latched program, whose
// runtime asks the RM for 1 CPU at its first mixed-team sample and holds the samples meanwhile. However long
// the RM takes (30 iterations here), the held iterations neither finish nor abandon the attempt; once the CPU
// set is narrowed, every region runs on 1 CPU (the runtime keys samples by min(team, CPUs)), the baseline
// completes at 1 CPU, and the job back on 2 CPUs reports speedup 2 (60 ms per iteration on 1 CPU, 30 on 2).
TEST(Analyzer, BaselineByNarrowingWaitsForTheRmAndMeasuresTheCpus) {
  Config cfg;
  Analyzer a{cfg};
  const std::vector<std::uint64_t> ids = region_ids(3);
  std::uint64_t now = 1'000'000'000;
  int cpus = 2;  // what the RM publishes
  auto iteration = [&] {
    for (std::size_t r = 0; r < ids.size(); ++r) {
      const int team = r + 1 == ids.size() ? 2 : a.team_for(cpus);  // the last region follows a latched read
      a.on_region(ids[r], now, std::min(team, cpus));
      now += cpus == 1 ? 20'000'000 : 10'000'000;
    }
  };
  int k = 0;
  for (; k < 60 && a.baseline_mixed_samples() == 0; ++k) iteration();
  ASSERT_EQ(a.phase(), Phase::baseline);
  a.hold_samples(true);
  for (int held = 0; held < 30; ++held) iteration();
  EXPECT_EQ(a.phase(), Phase::baseline);  // neither finished at 2 CPUs nor abandoned
  EXPECT_EQ(a.baseline_abandoned(), 0);
  cpus = 1;  // the RM narrowed
  a.hold_samples(false);
  a.discard_iteration();
  for (int n = 0; n < 20 && a.phase() == Phase::baseline; ++n) iteration();
  ASSERT_EQ(a.phase(), Phase::measuring);
  cpus = 2;  // the baseline is done: the RM gives the CPU back
  for (int n = 0; n < 20 && a.report_seq() == 0; ++n) iteration();
  ASSERT_GT(a.report_seq(), 0U);
  const Report r = latest(a);
  EXPECT_EQ(r.baseline_team, 1);
  EXPECT_EQ(r.cpus, 2);
  EXPECT_NEAR(r.baseline_s, 0.06, 1e-6);
  EXPECT_NEAR(r.speedup, 2.0, 1e-6);
  EXPECT_EQ(a.baseline_abandoned(), 0);
}

// A baseline that completes resets the count: a later restart starts with a fresh bound and backoff.
TEST(Analyzer, BaselineThatCompletesIsNeverAbandoned) {
  Config cfg;
  Analyzer a{cfg};
  Driver d(a);
  d.granted = 2;
  const AmdahlLoop loop{region_ids(3), 0.1, 0.9};
  ASSERT_TRUE(d.until_report(loop, 0));
  EXPECT_EQ(a.baseline_abandoned(), 0);
  EXPECT_EQ(latest(a).baseline_team, 1);
}

}  // namespace
}  // namespace cosched::sa
