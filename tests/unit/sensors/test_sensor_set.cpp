// The chain and the windows: the first backend with a rate wins per job, five samples are kept, and a change
// of backend starts a fresh window; status says which backend is "the" sensor and why others are not.
#include <gtest/gtest.h>

#include "sensors/app_reported.hpp"
#include "sensors/counter_free.hpp"
#include "sensors/replay.hpp"
#include "sensors/sensor_set.hpp"
#include "sensors_test_util.hpp"

namespace cosched::sensors {
namespace {

using test_util::machine;

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

policy::Bandwidth window(std::string source, std::vector<std::pair<double, double>> samples, int threads = 1) {
  policy::Bandwidth b;
  b.source = std::move(source);
  for (auto [at, bps] : samples) b.push({at, bps, threads});
  return b;
}

// A job of several processes (MPI ranks) is the sum of its processes' windows, instant by instant.
TEST(SumWindows, AddsTheSamplesOfOneInstantAcrossProcesses) {
  // Rank 0 sampled at 0.1 .. 0.4, rank 1 at 0.2 .. 0.4 (it joined later) and missing 0.3 (it was moved):
  // only 0.2 and 0.4 have both, 1 + 10 and 4 + 40 GB/s.
  const auto r0 = window("app-reported", {{0.1, 1e9}, {0.2, 1e9}, {0.3, 3e9}, {0.4, 4e9}}, 2);
  const auto r1 = window("app-reported", {{0.2, 10e9}, {0.4, 40e9}}, 1);
  const policy::Bandwidth sum = sum_windows({r0, r1});
  ASSERT_EQ(sum.count, 2);
  EXPECT_DOUBLE_EQ(sum.samples[0].at, 0.2);
  EXPECT_DOUBLE_EQ(sum.samples[0].bytes_per_s, 11e9);
  EXPECT_DOUBLE_EQ(sum.latest().bytes_per_s, 44e9);
  EXPECT_EQ(sum.latest().threads, 3);
  EXPECT_EQ(sum.source, "app-reported");
  // Per thread, as the policies read it: (11/3 + 44/3) / 2 GB/s.
  EXPECT_NEAR(sum.mean_per_thread(5), 55e9 / 6, 1);
}

TEST(SumWindows, ProcessesWithoutSamplesTakeNoPartAndSourcesAreNamed) {
  const auto r0 = window("app-reported", {{0.1, 1e9}, {0.2, 2e9}});
  const auto r1 = window("counter-free", {{0.1, 5e9}, {0.2, 6e9}});
  policy::Bandwidth none;  // a rank no backend measured yet: no reading, not a reading of 0
  policy::Bandwidth r2 = window("counter-free", {{0.2, 1e9}});
  r2.slowdown = 1.4;
  const policy::Bandwidth sum = sum_windows({r0, r1, none});
  ASSERT_EQ(sum.count, 2);
  EXPECT_DOUBLE_EQ(sum.latest().bytes_per_s, 8e9);
  EXPECT_EQ(sum.source, "app-reported+counter-free");
  const policy::Bandwidth three = sum_windows({r0, r1, r2});
  ASSERT_EQ(three.count, 1);  // 0.1 lacks r2
  EXPECT_DOUBLE_EQ(three.latest().bytes_per_s, 9e9);
  EXPECT_DOUBLE_EQ(three.slowdown, 1.4);  // the slowest process's
  EXPECT_FALSE(sum_windows({none, none}).valid());
  // Seven common instants: the latest five are kept.
  std::vector<std::pair<double, double>> many;
  for (int k = 1; k <= 7; ++k) many.push_back({0.1 * k, 1e9 * k});
  const policy::Bandwidth long_sum = sum_windows({window("a", many), window("a", many)});
  ASSERT_EQ(long_sum.count, 5);
  EXPECT_DOUBLE_EQ(long_sum.samples[0].bytes_per_s, 6e9);
  EXPECT_DOUBLE_EQ(long_sum.latest().bytes_per_s, 14e9);
}

TEST(SensorSet, JobsOfSeveralProcessesAreSummedForMemoryAndNetwork) {
  SensorSet s = app_then_counter_free();
  Interval a = app(1, 0.1, 1e8), b = app(2, 0.1, 3e8);  // 1 and 3 GB/s over 0.1 s
  a.counts_network = true;
  a.net_bytes = 2e6;  // 20 MB/s
  b.counts_network = true;
  b.net_bytes = 4e6;
  s.sample({a, b});
  EXPECT_DOUBLE_EQ(s.bandwidth(std::vector<policy::JobId>{1, 2}).latest().bytes_per_s, 4e9);
  EXPECT_EQ(s.bandwidth(std::vector<policy::JobId>{1, 2}).latest().threads, 4);
  const policy::Bandwidth net = s.network(std::vector<policy::JobId>{1, 2});
  ASSERT_TRUE(net.valid());
  EXPECT_EQ(net.source, "pmpi");
  EXPECT_DOUBLE_EQ(net.latest().bytes_per_s, 60e6);
  EXPECT_DOUBLE_EQ(s.network(1).latest().bytes_per_s, 20e6);
  EXPECT_EQ(s.job_json(1)["network"]["source"], "pmpi");
}

TEST(SensorSet, NetworkOnlyForProcessesTheWrappersCount) {
  SensorSet s;  // no memory backend: the network sensor works all the same
  Interval rank = app(1, 0.1, 0), plain = app(2, 0.1, 0);
  rank.counts_network = true;
  rank.net_bytes = 0;  // an MPI rank that was quiet this interval: a reading of 0
  s.sample({rank, plain});
  ASSERT_TRUE(s.network(1).valid());
  EXPECT_DOUBLE_EQ(s.network(1).latest().bytes_per_s, 0);
  EXPECT_FALSE(s.network(2).valid());
  EXPECT_FALSE(s.bandwidth(1).valid());
  EXPECT_EQ(s.status_json()["network"], "pmpi");
}

TEST(SensorSet, ObserversFillEstimatesOnly) {
  std::vector<std::unique_ptr<Backend>> chain, observers;
  chain.push_back(std::make_unique<CounterFree>(machine()));
  observers.push_back(std::make_unique<AppReported>());
  SensorSet s(std::move(chain), {}, machine(), std::move(observers));
  s.sample({app(1, 0.1, 1e9)});
  EXPECT_FALSE(s.bandwidth(1).valid());  // the counter-free sensor has no reading yet; app-reported is not used
  EXPECT_DOUBLE_EQ(s.estimates(1).at("app-reported"), 1e10);
  EXPECT_EQ(s.observers(), std::vector<std::string>{"app-reported"});
}

}  // namespace
}  // namespace cosched::sensors
