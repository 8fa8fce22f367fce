// write_run → read_run gives the same Run back; jobs.csv has the documented columns and "unknown" = -1.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "results_test_util.hpp"
#include "sample_run.hpp"

namespace cosched::results {
namespace {

using sample::four_job_run;
using test_util::lines_of;
using sample::TempDir;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(RoundTrip, WritesEveryFile) {
  TempDir dir;
  ASSERT_TRUE(write_run(dir.str(), four_job_run()));
  for (const char* name :
       {"jobs.csv", "summary.json", "ml.csv", "allocation.csv", "trace.prv", "trace.pcf", "trace.row", "trace.json"}) {
    EXPECT_TRUE(std::filesystem::exists(dir.file(name))) << name;
  }
  // No temporary file is left behind.
  for (const auto& entry : std::filesystem::directory_iterator(dir.str())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

TEST(RoundTrip, JobsCsvColumns) {
  TempDir dir;
  ASSERT_TRUE(write_run(dir.str(), four_job_run()));
  auto lines = lines_of(slurp(dir.file("jobs.csv")));
  ASSERT_EQ(lines.size(), 5U);
  EXPECT_EQ(lines[0],
            "job,app,class,submit,start,end,wait,response,execution,requested,mean_cpus,exit_status,rm_id,pid");
  EXPECT_EQ(lines[2], "2,bt,bt,2,4,12,2,10,8,2,2,0,-1,-1");
  EXPECT_EQ(lines[3], "3,apsi,apsi,5,10,20,5,15,10,4,3.6,0,-1,-1");
  EXPECT_EQ(lines[4], "4,apsi,apsi,6,-1,-1,-1,-1,-1,2,2,0,-1,-1");
}

TEST(RoundTrip, ReadGivesTheRunBack) {
  results::Run original = four_job_run();
  original.jobs[0].submit = 0.1 + 0.2;  // not representable in short decimal: needs full precision
  original.jobs[0].app = "needs \"quotes\", and commas";
  original.jobs[1].exit_status = 3;
  original.jobs[1].rm_id = 17;
  original.jobs[1].pid = 4242;
  TempDir dir;
  ASSERT_TRUE(write_run(dir.str(), original));
  auto read = read_run(dir.str());
  ASSERT_TRUE(read) << read.error().message;
  const results::Run& back = *read;
  EXPECT_EQ(back.name, original.name);
  EXPECT_EQ(back.mode, original.mode);
  EXPECT_EQ(back.policy, original.policy);
  EXPECT_EQ(back.params, original.params);
  EXPECT_EQ(back.machine_cpus, original.machine_cpus);
  EXPECT_EQ(back.workload, original.workload);
  EXPECT_EQ(back.time_scale, original.time_scale);
  ASSERT_EQ(back.jobs.size(), original.jobs.size());
  for (std::size_t i = 0; i < back.jobs.size(); ++i) {
    const JobRecord& a = original.jobs[i];
    const JobRecord& b = back.jobs[i];
    EXPECT_EQ(b.id, a.id);
    EXPECT_EQ(b.app, a.app);
    EXPECT_EQ(b.app_class, a.app_class);
    EXPECT_EQ(b.submit, a.submit);  // exact, not near
    EXPECT_EQ(b.start, a.start);
    EXPECT_EQ(b.end, a.end);
    EXPECT_EQ(b.requested, a.requested);
    EXPECT_EQ(b.rm_id, a.rm_id);
    EXPECT_EQ(b.pid, a.pid);
    EXPECT_EQ(b.exit_status, a.exit_status);
    ASSERT_EQ(b.allocation.size(), a.allocation.size());
    for (std::size_t k = 0; k < a.allocation.size(); ++k) {
      EXPECT_EQ(b.allocation[k].t0, a.allocation[k].t0);
      EXPECT_EQ(b.allocation[k].t1, a.allocation[k].t1);
      EXPECT_EQ(b.allocation[k].cpus, a.allocation[k].cpus);
      EXPECT_EQ(b.allocation[k].cpu_list, a.allocation[k].cpu_list);
    }
  }
  ASSERT_EQ(back.ml.size(), original.ml.size());
  EXPECT_EQ(back.ml[3].t, 5);
  EXPECT_EQ(back.ml[3].queued, 1);
  // Same input, same summary.
  EXPECT_EQ(summarize(back), summarize(original));
}

TEST(RoundTrip, SummaryFileIsSummarize) {
  TempDir dir;
  results::Run run = four_job_run();
  ASSERT_TRUE(write_run(dir.str(), run));
  EXPECT_EQ(nlohmann::json::parse(slurp(dir.file("summary.json"))), summarize(run));
}

TEST(RoundTrip, MlCsvDerivedWhenNotSampled) {
  TempDir dir;
  results::Run run = four_job_run();
  run.ml.clear();
  ASSERT_TRUE(write_run(dir.str(), run));
  auto lines = lines_of(slurp(dir.file("ml.csv")));
  ASSERT_EQ(lines.size(), 9U);
  EXPECT_EQ(lines[0], "t,running,queued");
  EXPECT_EQ(lines[6], "10,2,1");
}

TEST(RoundTrip, RewritingReplacesFiles) {
  TempDir dir;
  results::Run run = four_job_run();
  ASSERT_TRUE(write_run(dir.str(), run));
  run.jobs.pop_back();
  ASSERT_TRUE(write_run(dir.str(), run));
  auto back = read_run(dir.str());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->jobs.size(), 3U);
}

TEST(RoundTrip, WithoutAllocationOrTracesEarlierOnesAreRemoved) {
  // cosched-sim past its segment budget writes no allocation.csv and no traces: those left by an earlier run
  // into the same directory would be read as this run's.
  TempDir dir;
  ASSERT_TRUE(write_run(dir.str(), four_job_run()));
  ASSERT_TRUE(std::filesystem::exists(dir.file("allocation.csv")));
  ASSERT_TRUE(std::filesystem::exists(dir.file("trace.prv")));
  WriteOptions wo;
  wo.allocation = false;
  wo.traces = false;
  ASSERT_TRUE(write_run(dir.str(), four_job_run(), wo));
  for (const char* name : {"allocation.csv", "trace.prv", "trace.pcf", "trace.row", "trace.json"}) {
    EXPECT_FALSE(std::filesystem::exists(dir.file(name))) << name;
  }
  EXPECT_TRUE(std::filesystem::exists(dir.file("jobs.csv")));
  auto back = read_run(dir.str());
  ASSERT_TRUE(back);
  for (const auto& j : back->jobs) EXPECT_TRUE(j.allocation.empty());
}

}  // namespace
}  // namespace cosched::results
