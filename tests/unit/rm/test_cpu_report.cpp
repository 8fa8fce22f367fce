// What a job's CPUs bought (rm/accounting/cpu_report.hpp): Amdahl's law fitted to the estimate, values
// worked out by hand.
#include <gtest/gtest.h>

#include "rm/accounting/cpu_report.hpp"

namespace cosched::rm {
namespace {

policy::Perf estimate(int cpus, double speedup, double amdahl_f = -1,
                      policy::EstimateKind kind = policy::EstimateKind::waiting_time) {
  policy::Perf p;
  p.valid = true;
  p.kind = kind;
  p.cpus = cpus;
  p.speedup = speedup;
  p.efficiency = speedup / cpus;
  p.amdahl_f = amdahl_f;
  p.confidence = 0.9;
  return p;
}

TEST(CpuReport, ParallelFractionFromOnePoint) {
  // 1/S = (1 − f) + f/p: S = 4 at 16 CPUs gives f = 0.75 / 0.9375 = 0.8.
  EXPECT_NEAR(parallel_fraction(4, 16), 0.8, 1e-12);
  EXPECT_DOUBLE_EQ(parallel_fraction(8, 8), 1.0);
  EXPECT_DOUBLE_EQ(parallel_fraction(0.5, 2), 0.0);  // slower with more threads: no parallel part to keep
  EXPECT_DOUBLE_EQ(parallel_fraction(3, 1), 0.0);    // one CPU says nothing of scaling
}

TEST(CpuReport, SpeedupFourAtSixteenKeeps91PercentAtEleven) {
  // f = 0.8: S(16) = 1/(0.2 + 0.05) = 4; S(q) >= 3.6 needs 0.8/q <= 0.0778, q >= 10.3, so 11 CPUs:
  // S(11) = 1/(0.2 + 0.0727) = 3.667, 91.7 % of 4. S(10) = 3.571 keeps 89.3 %.
  const FewerCpus f = fewer_cpus(estimate(16, 4));
  ASSERT_TRUE(f.known);
  EXPECT_EQ(f.at_cpus, 16);
  EXPECT_DOUBLE_EQ(f.efficiency, 0.25);
  EXPECT_EQ(f.cpus, 11);
  EXPECT_NEAR(f.kept, (1 / (0.2 + 0.8 / 11)) / 4, 1e-12);
  EXPECT_LT(kept_speed(0.8, 10, 16), kKeptSpeed);
}

TEST(CpuReport, TheMeasuredSpeedupsOwnFitWins) {
  // The same speedup with a two-point fit f = 0.5: S(16) = 1/0.53125 = 1.882; S(6) = 1/0.5833 = 1.714 keeps
  // 91.1 %, S(5) = 1.667 keeps 88.5 %.
  const FewerCpus f = fewer_cpus(estimate(16, 4, 0.5, policy::EstimateKind::measured_speedup));
  EXPECT_EQ(f.cpus, 6);
  EXPECT_NEAR(f.kept, (1 / (0.5 + 0.5 / 6)) / (1 / (0.5 + 0.5 / 16)), 1e-12);
}

TEST(CpuReport, AJobThatScalesKeepsItsCpus) {
  // f = 1: S(q)/S(8) = q/8, 0.875 at 7 CPUs: none fewer keeps 90 %.
  const FewerCpus f = fewer_cpus(estimate(8, 8));
  EXPECT_EQ(f.cpus, 8);
  EXPECT_DOUBLE_EQ(f.kept, 1.0);
  CpuReportInput in{{{8, 10}}, {estimate(8, 8)}, 80, 10};
  const auto r = cpu_report_json(in);
  EXPECT_EQ(r["summary"], "8 CPUs at efficiency 1.00 (waiting_time, confidence 0.90); fewer CPUs would have cost "
                          "more than 10 % of its speed");
}

TEST(CpuReport, AJobSlowerWithMoreThreadsIsToldOneCpu) {
  CpuReportInput in{{{2, 4}}, {estimate(2, 0.5)}, 8, 4};
  const auto r = cpu_report_json(in);
  EXPECT_EQ(r["advice"]["cpus"], 1);
  EXPECT_EQ(r["summary"], "2 CPUs at efficiency 0.25 (waiting_time, confidence 0.90); 1 CPU would have kept 100 % of "
                          "its speed");
}

TEST(CpuReport, NotMeasuredSaysSo) {
  CpuReportInput in{{{2, 3}, {1, 1}}, {}, 7, 4};
  const auto r = cpu_report_json(in);
  EXPECT_TRUE(r["advice"].is_null());
  EXPECT_EQ(r["summary"], "7.0 CPU·s over 4.0 s; efficiency not measured (no estimate reached the RM)");
  ASSERT_EQ(r["allocations"].size(), 2u);
  EXPECT_EQ(r["allocations"][0]["cpus"], 2);  // largest first
  EXPECT_EQ(r["allocations"][0]["kind"], "not measured");
  EXPECT_DOUBLE_EQ(r["mean_cpus"].get<double>(), 1.75);
}

TEST(CpuReport, AdviceRestsOnTheLargestAllocationMeasured) {
  // Held 2 CPUs for 10 s at efficiency 0.5 (S = 1: f = 0), then 1 CPU for 30 s: the advice is about the 2,
  // and 1 CPU keeps all of S(2) = S(1) = 1.
  CpuReportInput in{{{2, 10}, {1, 30}}, {estimate(2, 1.0), estimate(1, 0.98)}, 50, 40};
  const auto r = cpu_report_json(in);
  EXPECT_EQ(r["advice"]["at_cpus"], 2);
  EXPECT_EQ(r["advice"]["cpus"], 1);
  EXPECT_DOUBLE_EQ(r["allocations"][0]["efficiency"].get<double>(), 0.5);
  const std::string text = cpu_report_text(r);
  EXPECT_NE(text.find("     2 CPUs for     10.0 s: efficiency 0.50, speedup 1.00"), std::string::npos) << text;
  EXPECT_NE(text.find("     1 CPUs for     30.0 s: efficiency 0.98"), std::string::npos) << text;
}

}  // namespace
}  // namespace cosched::rm
