// What status shows of one job (rm/daemon/job_status.hpp): one schema for every job, the stopped seconds
// with the current stop counted, the CPUs of a baseline by narrowing, when a job is known not to iterate,
// and a rank shown under its job's id.
#include <gtest/gtest.h>

#include "rm/daemon/job_status.hpp"
#include "rm_test_util.hpp"

namespace cosched::rm {
namespace {

TEST(JobStatus, EveryJobHasTheSameKeysReportedOrNot) {
  sensors::SensorSet sensors;
  Job fresh = test::job_with_arena(1);
  Job reported = test::job_with_arena(2);
  reported.perf.valid = true;
  reported.perf.speedup = 1.6;
  reported.perf.efficiency = 0.8;
  reported.perf.cpus = 2;
  const auto a = job_json(fresh, {5.0, false, &sensors});
  const auto b = job_json(reported, {5.0, false, &sensors});
  ASSERT_EQ(a.size(), b.size());
  for (auto it = a.begin(); it != a.end(); ++it) EXPECT_TRUE(b.contains(it.key())) << it.key();
  EXPECT_TRUE(a["speedup"].is_null());
  EXPECT_EQ(b["speedup"], 1.6);
  EXPECT_EQ(b["measured_cpus"], 2);
}

TEST(JobStatus, StoppedSecondsCountTheStopInProgress) {
  sensors::SensorSet sensors;
  Job j = test::job_with_arena(1);
  j.stopped_s = 2.0;  // completed stops
  j.runnable = false;
  j.stopped_at = 7.0;
  const auto o = job_json(j, {10.0, false, &sensors});
  EXPECT_EQ(o["state"], "stopped");
  EXPECT_DOUBLE_EQ(o["stopped_s"].get<double>(), 5.0);  // 2.0 + (10.0 − 7.0)
  j.suspended = true;
  EXPECT_EQ(job_json(j, {10.0, false, &sensors})["state"], "suspended");
}

TEST(JobStatus, ANarrowedBaselineShowsTheCpusItRunsOn) {
  sensors::SensorSet sensors;
  Job j = test::job_with_arena(1);
  j.allocation = 4;
  j.cpus = CpuSet::range(4, 7);
  EXPECT_TRUE(job_json(j, {1.0, false, &sensors})["baseline_narrowed_to"].is_null());
  j.narrow_request = 1;
  EXPECT_EQ(job_json(j, {1.0, false, &sensors})["baseline_narrowed_to"], "4");
}

TEST(JobStatus, AJobWithNoPeriodAfterOneSecondIsNotIterative) {
  sensors::SensorSet sensors;
  Job j = test::job_with_arena(1);
  j.arrival = 3.0;
  EXPECT_TRUE(job_json(j, {3.5, false, &sensors})["iterative"].is_null());  // too early to say
  EXPECT_EQ(job_json(j, {4.0, false, &sensors})["iterative"], false);       // 1 s, no sampler ticks
  j.progress.period = 3;
  EXPECT_EQ(job_json(j, {4.0, false, &sensors})["iterative"], true);
}

TEST(JobStatus, ARankIsShownUnderItsJob) {
  sensors::SensorSet sensors;
  Job j = test::job_with_arena(12);
  EXPECT_EQ(job_json(j, {0, false, &sensors})["job"], 12);
  EXPECT_TRUE(job_json(j, {0, false, &sensors})["rank"].is_null());
  j.gang = 10;
  j.rank = 1;
  j.job_key = "mpi:run-1";
  const auto o = job_json(j, {0, true, &sensors});
  EXPECT_EQ(o["job"], 10);
  EXPECT_EQ(o["rank"], 1);
  EXPECT_EQ(o["job_key"], "mpi:run-1");
  EXPECT_EQ(o["baseline_waits"], true);
}

}  // namespace
}  // namespace cosched::rm
