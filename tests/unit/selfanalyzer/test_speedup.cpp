// Speedup arithmetic: medians, spread, the Amdahl fit (exact recovery and guards), the normalisation.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "selfanalyzer/speedup.hpp"

namespace cosched::sa {
namespace {

constexpr double kTight = 1e-9;

TEST(Median, OddEvenAndInputUntouched) {
  const double odd[] = {5.0, 1.0, 3.0, 9.0, 2.0};
  EXPECT_DOUBLE_EQ(median_of(odd, 5), 3.0);
  EXPECT_DOUBLE_EQ(odd[0], 5.0);  // not reordered
  const double even[] = {4.0, 1.0, 3.0, 2.0};
  EXPECT_DOUBLE_EQ(median_of(even, 4), 2.5);
  EXPECT_DOUBLE_EQ(median_of(odd, 1), 5.0);
  EXPECT_DOUBLE_EQ(median_of(odd, 0), 0.0);
}

TEST(Spread, RangeOverMedian) {
  const double v[] = {0.9, 1.0, 1.1};
  EXPECT_NEAR(relative_spread(v, 3, 1.0), 0.2, kTight);
  EXPECT_DOUBLE_EQ(relative_spread(v, 1, 1.0), 0.0);
  EXPECT_DOUBLE_EQ(relative_spread(v, 3, 0.0), 0.0);
  const double same[] = {2.0, 2.0, 2.0};
  EXPECT_DOUBLE_EQ(relative_spread(same, 3, 2.0), 0.0);
}

class ExactFit : public ::testing::TestWithParam<std::tuple<double, int, int>> {};

TEST_P(ExactFit, RecoversFAndT1FromTwoPointsOfTheCurve) {
  const auto [f, p_a, p_b] = GetParam();
  for (const double t1 : {1.0, 3.7, 250e-6}) {
    const double t_a = amdahl_time(t1, f, p_a);
    const double t_b = amdahl_time(t1, f, p_b);
    for (const bool swapped : {false, true}) {
      const AmdahlFit fit = swapped ? fit_amdahl(p_b, t_b, p_a, t_a) : fit_amdahl(p_a, t_a, p_b, t_b);
      ASSERT_EQ(fit.status, FitStatus::measured);
      EXPECT_NEAR(fit.f, f, 1e-9);
      EXPECT_NEAR(fit.t1 / t1, 1.0, 1e-9);
    }
    const SpeedupEstimate est = estimate_speedup(p_a, t_a, p_b, t_b, std::nan(""));
    EXPECT_EQ(est.status, FitStatus::measured);
    EXPECT_NEAR(est.speedup, 1.0 / ((1.0 - f) + f / p_b), 1e-9);
    EXPECT_NEAR(est.efficiency, est.speedup / p_b, 1e-9);
  }
}

INSTANTIATE_TEST_SUITE_P(Curves, ExactFit,
                         ::testing::Combine(::testing::Values(0.0, 0.5, 0.9, 0.99, 1.0),
                                            ::testing::Values(1, 2, 3),
                                            ::testing::Values(4, 7, 16, 64)));

TEST(AmdahlFit, OneCpuBaselineGivesTheRatioWhateverF) {
  const SpeedupEstimate est = estimate_speedup(1, 10.0, 8, 2.0, std::nan(""));
  EXPECT_NEAR(est.speedup, 5.0, kTight);
  EXPECT_NEAR(est.efficiency, 5.0 / 8, kTight);
  EXPECT_NEAR(est.t1, 10.0, kTight);
}

TEST(AmdahlFit, SameTeamSizeHasNoF) {
  const AmdahlFit fit = fit_amdahl(4, 1.0, 4, 0.9);
  EXPECT_EQ(fit.status, FitStatus::same_cpus);
  EXPECT_TRUE(std::isnan(fit.f));
}

TEST(AmdahlFit, SameTeamSizeEstimateAssumesFOrUsesTheEarlierOne) {
  // Baseline at 1: f is moot, the speedup is the plain ratio.
  SpeedupEstimate est = estimate_speedup(1, 2.0, 1, 2.0, std::nan(""));
  EXPECT_EQ(est.status, FitStatus::assumed);
  EXPECT_NEAR(est.speedup, 1.0, kTight);
  // Baseline at 2, no earlier fit: nothing below 2 was measured; f = 1 would make the baseline a speedup
  // of 2 whatever the job does. No estimate.
  est = estimate_speedup(2, 0.55, 2, 0.55, std::nan(""));
  EXPECT_EQ(est.status, FitStatus::no_lower_point);
  EXPECT_EQ(est.speedup, 0.0);
  EXPECT_EQ(est.efficiency, 0.0);
  // With an earlier f = 0.9 the normalisation is exact for that curve.
  est = estimate_speedup(2, 0.55, 2, 0.55, 0.9);
  EXPECT_NEAR(est.speedup, 1.0 / 0.55, kTight);
  EXPECT_NEAR(est.t1, 1.0, kTight);
}

TEST(AmdahlFit, NoiseOutsideTheModelIsClampedAndFlagged) {
  // Super-linear: 4 CPUs more than 4× faster than 1.
  AmdahlFit fit = fit_amdahl(1, 1.0, 4, 0.2);
  EXPECT_EQ(fit.status, FitStatus::clamped);
  EXPECT_DOUBLE_EQ(fit.f, 1.0);
  EXPECT_NEAR(fit.t1, 1.0, kTight);
  // Slower with more CPUs, slightly (noise) and a lot (contention).
  for (const double t_hi : {1.01, 5.0}) {
    fit = fit_amdahl(2, 1.0, 8, t_hi);
    EXPECT_EQ(fit.status, FitStatus::clamped) << t_hi;
    EXPECT_DOUBLE_EQ(fit.f, 0.0) << t_hi;
    EXPECT_NEAR(fit.t1, 1.0, kTight) << t_hi;
  }
  // The estimate still uses the measured time at P: speedup < 1 vs the 1-CPU-equivalent time.
  const SpeedupEstimate est = estimate_speedup(2, 1.0, 8, 5.0, std::nan(""));
  EXPECT_EQ(est.status, FitStatus::clamped);
  EXPECT_NEAR(est.speedup, 0.2, kTight);
}

TEST(AmdahlFit, RejectsZeroNegativeAndNonFiniteTimes) {
  const double bad[] = {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                        std::numeric_limits<double>::infinity()};
  for (const double t : bad) {
    EXPECT_EQ(fit_amdahl(1, t, 4, 1.0).status, FitStatus::invalid) << t;
    EXPECT_EQ(fit_amdahl(1, 1.0, 4, t).status, FitStatus::invalid) << t;
    EXPECT_EQ(estimate_speedup(1, t, 4, 1.0, 0.5).status, FitStatus::invalid) << t;
    EXPECT_EQ(estimate_speedup(1, 1.0, 4, t, 0.5).status, FitStatus::invalid) << t;
    EXPECT_EQ(estimate_speedup(4, t, 4, 1.0, 0.5).status, FitStatus::invalid) << t;
  }
  EXPECT_EQ(fit_amdahl(0, 1.0, 4, 0.5).status, FitStatus::invalid);
  EXPECT_EQ(estimate_speedup(1, 1.0, -2, 0.5, 0.5).status, FitStatus::invalid);
  EXPECT_FALSE(valid_time(0.0));
  EXPECT_TRUE(valid_time(1e-9));
}

TEST(FitStatus, Names) {
  EXPECT_STREQ(to_string(FitStatus::measured), "measured");
  EXPECT_STREQ(to_string(FitStatus::clamped), "clamped");
  EXPECT_STREQ(to_string(FitStatus::assumed), "assumed");
  EXPECT_STREQ(to_string(FitStatus::same_cpus), "same_cpus");
  EXPECT_STREQ(to_string(FitStatus::no_lower_point), "no_lower_point");
  EXPECT_STREQ(to_string(FitStatus::invalid), "invalid");
}

}  // namespace
}  // namespace cosched::sa
