// The contention model forward (the simulator) and backward (the counter-free sensor), with worked numbers.
#include <gtest/gtest.h>

#include "sensors/contention_model.hpp"
#include "cosched/rate.hpp"

namespace cosched::sensors {
namespace {

// The paper's machine (Antonopoulos et al. §3): STREAM sustains 29.5 bus transactions/µs of 64 bytes, BBMA
// alone 23.6; k = 2.5.
Calibration paper() {
  Calibration c;
  c.machine_bytes_per_s = 29.5 * 64e6;
  c.thread_bytes_per_s = 23.6 * 64e6;
  c.contention = 2.5;
  return c;
}

TEST(ContentionModel, NoExcessNoSlowdown) {
  // One BBMA and one nBBMA: D = 23.6 < 29.5 transactions/µs.
  double e = -1;
  auto s = model_slowdowns({{1, 1.0}, {1, 0.0}}, paper(), &e);
  EXPECT_DOUBLE_EQ(e, 0);
  EXPECT_DOUBLE_EQ(s[0], 1);
  EXPECT_DOUBLE_EQ(s[1], 1);
}

TEST(ContentionModel, SlowdownInProportionToTheExcess) {
  // Two BBMAs: D = 47.2, e = 47.2/29.5 − 1 = 0.6; s = 1 + 2.5 · 1 · 0.6 = 2.5. A half memory-bound
  // 2-thread job next to them: D = 47.2 + 23.6 = 70.8, e = 1.4, s = 1 + 2.5 · 0.5 · 1.4 = 2.75.
  double e = 0;
  auto s = model_slowdowns({{1, 1.0}, {1, 1.0}}, paper(), &e);
  EXPECT_NEAR(e, 0.6, 1e-12);
  EXPECT_NEAR(s[0], 2.5, 1e-12);
  s = model_slowdowns({{2, 0.5}, {1, 1.0}, {1, 1.0}}, paper(), &e);
  EXPECT_NEAR(e, 1.4, 1e-12);
  EXPECT_NEAR(s[0], 2.75, 1e-12);
  EXPECT_NEAR(s[1], 4.5, 1e-12);
}

TEST(ContentionModel, UncalibratedMeansNoSlowdown) {
  auto s = model_slowdowns({{1, 1.0}, {1, 1.0}}, Calibration{});
  EXPECT_DOUBLE_EQ(s[0], 1);
}

TEST(ContentionModel, BackwardRecoversTheFractions) {
  const std::vector<Demand> jobs = {{2, 0.5}, {1, 1.0}, {1, 0.2}};
  const auto s = model_slowdowns(jobs, paper());
  std::vector<double> m;
  double e = 0;
  ASSERT_TRUE(infer_memory_fractions(s, {2, 1, 1}, 0, paper(), m, &e));
  ASSERT_EQ(m.size(), 3u);
  EXPECT_NEAR(m[0], 0.5, 1e-9);
  EXPECT_NEAR(m[1], 1.0, 1e-9);
  EXPECT_NEAR(m[2], 0.2, 1e-9);
}

TEST(ContentionModel, ASlowdownWithinTheNoiseBandIsNoTraffic) {
  // m = 0.05 next to a BBMA and a half memory-bound job: e = 0.64, s = 1 + 2.5 · 0.05 · 0.64 = 1.08, below
  // the 10 % band: read as 0 (its 1.18 GB/s hide in the noise), the others still recovered.
  const std::vector<Demand> jobs = {{2, 0.5}, {1, 1.0}, {1, 0.05}};
  const auto s = model_slowdowns(jobs, paper());
  EXPECT_NEAR(s[2], 1.08, 0.005);
  std::vector<double> m;
  ASSERT_TRUE(infer_memory_fractions(s, {2, 1, 1}, 0, paper(), m));
  EXPECT_NEAR(m[0], 0.5, 0.01);
  EXPECT_DOUBLE_EQ(m[2], 0.0);
}

TEST(ContentionModel, BackwardCountsNeighboursWithoutAMeasurement) {
  // Two BBMAs, only one of them measured: the other's demand (23.6 tr/µs) is known from before.
  const Calibration c = paper();
  const auto s = model_slowdowns({{1, 1.0}, {1, 1.0}}, c);
  std::vector<double> m;
  ASSERT_TRUE(infer_memory_fractions({s[0]}, {1}, model_demand({1, 1.0}, c), c, m));
  EXPECT_NEAR(m[0], 1.0, 1e-9);
}

TEST(ContentionModel, BackwardNeedsVisibleContention) {
  std::vector<double> m;
  EXPECT_FALSE(infer_memory_fractions({1.05, 1.02}, {1, 1}, 0, paper(), m));  // below min_slowdown (0.10)
  EXPECT_TRUE(m.empty());
  EXPECT_FALSE(infer_memory_fractions({2.0}, {1}, 0, Calibration{}, m));  // uncalibrated
}

TEST(RateText, ParsesPrefixesAndUnits) {
  EXPECT_DOUBLE_EQ(*parse_rate("29e9"), 29e9);
  EXPECT_DOUBLE_EQ(*parse_rate("29G"), 29e9);
  EXPECT_DOUBLE_EQ(*parse_rate("29GB/s"), 29e9);
  EXPECT_DOUBLE_EQ(*parse_rate("1.5 G"), 1.5e9);
  EXPECT_DOUBLE_EQ(*parse_rate("250M"), 250e6);
  EXPECT_DOUBLE_EQ(*parse_rate("0"), 0);
  for (const char* bad : {"", "G", "-1G", "12X", "nan", "3 GiB"}) {
    auto r = parse_rate(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("bad bandwidth"), std::string::npos);
  }
  EXPECT_EQ(format_rate(29.2e9), "29.20 GB/s");
  EXPECT_EQ(format_rate(250e6), "250.0 MB/s");
}

}  // namespace
}  // namespace cosched::sensors
