// Odd runs never crash the writers, give finite-or-null numbers, and reader errors name the file.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "qs/trace_placement.hpp"
#include "sample_run.hpp"

namespace cosched::results {
namespace {

using sample::job;
using sample::segment;
using sample::TempDir;

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Every number in the summary is finite or null.
void expect_finite(const nlohmann::json& j, const std::string& where = "") {
  if (j.is_number()) {
    EXPECT_TRUE(std::isfinite(j.get<double>())) << where;
  }
  if (j.is_structured()) {
    for (auto it = j.begin(); it != j.end(); ++it) expect_finite(*it, where + "/" + (j.is_object() ? it.key() : "#"));
  }
}

TEST(OddInputs, EmptyRun) {
  results::Run run;
  nlohmann::json s = summarize(run);
  EXPECT_EQ(s["overall"]["count"], 0);
  EXPECT_TRUE(s["overall"]["mean_response"].is_null());
  EXPECT_TRUE(s["overall"]["cpu_utilisation"].is_null());
  EXPECT_TRUE(s["overall"]["mean_ml"].is_null());
  EXPECT_EQ(s["overall"]["makespan"], 0.0);
  EXPECT_TRUE(s["classes"].empty());
  TempDir dir;
  ASSERT_TRUE(write_run(dir.str(), run));
  auto back = read_run(dir.str());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_TRUE(back->jobs.empty());
}

TEST(OddInputs, BrokenTimesAndSegments) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  results::Run run;
  run.machine_cpus = 0;                                                            // nonsense machine size
  run.jobs.push_back(job(1, "", 0, 1, -1, {segment(1, 1, {0})}));                  // never ended; zero-length segment
  run.jobs.push_back(job(2, "b", 3, -1, 9, {segment(5, 4, {1})}));                 // ended without start; reversed
  run.jobs.push_back(job(3, "c", nan, 2, 8, {segment(nan, inf, {2})}));            // NaN submit; infinite segment
  run.jobs.push_back(job(4, "d", 0, 0, 4, {segment(0, 4, {0, 0, -3, 1 << 30})}));  // duplicate, negative, huge CPU
  CpuSegment negative;
  negative.t0 = 0;
  negative.t1 = 3;
  negative.cpus = -5;
  run.jobs.push_back(job(5, "e", 0, 0, 3, {negative}));
  run.jobs.push_back(job(-7, "f,\"g\"", 0, 0, 2, {segment(0, 2, {1}), segment(1, 2, {1})}));  // self-overlap
  run.ml = {{nan, 1, 0}, {5, -2, 3}, {2, 1, 1}};                                              // unsorted, NaN, negative
  nlohmann::json s = summarize(run);
  expect_finite(s);
  EXPECT_EQ(s["overall"]["count"], 6);
  TempDir dir;
  ASSERT_TRUE(write_run(dir.str(), run));
  auto back = read_run(dir.str());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->jobs.size(), 6U);
  EXPECT_EQ(back->jobs[5].app, "f,\"g\"");
  EXPECT_EQ(back->jobs[5].id, -7);
}

TEST(OddInputs, EnormousNativeRequestIsBounded) {
  results::Run run;
  run.machine_cpus = 2;
  CpuSegment s;
  s.t0 = 0;
  s.t1 = 1;
  s.cpus = std::numeric_limits<int>::max();
  run.jobs.push_back(job(1, "a", 0, 0, 1, {s}));
  Placement p = place_on_cpus(run);
  EXPECT_LE(p.rows, 65536);
}

TEST(ReadErrors, MissingDirectoryNamesTheFile) {
  auto r = read_run("/nonexistent/cosched-run");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("/nonexistent/cosched-run/summary.json"), std::string::npos) << r.error().message;
}

TEST(ReadErrors, BadNumberNamesFileLineAndColumn) {
  TempDir dir;
  ASSERT_TRUE(write_run(dir.str(), sample::four_job_run()));
  write_text(dir.file("jobs.csv"), "job,submit,start,end\n1,0,0,10\n2,0,soon,10\n");
  auto r = read_run(dir.str());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::parse_error);
  EXPECT_NE(r.error().message.find("jobs.csv:3: column 'start': 'soon'"), std::string::npos) << r.error().message;
}

TEST(ReadErrors, MissingColumnAndUnknownJob) {
  TempDir dir;
  ASSERT_TRUE(write_run(dir.str(), sample::four_job_run()));
  write_text(dir.file("ml.csv"), "time,running\n");
  auto r = read_run(dir.str());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("ml.csv: header lacks the column 't'"), std::string::npos) << r.error().message;

  ASSERT_TRUE(write_run(dir.str(), sample::four_job_run()));
  write_text(dir.file("allocation.csv"), "job,t0,t1,cpus,cpu_list\n99,0,1,1,0\n");
  r = read_run(dir.str());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("allocation.csv:2: job 99 is not in jobs.csv"), std::string::npos)
      << r.error().message;
}

TEST(ReadErrors, MalformedSummary) {
  TempDir dir;
  ASSERT_TRUE(write_run(dir.str(), sample::four_job_run()));
  write_text(dir.file("summary.json"), "{\"name\": ");
  auto r = read_run(dir.str());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("summary.json: not valid JSON"), std::string::npos) << r.error().message;
  // Wrong types fall back to defaults instead of throwing.
  write_text(dir.file("summary.json"), R"({"name": 3, "machine_cpus": "four", "time_scale": "fast"})");
  auto ok = read_run(dir.str());
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->machine_cpus, 1);
}

TEST(WriteErrors, UnwritableDirectoryNamesIt) {
  TempDir dir;
  write_text(dir.file("plain-file"), "x");
  Status s = write_run(dir.file("plain-file") + "/run", sample::four_job_run());
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("plain-file/run"), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace cosched::results
