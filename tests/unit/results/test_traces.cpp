// Paraver (.prv/.pcf/.row) and Chrome trace structure for the hand-made run.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "qs/trace_placement.hpp"
#include "qs/trace_writers.hpp"
#include "results_test_util.hpp"
#include "sample_run.hpp"

namespace cosched::results {
namespace {

using sample::four_job_run;
using test_util::lines_of;
using test_util::paraver_of;

TEST(ParaverTrace, HeaderDescribesOneRowPerCpu) {
  auto lines = lines_of(paraver_of(four_job_run()).prv);
  ASSERT_FALSE(lines.empty());
  // 20 s in ns; 1 node of 4 CPUs; 1 application: 1 task of 4 threads on node 1.
  EXPECT_TRUE(std::regex_match(
      lines[0], std::regex(R"(#Paraver \(\d\d/\d\d/\d{4} at \d\d:\d\d\):20000000000_ns:1\(4\):1:1\(4:1\))")))
      << lines[0];
}

TEST(ParaverTrace, RecordCountsAndOrder) {
  auto lines = lines_of(paraver_of(four_job_run()).prv);
  int states = 0;
  int events = 0;
  long long last_time = -1;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> f;
    std::stringstream ss(lines[i]);
    for (std::string x; std::getline(ss, x, ':');) f.push_back(x);
    ASSERT_GE(f.size(), 8U) << lines[i];
    if (f[0] == "1") ++states;
    if (f[0] == "2") ++events;
    long long t = std::stoll(f[5]);
    EXPECT_GE(t, last_time) << "records out of time order at line " << i + 1;
    last_time = t;
  }
  // Pieces: job 1 on 2 CPUs, job 2 on 2, job 3 on 2 then 4 → 10 states, each with 2 begin + 2 end events;
  // and 2 events (running, queued) per ML sample.
  EXPECT_EQ(states, 10);
  EXPECT_EQ(events, 10 * 4 + 8 * 2);
}

TEST(ParaverTrace, CpuRowStates) {
  auto lines = lines_of(paraver_of(four_job_run()).prv);
  std::vector<std::string> cpu0;
  for (const auto& l : lines) {
    if (l.rfind("1:1:1:1:1:", 0) == 0) cpu0.push_back(l);
  }
  // CPU 0 (row 1): job 1 (state 1) over [0,10 s), then job 3 (state 3) in its two segments.
  ASSERT_EQ(cpu0.size(), 3U);
  EXPECT_EQ(cpu0[0], "1:1:1:1:1:0:10000000000:1");
  EXPECT_EQ(cpu0[1], "1:1:1:1:1:10000000000:12000000000:3");
  EXPECT_EQ(cpu0[2], "1:1:1:1:1:12000000000:20000000000:3");
  // The job event carries the SWF job number; ending events come before the next piece's start.
  std::string prv = paraver_of(four_job_run()).prv;
  auto end_job1 = prv.find("2:1:1:1:1:10000000000:90000001:0\n");
  auto start_job3 = prv.find("2:1:1:1:1:10000000000:90000001:3\n");
  ASSERT_NE(end_job1, std::string::npos);
  ASSERT_NE(start_job3, std::string::npos);
  EXPECT_LT(end_job1, start_job3);
}

TEST(ParaverTrace, PcfNamesJobsAndApplications) {
  ParaverTrace t = paraver_of(four_job_run());
  EXPECT_NE(t.pcf.find("STATES\n0    Idle\n1    job 1 bt\n2    job 2 bt\n3    job 3 apsi\n4    job 4 apsi\n"),
            std::string::npos)
      << t.pcf;
  EXPECT_NE(t.pcf.find("STATES_COLOR\n"), std::string::npos);
  EXPECT_NE(t.pcf.find("90000002    Application\nVALUES\n0      End\n1      bt\n2      apsi\n"), std::string::npos);
  auto row = lines_of(t.row);
  ASSERT_GE(row.size(), 5U);
  EXPECT_EQ(row[0], "LEVEL CPU SIZE 4");
  EXPECT_EQ(row[1], "CPU 0");
  EXPECT_NE(t.row.find("LEVEL THREAD SIZE 4\nCPU 0\nCPU 1\nCPU 2\nCPU 3\n"), std::string::npos);
}

TEST(ChromeTrace, ParsesAndHasOneTrackPerCpu) {
  results::Run run = four_job_run();
  std::string text = chrome_trace(run, place_on_cpus(run), run.ml);
  nlohmann::json trace = nlohmann::json::parse(text, nullptr, false);
  ASSERT_FALSE(trace.is_discarded());
  ASSERT_TRUE(trace["traceEvents"].is_array());
  int complete = 0;
  int counters = 0;
  int thread_names = 0;
  for (const auto& e : trace["traceEvents"]) {
    std::string ph = e["ph"];
    if (ph == "X") {
      ++complete;
      EXPECT_GE(e["tid"].get<int>(), 0);
      EXPECT_LT(e["tid"].get<int>(), 4);
      EXPECT_GT(e["dur"].get<double>(), 0);
      EXPECT_TRUE(e["args"].contains("job"));
      EXPECT_TRUE(e["args"].contains("app"));
    } else if (ph == "C") {
      ++counters;
      EXPECT_TRUE(e["args"].contains("running"));
    } else if (ph == "M" && e["name"] == "thread_name") {
      ++thread_names;
    }
  }
  EXPECT_EQ(complete, 10);
  EXPECT_EQ(counters, 8);
  EXPECT_EQ(thread_names, 4);
  // Job 3's second segment on CPU 3: [12 s, 20 s) in microseconds.
  bool found = false;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["tid"] == 3 && e["args"]["job"] == 3) {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 12e6);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 8e6);
      EXPECT_EQ(e["name"], "apsi #3");
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace cosched::results
