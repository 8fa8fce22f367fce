// Equal_efficiency (Nguyen, Zahorjan, Vaswani 1996, as used in the PDPA paper §3.3/§5) on Amdahl curves.
#include <gtest/gtest.h>

#include "policies/space/equal_efficiency.hpp"
#include "policy_test_util.hpp"

using namespace cosched::policy;

namespace {

JobView measured(JobId id, int request, double f) {
  JobView j;
  j.id = id;
  j.request = request;
  j.perf.valid = true;
  j.perf.amdahl_f = f;
  j.perf.cpus = 4;
  j.perf.seq = 1;
  return j;
}

JobView unmeasured(JobId id, int request) {
  JobView j;
  j.id = id;
  j.request = request;
  return j;
}

using cosched::policy::testing::counts;

Snapshot machine(int cpus, std::vector<JobView> jobs) { return cosched::policy::testing::machine_of(cpus, std::move(jobs)); }

}  // namespace

TEST(EqualEfficiency, AmdahlEfficiencyCurve) {
  EXPECT_DOUBLE_EQ(amdahl_efficiency(1.0, 16), 1.0);
  EXPECT_DOUBLE_EQ(amdahl_efficiency(0.0, 4), 0.25);
  EXPECT_DOUBLE_EQ(amdahl_efficiency(0.9, 10), 1.0 / 1.9);
  EXPECT_DOUBLE_EQ(amdahl_efficiency(0.5, 1), 1.0);
}

TEST(EqualEfficiency, ParallelFractionFromFitOrFromOnePoint) {
  Perf p;
  EXPECT_FALSE(parallel_fraction(p).has_value());  // no report yet
  p.valid = true;
  p.amdahl_f = 0.93;
  EXPECT_DOUBLE_EQ(*parallel_fraction(p), 0.93);
  p.amdahl_f = -1;  // not fitted: solve E(4) = 0.8 = 1 / (4 (1 - f) + f)  ⇒  f = (4 - 1.25) / 3
  p.cpus = 4;
  p.efficiency = 0.8;
  EXPECT_NEAR(*parallel_fraction(p), 2.75 / 3.0, 1e-12);
  p.efficiency = 1.2;  // superlinear
  EXPECT_DOUBLE_EQ(*parallel_fraction(p), 1.0);
  p.cpus = 1;  // one CPU says nothing about scaling
  EXPECT_FALSE(parallel_fraction(p).has_value());
}

TEST(EqualEfficiency, TwoKnownAmdahlCurvesEndWithEqualisedEfficiencies) {
  // f = 0.95 and f = 0.8 on 24 CPUs. E_A(19) = 1/1.9 = 0.526 and E_B(5) = 1/1.8 = 0.556; one more CPU
  // to either would drop it below the other (E_A(20) = 0.513, E_B(6) = 0.5).
  EqualEfficiency p;
  auto d = p.decide(machine(24, {measured(1, 60, 0.95), measured(2, 60, 0.8)}));
  EXPECT_EQ(counts(d), (std::vector<int>{19, 5}));
  EXPECT_EQ(d.jobs[0].state, "E=0.53");
  EXPECT_EQ(d.jobs[1].state, "E=0.56");
  EXPECT_NE(d.jobs[0].reason.find("Amdahl f=0.950 extrapolates E(19)=0.53"), std::string::npos) << d.jobs[0].reason;
  // f = 0.99 vs 0.9 on 16 CPUs: 14 and 2 (E 0.885 vs 0.909).
  EXPECT_EQ(counts(p.decide(machine(16, {measured(1, 16, 0.99), measured(2, 16, 0.9)}))),
            (std::vector<int>{14, 2}));
}

TEST(EqualEfficiency, CappedAtRequestRestGoesToOthers) {
  EqualEfficiency p;
  EXPECT_EQ(counts(p.decide(machine(16, {measured(1, 3, 1.0), measured(2, 30, 0.5)}))),
            (std::vector<int>{3, 13}));
}

TEST(EqualEfficiency, EqualJobsSplitEvenlyAndTiesGoToLowestId) {
  EqualEfficiency p;
  EXPECT_EQ(counts(p.decide(machine(5, {measured(2, 8, 0.9), measured(1, 8, 0.9)}))), (std::vector<int>{2, 3}));
  EXPECT_EQ(counts(p.decide(machine(8, {measured(1, 8, 0.9), measured(2, 8, 0.9)}))), (std::vector<int>{4, 4}));
}

TEST(EqualEfficiency, UnmeasuredJobKeepsAnEqualShare) {
  EqualEfficiency p;
  // 3 jobs on 30 CPUs: the newcomer keeps 10 until it reports; the two measured jobs share the other 20.
  auto d = p.decide(machine(30, {measured(1, 30, 0.99), measured(2, 30, 0.6), unmeasured(3, 30)}));
  EXPECT_EQ(d.jobs[2].cpus, 10);
  EXPECT_EQ(d.jobs[2].state, "unmeasured");
  EXPECT_EQ(d.jobs[0].cpus + d.jobs[1].cpus, 20);
  EXPECT_GT(d.jobs[0].cpus, d.jobs[1].cpus);
}

TEST(EqualEfficiency, MoreJobsThanCpusKeepsOneEach) {
  EqualEfficiency p;
  auto d = p.decide(machine(2, {measured(1, 4, 0.9), unmeasured(2, 4), measured(3, 4, 0.5)}));
  EXPECT_EQ(counts(d), (std::vector<int>{1, 1, 1}));
  EXPECT_FALSE(d.may_start);
}

// Fits of equally scalable jobs differ in their last bits; ranking by that noise flipped allocations at
// every report and quantum (cosched-sim: 7.9 M reallocations for 1,000 jobs of a Lublin log, 102 s).
TEST(EqualEfficiency, LastBitDifferencesInTheFitDoNotDecide) {
  EqualEfficiency p;
  auto a = counts(p.decide(machine(64, {measured(1, 255, 1.0 - 1e-12), measured(2, 255, 1.0),
                                        measured(3, 255, 1.0 - 3e-13)})));
  auto b = counts(p.decide(machine(64, {measured(1, 255, 1.0), measured(2, 255, 1.0 - 1e-12),
                                        measured(3, 255, 1.0)})));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, (std::vector<int>{62, 1, 1}));  // equal efficiencies: the lowest id first
}

// A report at one CPU says nothing about scaling (a waiting-time efficiency is about 1 there whatever the
// job): the job's latest history point at more CPUs gives f instead. E = 0.8 at 2 CPUs: f = (2 − 1.25) / 1.
TEST(EqualEfficiency, AReportAtOneCpuFallsBackOnTheHistory) {
  cosched::policy::JobView j;
  j.perf.valid = true;
  j.perf.cpus = 1;
  j.perf.efficiency = 0.97;
  j.perf.speedup = 0.97;
  EXPECT_FALSE(cosched::policy::parallel_fraction(j).has_value());
  j.history.push_back({2, 1.6, 0.8, 0, 1.0});
  j.history.push_back({1, 0.97, 0.97, 0, 2.0});
  ASSERT_TRUE(cosched::policy::parallel_fraction(j).has_value());
  EXPECT_DOUBLE_EQ(*cosched::policy::parallel_fraction(j), 0.75);
}
