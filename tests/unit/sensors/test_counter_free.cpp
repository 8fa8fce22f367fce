// The counter-free sensor against the model it inverts: jobs whose iteration times follow the contention
// model get the model's consumption back, once they have been seen alone and under contention.
#include <gtest/gtest.h>

#include "sensors/counter_free.hpp"
#include "sensors_test_util.hpp"

namespace cosched::sensors {
namespace {

using test_util::machine;

struct Model {
  policy::JobId id;
  int threads;
  double m;          // memory fraction
  double alone_s;    // iteration time alone
};

// One interval of `running` side by side, iteration times from the model.
std::vector<Interval> interval(const std::vector<Model>& running, const Calibration& c, double t) {
  std::vector<Demand> d;
  for (const auto& j : running) d.push_back({j.threads, j.m});
  const auto s = model_slowdowns(d, c);
  std::vector<Interval> out;
  for (std::size_t i = 0; i < running.size(); ++i) {
    Interval iv;
    iv.id = running[i].id;
    iv.start = t - 0.1;
    iv.end = t;
    iv.threads = running[i].threads;
    iv.iteration_s = running[i].alone_s * s[i];
    iv.team = running[i].threads;
    out.push_back(iv);
  }
  return out;
}

const Reading* find(const std::vector<Reading>& r, policy::JobId id) {
  for (const auto& x : r) {
    if (x.id == id) return &x;
  }
  return nullptr;
}

TEST(CounterFree, LearnsFromContentionAndReportsConsumption) {
  const Calibration c = machine();
  CounterFree cf(c);
  const Model bbma{1, 1, 1.0, 0.010};
  const Model nbbma{2, 1, 0.02, 0.004};
  const Model bbma2{3, 1, 1.0, 0.010};
  std::vector<Reading> out;
  // Alone first: the reference iteration times; nothing known about memory yet.
  cf.sample(interval({bbma}, c, 0.1), out);
  cf.sample(interval({nbbma}, c, 0.2), out);
  cf.sample(interval({bbma2}, c, 0.3), out);
  for (const auto& r : out) {
    EXPECT_FALSE(r.has_rate);
    EXPECT_DOUBLE_EQ(r.slowdown, 1.0);
  }
  // BBMA next to BBMA: 2 × 25 = 50 GB/s on 29 → e = 0.724, s = 2.23; both learn m = 1.
  out.clear();
  cf.sample(interval({bbma, bbma2}, c, 0.4), out);
  const Reading* r = find(out, 1);
  ASSERT_NE(r, nullptr);
  ASSERT_TRUE(r->has_rate);
  const double s = 1 + 1.7 * (50.0 / 29.0 - 1);
  EXPECT_NEAR(r->slowdown, s, 1e-9);
  EXPECT_NEAR(r->bytes_per_s, 25e9 / s, 1e3);
  // BBMA next to nBBMA: no visible contention (25.5 GB/s < 29): the fractions learned stand. nBBMA has
  // no fraction, but has now run next to someone else than at first (alone) and was not slowed: 0 bytes/s,
  // the optimistic guess.
  out.clear();
  cf.sample(interval({bbma, nbbma}, c, 0.5), out);
  r = find(out, 1);
  ASSERT_NE(r, nullptr);
  EXPECT_NEAR(r->bytes_per_s, 25e9, 1e3);
  r = find(out, 2);
  ASSERT_NE(r, nullptr);
  ASSERT_TRUE(r->has_rate);
  EXPECT_DOUBLE_EQ(r->bytes_per_s, 0);
  // nBBMA between the two BBMAs (3 jobs on a 3-CPU machine): contention visible, nBBMA slowed by 2.5 %,
  // within the noise band: m = 0.
  out.clear();
  cf.sample(interval({bbma, nbbma, bbma2}, c, 0.6), out);
  r = find(out, 2);
  ASSERT_NE(r, nullptr);
  ASSERT_TRUE(r->has_rate);
  EXPECT_NEAR(r->slowdown, 1.025, 0.001);
  EXPECT_DOUBLE_EQ(r->bytes_per_s, 0);
}

TEST(CounterFree, AloneIsTheFastestIntervalAtThatTeamSize) {
  const Calibration c = machine();
  CounterFree cf(c);
  std::vector<Reading> out;
  Interval iv;
  iv.id = 7;
  iv.start = 0;
  iv.end = 0.1;
  iv.threads = 2;
  iv.team = 2;
  iv.iteration_s = 0.02;  // first seen slowed
  cf.sample({iv}, out);
  iv.iteration_s = 0.01;  // then faster: the new reference
  cf.sample({iv}, out);
  iv.iteration_s = 0.015;
  cf.sample({iv}, out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_DOUBLE_EQ(out[0].slowdown, 1.0);
  EXPECT_DOUBLE_EQ(out[1].slowdown, 1.0);
  EXPECT_DOUBLE_EQ(out[2].slowdown, 1.5);
  // Another team size has its own reference.
  iv.team = 1;
  iv.iteration_s = 0.03;
  out.clear();
  cf.sample({iv}, out);
  EXPECT_DOUBLE_EQ(out[0].slowdown, 1.0);
}

TEST(CounterFree, UncalibratedGivesSlowdownsOnly) {
  CounterFree cf(Calibration{});
  std::vector<Reading> out;
  Interval a;
  a.id = 1;
  a.end = 0.1;
  a.team = 1;
  a.iteration_s = 0.01;
  cf.sample({a}, out);
  a.iteration_s = 0.03;
  cf.sample({a}, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[1].has_rate);
  EXPECT_DOUBLE_EQ(out[1].slowdown, 3.0);
}

TEST(CounterFree, NoReadingUntilAJobHasMetOtherNeighbours) {
  // Two jobs that have only ever run together: each one's "alone" is the other's company, so nothing is
  // known; no reading at all (not even the optimistic 0).
  CounterFree cf(machine());
  std::vector<Reading> out;
  const Model a{1, 1, 1.0, 0.010};
  const Model b{2, 1, 1.0, 0.010};
  for (int k = 1; k <= 3; ++k) cf.sample(interval({a, b}, machine(), 0.1 * k), out);
  for (const auto& r : out) EXPECT_FALSE(r.has_rate);
  // Now one runs alone: it is 2.2 times faster. It has met other company (none), is unslowed: 0 for now;
  // back together, both are slowed against that: contention visible, m = 1 learned for the measured one.
  out.clear();
  cf.sample(interval({a}, machine(), 0.4), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].has_rate);
  out.clear();
  cf.sample(interval({a, b}, machine(), 0.5), out);
  const Reading* r = find(out, 1);
  ASSERT_NE(r, nullptr);
  ASSERT_TRUE(r->has_rate);
  EXPECT_NEAR(r->slowdown, 1 + 1.7 * (50.0 / 29.0 - 1), 1e-9);
}

TEST(CounterFree, JobsWithoutIterationsGetNothing) {
  CounterFree cf(machine());
  std::vector<Reading> out;
  Interval a;
  a.id = 1;
  a.end = 0.1;
  cf.sample({a}, out);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace cosched::sensors
