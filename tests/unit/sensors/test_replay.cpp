#include <gtest/gtest.h>

#include "sensors/app_reported.hpp"
#include "sensors/replay.hpp"

namespace cosched::sensors {
namespace {

Interval at(policy::JobId id, double since_arrival) {
  Interval iv;
  iv.id = id;
  iv.start = 0;
  iv.end = 0.1;
  iv.since_arrival = since_arrival;
  return iv;
}

TEST(Replay, RatesHoldFromTheirTimeOn) {
  auto r = Replay::parse("# job seconds bytes/s\n1 0 1e9\n1 2.5 3e9  # a burst\n* 0 5e6\n\n", "t.txt");
  ASSERT_TRUE(r) << r.error().message;
  std::vector<Reading> out;
  (*r)->sample({at(1, 0.1), at(1, 2.5), at(1, 9), at(2, 0.3)}, out);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_DOUBLE_EQ(out[0].bytes_per_s, 1e9);
  EXPECT_DOUBLE_EQ(out[1].bytes_per_s, 3e9);
  EXPECT_DOUBLE_EQ(out[2].bytes_per_s, 3e9);
  EXPECT_DOUBLE_EQ(out[3].bytes_per_s, 5e6);  // `*` for jobs without their own lines
  EXPECT_TRUE(out[3].has_rate);
}

TEST(Replay, NothingBeforeTheFirstLine) {
  auto r = Replay::parse("1 1.0 1e9\n", "t.txt");
  ASSERT_TRUE(r);
  std::vector<Reading> out;
  (*r)->sample({at(1, 0.5), at(3, 5)}, out);
  EXPECT_TRUE(out.empty());
}

TEST(Replay, ErrorsNameTheLine) {
  for (const char* bad : {"1 0\n", "x 0 1e9\n", "0 0 1e9\n", "1 -1 1e9\n", "1 0 -5\n", "1 0 1e9 extra\n", "1 0 nan\n"}) {
    auto r = Replay::parse(std::string("# ok\n") + bad, "rates.txt");
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, Errc::parse_error);
    EXPECT_EQ(r.error().message.rfind("rates.txt:2: ", 0), 0u) << r.error().message;
  }
  auto missing = Replay::load("/nonexistent/rates.txt");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, Errc::io_error);
}

TEST(AppReported, RateOverTheInterval) {
  AppReported a;
  std::vector<Reading> out;
  Interval iv = at(1, 1);
  iv.start = 1.0;
  iv.end = 1.2;
  iv.reports_bytes = true;
  iv.bytes = 4e8;
  Interval silent = iv;
  silent.id = 2;
  silent.reports_bytes = false;
  Interval zero = iv;
  zero.id = 3;
  zero.bytes = 0;
  a.sample({iv, silent, zero}, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NEAR(out[0].bytes_per_s, 2e9, 1);
  EXPECT_EQ(out[1].id, 3);  // reporting 0 bytes is a reading: "this job moves nothing"
  EXPECT_DOUBLE_EQ(out[1].bytes_per_s, 0);
}

}  // namespace
}  // namespace cosched::sensors
