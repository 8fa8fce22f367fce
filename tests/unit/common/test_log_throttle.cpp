// A peer that can trigger a log line at will must not be able to fill the disk: 291 MB of "accept: Too many
// open files" in 10 s was the failure. Throttle lets `burst` lines per period through and counts the rest.
#include <gtest/gtest.h>

#include "cosched/log.hpp"

using cosched::log::Throttle;

TEST(Throttle, LetsABurstThroughPerPeriodAndCountsTheRest) {
  Throttle t(3, 1.0);
  std::uint64_t held = 99;
  int passed = 0;
  for (int i = 0; i < 100000; ++i) {  // a tight loop within one period
    if (t.allow(10.0 + i * 1e-6, held)) ++passed;
  }
  EXPECT_EQ(passed, 3);
  ASSERT_TRUE(t.allow(11.5, held));  // the next period
  EXPECT_EQ(held, 100000u - 3u);     // reported with the first line let through
  ASSERT_TRUE(t.allow(11.6, held));
  EXPECT_EQ(held, 0u);
}

TEST(Throttle, SuppressedCountIsAppended) {
  EXPECT_EQ(cosched::log::with_suppressed("x", 0), "x");
  EXPECT_EQ(cosched::log::with_suppressed("x", 1), "x (1 similar line suppressed)");
  EXPECT_EQ(cosched::log::with_suppressed("x", 7), "x (7 similar lines suppressed)");
}
