// The SelfAnalyzer model is libcosched's Analyzer fed simulated iterations: its reports must follow the PDPA
// paper's §3.1 normalisation, checked here against the closed form written out by hand (not through
// selfanalyzer/speedup.hpp, so that a slip in either would show).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sim/analyzer_model.hpp"

using cosched::policy::Perf;
using cosched::sim::AnalyzerModel;
using cosched::sim::AnalyzerSettings;

namespace {

// Runs `n` iterations of `seconds` each at `allocation`; returns the team the Analyzer chose for the last.
int run_iterations(AnalyzerModel& a, int allocation, int n, double seconds) {
  int team = 0;
  for (int i = 0; i < n; ++i) {
    team = a.begin_iteration(allocation, false);
    a.end_iteration(seconds);
  }
  return team;
}

struct Fit {
  double f, t1;
};
// Amdahl through (p_lo, t_lo), (p_hi, t_hi): f = (R−1)/(R(1−1/p_hi) − (1−1/p_lo)), T1 = t_lo/((1−f)+f/p_lo).
Fit amdahl_by_hand(int p_lo, double t_lo, int p_hi, double t_hi) {
  const double r = t_lo / t_hi;
  const double f = (r - 1) / (r * (1 - 1.0 / p_hi) - (1 - 1.0 / p_lo));
  return {f, t_lo / ((1 - f) + f / p_lo)};
}

}  // namespace

TEST(AnalyzerModel, OneCpuBaselineGivesTheRatioOfIterationTimes) {
  AnalyzerSettings s;  // defaults: baseline 1 CPU × 3 iterations, 3 samples before a report
  AnalyzerModel a(s, 1);
  EXPECT_EQ(run_iterations(a, 4, 3, 1.0), 1);  // the baseline runs at one CPU whatever the allocation
  EXPECT_EQ(a.report_seq(), 0u);
  EXPECT_EQ(run_iterations(a, 4, 1, 0.3), 4);  // warm-up at the new team: discarded
  EXPECT_EQ(a.report_seq(), 0u);
  run_iterations(a, 4, 3, 0.3);
  ASSERT_EQ(a.report_seq(), 1u);
  Perf p;
  ASSERT_TRUE(a.perf(p));
  EXPECT_TRUE(p.valid);
  EXPECT_EQ(p.cpus, 4);
  EXPECT_EQ(p.samples, 3);
  EXPECT_NEAR(p.iteration_s, 0.3, 1e-9);
  EXPECT_NEAR(p.baseline_s, 1.0, 1e-9);
  EXPECT_NEAR(p.speedup, 1.0 / 0.3, 1e-6);
  EXPECT_NEAR(p.efficiency, 1.0 / 0.3 / 4, 1e-6);
  EXPECT_NEAR(p.amdahl_f, amdahl_by_hand(1, 1.0, 4, 0.3).f, 1e-6);
  // Every further clean iteration publishes again.
  run_iterations(a, 4, 1, 0.3);
  EXPECT_EQ(a.report_seq(), 2u);
}

TEST(AnalyzerModel, WiderBaselineIsNormalisedWithTheAmdahlFactor) {
  AnalyzerSettings s;
  s.config.baseline_cpus = 4;
  AnalyzerModel a(s, 1);
  EXPECT_EQ(run_iterations(a, 16, 3, 1.0), 4);
  run_iterations(a, 16, 4, 0.4);  // one warm-up + three samples
  Perf p;
  ASSERT_TRUE(a.perf(p));
  const Fit fit = amdahl_by_hand(4, 1.0, 16, 0.4);
  EXPECT_NEAR(p.amdahl_f, fit.f, 1e-6);
  EXPECT_NEAR(p.speedup, fit.t1 / 0.4, 1e-6);  // 8.5
  EXPECT_NEAR(p.speedup, 8.5, 1e-6);
  EXPECT_NEAR(p.efficiency, 8.5 / 16, 1e-6);
}

TEST(AnalyzerModel, AChangeOfAllocationCostsOneIterationThenReportsTheNewSize) {
  AnalyzerSettings s;
  AnalyzerModel a(s, 1);
  run_iterations(a, 8, 3, 2.0);
  run_iterations(a, 8, 4, 0.25);
  ASSERT_EQ(a.report_seq(), 1u);
  // The RM shrinks the job mid-iteration: that iteration is dirty, the next ones at 4 CPUs count.
  a.begin_iteration(8, false);
  a.region(4);
  a.end_iteration(0.4);
  EXPECT_EQ(a.report_seq(), 1u);
  run_iterations(a, 4, 2, 0.5);
  EXPECT_EQ(a.report_seq(), 1u);
  run_iterations(a, 4, 1, 0.5);
  ASSERT_EQ(a.report_seq(), 2u);
  Perf p;
  ASSERT_TRUE(a.perf(p));
  EXPECT_EQ(p.cpus, 4);
  EXPECT_NEAR(p.speedup, 2.0 / 0.5, 1e-6);
}

TEST(AnalyzerModel, DiscardedIterationsAreNotSamples) {
  AnalyzerSettings s;
  AnalyzerModel a(s, 1);
  run_iterations(a, 2, 3, 1.0);
  a.begin_iteration(2, false);  // warm-up at 2
  a.end_iteration(0.5);
  for (int i = 0; i < 3; ++i) {
    a.begin_iteration(2, true);  // libruntime's discard_iteration (e.g. the CPU set moved)
    a.end_iteration(0.5);
  }
  EXPECT_EQ(a.report_seq(), 0u);
}

TEST(AnalyzerModel, NoiseIsSeededPerJobAndOnlyPerturbsTheMeasurement) {
  AnalyzerSettings s;
  s.noise = 0.05;
  auto reports = [&](std::uint64_t seed) {
    AnalyzerModel a(s, seed);
    run_iterations(a, 8, 3, 1.0);
    std::vector<double> out;
    for (int i = 0; i < 20; ++i) {
      run_iterations(a, 8, 1, 0.125);
      Perf p;
      if (a.perf(p)) out.push_back(p.iteration_s);
    }
    return out;
  };
  const auto a = reports(7);
  const auto b = reports(7);
  const auto c = reports(8);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  bool any_off = false;
  for (double t : a) {
    EXPECT_NEAR(t, 0.125, 0.125 * 0.3);  // a median of 5 samples at 5 % noise
    any_off |= std::abs(t - 0.125) > 1e-6;
  }
  EXPECT_TRUE(any_off);
}
