// The chain and the windows: the first backend with a rate wins per job, five samples are kept, and a change
// of backend starts a fresh window; status says which backend is "the" sensor and why others are not.
#include <gtest/gtest.h>

#include "sensors/app_reported.hpp"
#include "sensors/counter_free.hpp"
#include "sensors/replay.hpp"
#include "sensors/sensor_set.hpp"

namespace cosched::sensors {
namespace {

Calibration machine() {
  Calibration c;
  c.machine_bytes_per_s = 29e9;
  c.thread_bytes_per_s = 25e9;
  c.contention = 1.7;
  return c;
}

SensorSet app_then_counter_free() {
  std::vector<std::unique_ptr<Backend>> chain;
  chain.push_back(std::make_unique<AppReported>());
  chain.push_back(std::make_unique<CounterFree>(machine()));
  return SensorSet(std::move(chain), {{"perf_event", "no hardware PMU"}, {"papi", "no event"}}, machine());
}

Interval app(policy::JobId id, double t, double bytes) {
  Interval iv;
  iv.id = id;
  iv.start = t - 0.1;
  iv.end = t;
  iv.threads = 2;
  iv.reports_bytes = true;
  iv.bytes = bytes;
  return iv;
}

TEST(SensorSet, NamesTheFirstBackendThatServesEveryJob) {
  SensorSet s = app_then_counter_free();
  EXPECT_EQ(s.backend(), "counter-free");
  EXPECT_EQ(s.chain(), (std::vector<std::string>{"app-reported", "counter-free"}));
  const auto j = s.status_json();
  EXPECT_EQ(j["backend"], "counter-free");
  EXPECT_EQ(j["unit"], "bytes/s");
  EXPECT_EQ(j["window"], 5);
  EXPECT_EQ(j["unavailable"][0]["name"], "perf_event");
  EXPECT_EQ(j["unavailable"][0]["why"], "no hardware PMU");
  EXPECT_DOUBLE_EQ(j["calibration"]["mem_bandwidth"].get<double>(), 29e9);
  EXPECT_EQ(SensorSet().backend(), "none");
}

TEST(SensorSet, KeepsAWindowOfFiveSamples) {
  SensorSet s = app_then_counter_free();
  for (int k = 1; k <= 7; ++k) s.sample({app(1, 0.1 * k, 1e8 * k)});  // 1, 2, ... GB/s
  const policy::Bandwidth b = s.bandwidth(1);
  ASSERT_EQ(b.count, 5);
  EXPECT_EQ(b.source, "app-reported");
  EXPECT_NEAR(b.samples[0].bytes_per_s, 3e9, 1);
  EXPECT_NEAR(b.latest().bytes_per_s, 7e9, 1);
  EXPECT_NEAR(b.latest().at, 0.7, 1e-12);
  EXPECT_EQ(b.latest().threads, 2);
  // Per thread: (7 + 6) / 2 GB/s over 2 threads.
  EXPECT_NEAR(b.mean_per_thread(2), 3.25e9, 1);
  EXPECT_NEAR(b.mean_per_thread(100), 2.5e9, 1);  // all five: (3+4+5+6+7)/5/2
  const auto j = s.job_json(1);
  EXPECT_EQ(j["source"], "app-reported");
  EXPECT_EQ(j["samples"], 5);
  EXPECT_NEAR(j["window_bytes_per_s"].get<double>(), 5e9, 1);
  EXPECT_TRUE(s.job_json(99).is_null());
  EXPECT_FALSE(s.bandwidth(99).valid());
}

TEST(SensorSet, AppReportedBeatsCounterFreeAndBothAreKept) {
  SensorSet s = app_then_counter_free();
  Interval iv = app(1, 0.1, 1e9);
  iv.iteration_s = 0.01;
  iv.team = 2;
  s.sample({iv});
  EXPECT_EQ(s.bandwidth(1).source, "app-reported");
  EXPECT_DOUBLE_EQ(s.bandwidth(1).slowdown, 1.0);  // the counter-free slowdown rides along
  EXPECT_EQ(s.estimates(1).count("app-reported"), 1u);
}

TEST(SensorSet, AnotherBackendStartsAFreshWindow) {
  std::vector<std::unique_ptr<Backend>> chain;
  chain.push_back(std::make_unique<AppReported>());
  auto replay = Replay::parse("* 0 5e6\n", "r");
  ASSERT_TRUE(replay);
  chain.push_back(std::move(*replay));
  SensorSet s(std::move(chain), {}, Calibration{});
  EXPECT_EQ(s.backend(), "replay");
  Interval quiet = app(1, 0.1, 0);
  quiet.reports_bytes = false;
  s.sample({quiet});
  quiet.end = 0.2;
  s.sample({quiet});
  ASSERT_EQ(s.bandwidth(1).count, 2);
  EXPECT_EQ(s.bandwidth(1).source, "replay");
  // The program starts reporting: its bytes win, in a window of their own.
  s.sample({app(1, 0.3, 1e9)});
  EXPECT_EQ(s.bandwidth(1).count, 1);
  EXPECT_EQ(s.bandwidth(1).source, "app-reported");
  EXPECT_EQ(s.estimates(1).size(), 2u);  // the replayed rate is still shown next to it
  s.forget(1);
  EXPECT_FALSE(s.bandwidth(1).valid());
}

TEST(SensorSet, JobsAbsentFromARoundKeepTheirWindow) {
  SensorSet s = app_then_counter_free();
  s.sample({app(1, 0.1, 1e9), app(2, 0.1, 2e8)});
  s.sample({app(2, 0.2, 2e8)});  // job 1 was stopped
  EXPECT_EQ(s.bandwidth(1).count, 1);
  EXPECT_EQ(s.bandwidth(2).count, 2);
}

}  // namespace
}  // namespace cosched::sensors
