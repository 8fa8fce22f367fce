// The calibration file scripts/calibrate-bandwidth --output writes and cosched-rm --calibration reads, and k
// from the three measurements (worked by hand with this machine's numbers, docs/performance.md).
#include <gtest/gtest.h>

#include "sensors/calibration_file.hpp"

namespace cosched::sensors {
namespace {

TEST(Calibration, ContentionFromThePairsSlowdown) {
  // b = 33.40, B = 46.55, two BBMAs 25.61 GB/s each: s = 33.40/25.61 = 1.3042, excess 2·33.40/46.55 − 1 =
  // 0.4350, k = 0.3042/0.4350 = 0.699.
  const auto k = contention_from(33.40e9, 46.55e9, 25.61e9);
  ASSERT_TRUE(k);
  EXPECT_NEAR(*k, 0.699, 0.001);
  // Two streams within B (2b < 1.05 B): the pair says nothing about k.
  EXPECT_FALSE(contention_from(25.67e9, 46.14e9, 26.02e9));
  // No slowdown at all (a pair faster than alone): no k either.
  EXPECT_FALSE(contention_from(30e9, 40e9, 31e9));
  EXPECT_FALSE(contention_from(0, 40e9, 31e9));
  // A slowdown within noise: b = 15.6, B = 28.6, pair 15.59 GB/s each: s = 1.00064, excess 0.0909,
  // k = 0.0070 < 0.01, the least cosched-rm accepts: no k.
  EXPECT_FALSE(contention_from(15.6e9, 28.6e9, 15.59e9));
}

TEST(Calibration, ReadsWhatItWrites) {
  Measured m;
  m.thread_bytes_per_s = 33.4e9;
  m.machine_bytes_per_s = 46.55e9;
  m.pair_bytes_per_s = 25.61e9;
  m.contention = 0.70;
  const std::string text = calibration_json(m, {{"cpus", "0-1"}, {"seconds", 3}}).dump();
  auto back = parse_calibration(text, "cal.json");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_DOUBLE_EQ(back->thread_bytes_per_s, 33.4e9);
  EXPECT_DOUBLE_EQ(back->machine_bytes_per_s, 46.55e9);
  ASSERT_TRUE(back->contention);
  EXPECT_DOUBLE_EQ(*back->contention, 0.70);
  // k null: the default stays.
  Measured no_k = m;
  no_k.contention.reset();
  auto nk = parse_calibration(calibration_json(no_k, {}).dump(), "cal.json");
  ASSERT_TRUE(nk);
  EXPECT_FALSE(nk->contention);
}

TEST(Calibration, BadFilesNameTheFileAndTheField) {
  struct Case {
    const char* text;
    const char* names;
  };
  for (const Case& c : {Case{"not json", "not JSON"}, Case{"[1]", "not a JSON object"},
                        Case{R"({"thread_bandwidth": 1e9, "mem_bandwidth": 2e9})", "cosched_calibration"},
                        Case{R"({"cosched_calibration": 1, "mem_bandwidth": 2e9})", "thread_bandwidth"},
                        Case{R"({"cosched_calibration": 1, "thread_bandwidth": 1e9, "mem_bandwidth": -2})", "mem_bandwidth=-2"},
                        Case{R"({"cosched_calibration": 1, "thread_bandwidth": 1e9, "mem_bandwidth": 2e9, "contention": 500})",
                             "contention=500"}}) {
    auto r = parse_calibration(c.text, "/etc/cosched/cal.json");
    ASSERT_FALSE(r) << c.text;
    EXPECT_EQ(r.error().code, Errc::parse_error);
    EXPECT_NE(r.error().message.find("/etc/cosched/cal.json"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(c.names), std::string::npos) << r.error().message;
  }
  auto missing = load_calibration("/nonexistent/cal.json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, Errc::io_error);
}

}  // namespace
}  // namespace cosched::sensors
