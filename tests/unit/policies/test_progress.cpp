// Progress without counters (policies/coschedule/progress.hpp, interference.hpp): Feliu's eq. 6.1 with rates,
// the expiry rules of §6.2.4 (40 scheduled quanta, close to expire at 20), the learned interference matrix
// and the bounded exploration. Every expected value is worked out in the comments.
#include <gtest/gtest.h>

#include "policies/coschedule/interference.hpp"
#include "policies/coschedule/progress.hpp"

using namespace cosched::policy;

namespace {

Rate rate(double per_s, double seconds, std::vector<JobId> with, std::uint64_t seq, double at = 0,
          std::string source = "app-work", int threads = 1) {
  Rate r;
  r.latest = RateSample{at, seconds, per_s, threads, std::move(source), std::move(with)};
  r.seq = seq;
  return r;
}

}  // namespace

TEST(Progress, AloneEstimateThenEquationSixOne) {
  ProgressTracker t;  // base quantum 200 ms
  EXPECT_TRUE(t.expired(1));
  t.begin_estimate(1);
  // Two 100 ms samples alone in its group during the estimation quantum: the rate alone is their mean, 90/s;
  // each adds 0.1/0.2 = 0.5 of progress (eq. 6.1: co-run = alone in an estimation quantum).
  EXPECT_EQ(t.feed(1, rate(100, 0.1, {}, 1)), ProgressTracker::Use::alone_estimate);
  EXPECT_EQ(t.feed(1, rate(80, 0.1, {}, 2)), ProgressTracker::Use::alone_estimate);
  t.end_estimate(1);
  EXPECT_DOUBLE_EQ(t.find(1)->alone, 90.0);
  EXPECT_DOUBLE_EQ(t.progress(1), 1.0);
  EXPECT_FALSE(t.expired(1));
  // Co-run at 45/s for a 200 ms interval: 45/90 × 0.2/0.2 = 0.5.
  EXPECT_EQ(t.feed(1, rate(45, 0.2, {2}, 3)), ProgressTracker::Use::progress);
  EXPECT_DOUBLE_EQ(t.progress(1), 1.5);
  EXPECT_DOUBLE_EQ(*t.slowdown(1, rate(45, 0.2, {2}, 3).latest), 2.0);
  // Faster than alone (noise): the ratio is capped at 1, 0.1/0.2 × 1 = 0.5.
  EXPECT_EQ(t.feed(1, rate(120, 0.1, {2}, 4)), ProgressTracker::Use::progress);
  EXPECT_DOUBLE_EQ(t.progress(1), 2.0);
  // The same sample twice is counted once.
  EXPECT_EQ(t.feed(1, rate(120, 0.1, {2}, 4)), ProgressTracker::Use::stale);
  EXPECT_DOUBLE_EQ(t.progress(1), 2.0);
}

TEST(Progress, ExpiresAfterFortyScheduledQuantaCloseToExpireAtTwenty) {
  ProgressTracker t;
  t.begin_estimate(7);
  t.feed(7, rate(50, 0.1, {}, 1));
  t.end_estimate(7);
  for (int q = 1; q <= 40; ++q) {
    t.scheduled(7);
    EXPECT_EQ(t.close_to_expire(7), q >= 20) << "after " << q << " scheduled quanta";
    EXPECT_EQ(t.expired(7), q >= 40) << "after " << q << " scheduled quanta";
  }
  // A new estimation starts the count again and replaces the rate (the first sample of a new estimation).
  t.begin_estimate(7);
  t.feed(7, rate(60, 0.1, {}, 2));
  t.end_estimate(7);
  EXPECT_DOUBLE_EQ(t.find(7)->alone, 60.0);
  EXPECT_FALSE(t.close_to_expire(7));
}

TEST(Progress, SettingsChangeTheExpiry) {
  ProgressTracker t(ProgressSettings{10, 5, 0.1});
  t.begin_estimate(1);
  t.feed(1, rate(10, 0.1, {}, 1));
  t.end_estimate(1);
  EXPECT_DOUBLE_EQ(t.progress(1), 1.0);  // 0.1 s of alone work is one base quantum of 100 ms
  for (int q = 0; q < 5; ++q) t.scheduled(1);
  EXPECT_TRUE(t.close_to_expire(1));
  EXPECT_FALSE(t.expired(1));
  for (int q = 0; q < 5; ++q) t.scheduled(1);
  EXPECT_TRUE(t.expired(1));
}

TEST(Progress, NoComparableEstimateCountsAsAlone) {
  ProgressTracker t;
  // No estimate yet: the job progresses as if alone (0.1/0.2 = 0.5) and stays expired.
  EXPECT_EQ(t.feed(3, rate(10, 0.1, {4}, 1)), ProgressTracker::Use::no_estimate);
  EXPECT_DOUBLE_EQ(t.progress(3), 0.5);
  EXPECT_TRUE(t.expired(3));
  // An alone sample outside an estimation quantum is ordinary progress, not an estimate.
  EXPECT_EQ(t.feed(3, rate(10, 0.1, {}, 2)), ProgressTracker::Use::no_estimate);
  EXPECT_DOUBLE_EQ(t.find(3)->alone, 0.0);
  t.begin_estimate(3);
  t.feed(3, rate(10, 0.1, {}, 3));
  t.end_estimate(3);
  // Another thread count, or another source, does not compare with the estimate. The thread count keeps it
  // valid (an allocation may come back to it); another source expires it at once, so the policy measures the
  // job again in the source it now has.
  EXPECT_EQ(t.feed(3, rate(5, 0.1, {4}, 4, 0, "app-work", 2)), ProgressTracker::Use::no_estimate);
  EXPECT_FALSE(t.expired(3));
  EXPECT_EQ(t.feed(3, rate(5, 0.1, {4}, 5, 0, "iterations")), ProgressTracker::Use::no_estimate);
  EXPECT_FALSE(t.slowdown(3, rate(5, 0.1, {4}, 5, 0, "iterations").latest).has_value());
  EXPECT_TRUE(t.expired(3));
  // The next estimation, in the new source, is valid again.
  t.begin_estimate(3);
  EXPECT_EQ(t.feed(3, rate(6, 0.1, {}, 6, 0, "iterations")), ProgressTracker::Use::alone_estimate);
  t.end_estimate(3);
  EXPECT_FALSE(t.expired(3));
  EXPECT_DOUBLE_EQ(*t.slowdown(3, rate(3, 0.1, {4}, 7, 0, "iterations").latest), 2.0);
}

TEST(Interference, MovingMeanAndGroupShares) {
  InterferenceMatrix m;  // alpha 0.3
  m.add(1, {2}, 2.0, 1.0);
  EXPECT_DOUBLE_EQ(m.predict(1, 2), 2.0);
  m.add(1, {2}, 1.0, 2.0);  // 0.3 × 1.0 + 0.7 × 2.0 = 1.7
  EXPECT_DOUBLE_EQ(m.predict(1, 2), 1.7);
  EXPECT_EQ(m.find(1, 2)->samples, 2);
  // Two partners share the excess of 1.6 in proportion to their predicted excess (+ 0.001): job 2 0.7, job 3
  // unseen, 1 + (0.7 (what 1 suffers) + 0 (what 3 inflicts)) / 2 = 1.35 → 0.35. Shares 0.6 × 0.701/1.052 and
  // 0.6 × 0.351/1.052; (1,2) = 0.3 × 1.39981 + 0.7 × 1.7 = 1.60994, (1,3) = 1.20019 (its first sample).
  EXPECT_NEAR(m.predict(1, 3), 1.35, 1e-12);
  m.add(1, {2, 3}, 1.6, 3.0);
  const double s2 = 1 + 0.6 * 0.701 / 1.052;
  const double s3 = 1 + 0.6 * 0.351 / 1.052;
  EXPECT_NEAR(m.predict(1, 2), 0.3 * s2 + 0.7 * 1.7, 1e-12);
  EXPECT_NEAR(m.predict(1, 3), s3, 1e-12);
  // Excesses add: 1 + 0.60994 + 0.20019.
  EXPECT_NEAR(m.predict_group(1, {1, 2, 3}), 1 + (0.3 * s2 + 0.7 * 1.7 - 1) + (s3 - 1), 1e-12);
  // Stale after 8 s: the entry is unseen again and its prediction falls back to the prior (nothing fresh: 1).
  m.set_now(11.5);
  EXPECT_FALSE(m.seen(1, 3, 11.5));
  EXPECT_DOUBLE_EQ(m.predict(1, 2), 1.0);
}

TEST(Interference, UnseenPairsArePredictedFromTheirJobs) {
  InterferenceMatrix m;
  m.add(1, {2}, 1.5, 1.0);  // job 2 inflicts 0.5 on job 1
  m.add(3, {2}, 1.1, 1.0);  // and 0.1 on job 3: it inflicts 0.3 on average
  m.add(4, {3}, 1.2, 1.0);  // job 4 suffers 0.2 on average
  // ŝ(4 | 2), unseen: 1 + (0.2 (4 suffers) + 0.3 (2 inflicts)) / 2.
  EXPECT_NEAR(m.predict(4, 2), 1.25, 1e-12);
  // ŝ(2 | 4): job 2 suffers nothing known, job 4 inflicts nothing known: 1.
  EXPECT_DOUBLE_EQ(m.predict(2, 4), 1.0);
  EXPECT_NEAR(m.pair_cost(4, 2), 2.25, 1e-12);
  EXPECT_NEAR(m.inflicts(2), 0.3, 1e-12);
  EXPECT_NEAR(m.suffers(4), 0.2, 1e-12);
  m.forget(2);
  EXPECT_DOUBLE_EQ(m.inflicts(2), 0.0);
  EXPECT_EQ(m.find(1, 2), nullptr);
}

TEST(Interference, ExplorationIsBoundedAndPicksTheCheapestUnseenPair) {
  Explorer x(4);
  std::vector<bool> due;
  for (int q = 0; q < 8; ++q) due.push_back(x.due());
  EXPECT_EQ(due, (std::vector<bool>{false, false, false, true, false, false, false, true}));
  x.record(0.25);
  x.record(-1);  // a forced schedule predicted better than the free one costs nothing
  EXPECT_EQ(x.stats().quanta, 8U);
  EXPECT_EQ(x.stats().explored, 2U);
  EXPECT_DOUBLE_EQ(x.stats().predicted_cost, 0.25);
  Explorer off(0);
  EXPECT_FALSE(off.due());

  InterferenceMatrix m;
  m.add(1, {2}, 2.0, 1.0);
  m.add(2, {1}, 2.0, 1.0);  // (1,2) seen both ways
  m.add(3, {1}, 1.0, 1.0);  // (1,3) seen one way only: still unseen
  // Unseen: (1,3): ŝ(1|3) = 1 + (1 (1 suffers 1.0) + 0) / 2 = 1.5, ŝ(3|1) = 1.0 (seen) → 2.5; (2,3): ŝ(2|3) =
  // 1.5, ŝ(3|2) = 1 + (0 + 1 (2 inflicts 1.0)) / 2 = 1.5 → 3.0. The cheapest is (1,3).
  auto p = cheapest_unseen({1, 2, 3}, m, 1.0);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(*p, (std::pair<JobId, JobId>{1, 3}));
  EXPECT_FALSE(cheapest_unseen({1, 2}, m, 1.0).has_value());
}
