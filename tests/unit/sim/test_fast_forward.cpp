// The fast-forward of steady rotations (sim/fast_forward.cpp, docs/simulator.md "Steady rotations"): skipping
// the repeated turns of a time-sharing rotation gives the run that simulates every quantum, and keeping totals
// instead of segments gives the same summary.
#include <gtest/gtest.h>

#include "qs/results.hpp"
#include "sim_test_util.hpp"

using namespace cosched;
using namespace cosched::sim;
using namespace cosched::sim::testing;

namespace {

// Jobs of the whole machine (16 CPUs), minutes long, arriving every 40 s: gang's rows (a job each) and the
// DSS windows (two jobs each, window_factor=2, so each job has 8 CPUs in every window it is in) turn for
// minutes between arrivals. With the SelfAnalyzer and the waiting-time sampler on, as by default.
std::vector<JobSpec> rotating_workload(const Apps& apps) {
  std::vector<JobSpec> jobs;
  for (int i = 0; i < 7; ++i) jobs.push_back(job(i + 1, 40.0 * i, 16, 60.0 + 15.0 * i, i % 3 ? apps.linear : apps.good));
  return jobs;
}

policy::ParamList params_of(const std::string& policy) {
  return policy == "gang" ? policy::ParamList{} : policy::ParamList{{"window_factor", "2"}};
}

std::unique_ptr<policy::Policy> make(const std::string& policy) {
  return std::move(policy::make_policy(policy, policy::Machine{16, 16, 1, 1}, params_of(policy)).value());
}

SimConfig machine16(bool fast_forward) {
  SimConfig c;
  c.cpus = 16;
  c.fast_forward = fast_forward;
  return c;
}

results::Run as_run(const Outcome& out, int cpus, std::optional<results::DeliveredTotals> delivered) {
  results::Run run;
  run.machine_cpus = cpus;
  run.jobs = out.jobs;
  run.ml = out.ml;
  run.delivered = delivered;
  return run;
}

}  // namespace

class Rotation : public ::testing::TestWithParam<const char*> {};

TEST_P(Rotation, SkippingRepeatedTurnsGivesEveryQuantumsRun) {
  Apps apps;
  const auto jobs = rotating_workload(apps);
  auto skipped = simulate(machine16(true), jobs, GetParam(), params_of(GetParam()));
  auto every = simulate(machine16(false), jobs, GetParam(), params_of(GetParam()));
  EXPECT_TRUE(same_outcome(skipped.jobs, every.jobs)) << GetParam();  // every segment, every CPU list
  EXPECT_EQ(every.stats.skipped_quanta, 0u);
  // Not vacuous: most quanta were skipped, and the run made far fewer decisions.
  EXPECT_GT(skipped.stats.skipped_quanta, 1000u) << GetParam();
  EXPECT_LT(skipped.stats.decisions * 4, every.stats.decisions) << GetParam();
}

// A run of `policy` that keeps at most `segment_bytes` of segments gives the summary and each job's mean
// CPUs of one that keeps them all (to 1e-9), with totals instead of segments in its records. Returns whether
// its segments were dropped.
static bool summary_of_totals_is_the_same(const std::string& policy, std::size_t segment_bytes) {
  Apps apps;
  const auto jobs = rotating_workload(apps);
  SimConfig totals = machine16(true);
  totals.segment_bytes = segment_bytes;
  auto pol = make(policy);
  Simulator with_totals(totals, jobs, *pol);
  with_totals.run();
  const auto delivered = with_totals.delivered();
  EXPECT_TRUE(delivered.has_value());
  Outcome t{with_totals.take_records(), with_totals.take_ml(), with_totals.stats()};
  auto s = simulate(machine16(true), jobs, policy, params_of(policy));
  for (const auto& j : t.jobs) EXPECT_TRUE(j.allocation.empty() && j.held.has_value());
  const auto a = results::summarize(as_run(t, 16, delivered))["overall"];
  const auto b = results::summarize(as_run(s, 16, std::nullopt))["overall"];
  for (const char* key : {"mean_response", "cpu_seconds", "cpu_utilisation", "makespan", "mean_execution"}) {
    EXPECT_TRUE(a[key].is_number() && b[key].is_number()) << key;
    EXPECT_NEAR(a[key].get<double>(), b[key].get<double>(), 1e-9 * std::abs(b[key].get<double>())) << key;
  }
  for (std::size_t i = 0; i < t.jobs.size(); ++i) {
    EXPECT_NEAR(t.jobs[i].mean_cpus(), s.jobs[i].mean_cpus(), 1e-9 * s.jobs[i].mean_cpus()) << i;
  }
  return with_totals.segments_dropped();
}

TEST_P(Rotation, TotalsInsteadOfSegmentsGiveTheSameSummary) {
  EXPECT_FALSE(summary_of_totals_is_the_same(GetParam(), 0));  // none kept, none dropped
}

TEST_P(Rotation, PastTheSegmentBudgetTheTotalsGoOnAlone) {
  // A budget that the first jobs' segments pass (16 KB: about 200 segments with their CPU lists): the run
  // lets them go mid-way, as cosched-sim --allocation auto past 2 GiB, and gives the summary of a run that
  // keeps every segment.
  EXPECT_TRUE(summary_of_totals_is_the_same(GetParam(), 16 * 1024));
  // A budget the run never reaches keeps them all.
  Apps apps;
  const auto jobs = rotating_workload(apps);
  SimConfig ample = machine16(true);
  ample.segment_bytes = std::size_t{1} << 30;
  auto pol = make(GetParam());
  Simulator kept(ample, jobs, *pol);
  kept.run();
  EXPECT_FALSE(kept.segments_dropped());
  EXPECT_TRUE(same_outcome(kept.take_records(), simulate(machine16(true), jobs, GetParam(), params_of(GetParam())).jobs));
}

TEST_P(Rotation, AJobEndingWithItsSliceEndsAtThatTickAfterALongSkip) {
  // Late in a long log the clock's rounding (2e-9 s at 10^7 s) times thousands of skipped turns puts a job's
  // end microseconds off the tick its last slice ends at, one way with the skip and the other without. With
  // the 1 µs tolerance of before, a job waited a whole turn more in one run and not the other (this test
  // failed so under gang and sw-dss). Jobs whose run times are whole quanta, from t = 10^7 s.
  Apps apps;
  std::vector<JobSpec> jobs;
  for (int i = 0; i < 3; ++i) jobs.push_back(job(i + 1, 1e7, 16, 1500.0 + 1000.0 * i, apps.linear));
  jobs.push_back(job(4, 1e7 + 100, 8, 2000.0, apps.linear));
  auto skipped = simulate(machine16(true), jobs, GetParam(), params_of(GetParam()));
  auto every = simulate(machine16(false), jobs, GetParam(), params_of(GetParam()));
  ASSERT_EQ(skipped.jobs.size(), every.jobs.size());
  for (std::size_t i = 0; i < every.jobs.size(); ++i) {
    EXPECT_EQ(skipped.jobs[i].allocation.size(), every.jobs[i].allocation.size()) << i;  // no turn more
    EXPECT_NEAR(skipped.jobs[i].end, every.jobs[i].end, 1e-4) << i;
  }
  EXPECT_GT(skipped.stats.skipped_quanta, 10000u) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(TimeSharing, Rotation, ::testing::Values("gang", "sw-dss", "ssw-dss"));

TEST(Rotation, APolicyWithoutARotationKeyIsNeverSkipped) {
  // vtq-dss keeps clocks of its own (eq. 7's CPU times): it offers no key, and no quantum is skipped.
  Apps apps;
  auto out = simulate(machine16(true), rotating_workload(apps), "vtq-dss", params_of("vtq-dss"));
  EXPECT_EQ(out.stats.skipped_quanta, 0u);
}
