// Trace edge cases that Paraver's own parser or Perfetto's importer got wrong: a run with nothing to draw,
// control characters in names, job numbers past 32 bits, and the Chrome trace's time unit.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>

#include "qs/trace_placement.hpp"
#include "qs/trace_writers.hpp"
#include "results_test_util.hpp"
#include "sample_run.hpp"

namespace cosched::results {
namespace {

using sample::job;
using test_util::lines_of;
using test_util::paraver_of;
using sample::segment;

std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> f;
  std::stringstream ss(line);
  for (std::string x; std::getline(ss, x, ':');) f.push_back(x);
  return f;
}

// The lines of one .pcf section (after its heading, up to the next blank line).
std::vector<std::string> pcf_section(const std::string& pcf, const std::string& heading) {
  std::vector<std::string> out;
  auto lines = lines_of(pcf);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] != heading) continue;
    for (std::size_t k = i + 1; k < lines.size() && !lines[k].empty(); ++k) out.push_back(lines[k]);
    break;
  }
  return out;
}

Run two_cpu_run() {
  Run run;
  run.name = "edge";
  run.mode = "simulated";
  run.policy = "equip";
  run.machine_cpus = 2;
  return run;
}

TEST(TraceEdges, RunWithNothingToDrawStillHasABody) {
  results::Run run = two_cpu_run();  // no job, no ML sample
  ParaverTrace t = paraver_of(run);
  auto lines = lines_of(t.prv);
  ASSERT_EQ(lines.size(), 3U) << t.prv;
  // 1 ns long (a trace of 0 ns has no time axis), 1 node of 2 CPUs, 1 application of 1 task of 2 threads.
  EXPECT_NE(lines[0].find("):1_ns:1(2):1:1(2:1)"), std::string::npos) << lines[0];
  // The ML at time 0 on row 1: nothing running, nothing queued.
  EXPECT_EQ(lines[1], "2:1:1:1:1:0:90000003:0");
  EXPECT_EQ(lines[2], "2:1:1:1:1:0:90000004:0");
  // The .pcf still names Idle and the event types the records use.
  EXPECT_NE(t.pcf.find("STATES\n0    Idle\n\n"), std::string::npos) << t.pcf;
  EXPECT_NE(t.pcf.find("90000003    Multiprogramming level"), std::string::npos);
}

TEST(TraceEdges, JobsThatNeverRanWithoutSamplesGiveTheSameValidTrace) {
  results::Run run = two_cpu_run();
  run.jobs.push_back(job(1, "bt", 0, -1, -1, {}));  // never started: no segment, so nothing on any row
  ParaverTrace t = paraver_of(run);                 // run.ml is empty: no ML either
  auto lines = lines_of(t.prv);
  ASSERT_EQ(lines.size(), 3U) << t.prv;
  EXPECT_EQ(lines[1], "2:1:1:1:1:0:90000003:0");
  // The job is still named in the .pcf.
  EXPECT_NE(t.pcf.find("1    job 1 bt\n"), std::string::npos) << t.pcf;
}

TEST(TraceEdges, EmptyRunWrittenToDiskHasAValidTrace) {
  sample::TempDir dir;
  ASSERT_TRUE(write_run(dir.str(), two_cpu_run()));
  std::ifstream in(dir.file("trace.prv"));
  std::string header;
  std::string first_record;
  ASSERT_TRUE(std::getline(in, header));
  ASSERT_TRUE(std::getline(in, first_record)) << "trace.prv has only its header";
  EXPECT_EQ(first_record.rfind("2:1:1:1:1:0:", 0), 0U) << first_record;
}

TEST(TraceEdges, LabelEscapesControlCharacters) {
  EXPECT_EQ(paraver_label("bt"), "bt");
  EXPECT_EQ(paraver_label("a\nb"), "a\\nb");
  EXPECT_EQ(paraver_label("a\r\nb\tc"), "a\\r\\nb\\tc");
  EXPECT_EQ(paraver_label(std::string("x\0y", 3)), "x\\x00y");
  EXPECT_EQ(paraver_label("\x1b[1m\x7f"), "\\x1b[1m\\x7f");
  // Printable bytes, UTF-8 included, are kept as they are.
  EXPECT_EQ(paraver_label("caf\xc3\xa9 #2: x/y"), "caf\xc3\xa9 #2: x/y");
}

TEST(TraceEdges, NewlineInAnApplicationNameKeepsEveryPcfEntryOnOneLine) {
  results::Run run = two_cpu_run();
  run.jobs.push_back(job(7, "lu\nrm -rf", 0, 0, 5, {segment(0, 5, {0})}));
  run.jobs.push_back(job(8, "bt\tB", 0, 0, 5, {segment(0, 5, {1})}));
  ParaverTrace t = paraver_of(run);

  // Each section has exactly one line per value, each "<value> <label>", the label escaped.
  auto states = pcf_section(t.pcf, "STATES");
  ASSERT_EQ(states.size(), 3U) << t.pcf;
  EXPECT_EQ(states[1], "1    job 7 lu\\nrm -rf");
  EXPECT_EQ(states[2], "2    job 8 bt\\tB");
  auto jobs = pcf_section(t.pcf, "VALUES");  // the first VALUES section is the Job event's
  ASSERT_EQ(jobs.size(), 3U) << t.pcf;
  EXPECT_EQ(jobs[1], "1      job 7 lu\\nrm -rf");
  auto apps_at = t.pcf.find("Application\nVALUES\n");
  ASSERT_NE(apps_at, std::string::npos);
  EXPECT_EQ(t.pcf.substr(apps_at).find("0      End\n1      lu\\nrm -rf\n2      bt\\tB\n"),
            std::string("Application\nVALUES\n").size())
      << t.pcf.substr(apps_at);
  // No line of either file is a fragment of a name, and none holds a control character.
  for (const std::string* file : {&t.pcf, &t.row}) {
    for (const std::string& line : lines_of(*file)) {
      EXPECT_NE(line, "rm -rf");
      for (char c : line) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << "control character in: " << line;
    }
  }
}

TEST(TraceEdges, JobNumbersPast32BitsKeepTheirLabels) {
  constexpr std::int64_t kBig = std::int64_t{1} << 31;  // 2147483648: one past INT32_MAX
  results::Run run = two_cpu_run();
  run.jobs.push_back(job(kBig, "bt", 0, 0, 4, {segment(0, 4, {0})}));
  run.jobs.push_back(job(kBig + 5, "bt", 0, 1, 4, {segment(1, 4, {1})}));
  run.jobs.push_back(job(std::int64_t{1} << 40, "sp", 0, 4, 6, {segment(4, 6, {0, 1})}));
  ParaverTrace t = paraver_of(run);

  // Every value in the body fits a 32-bit signed integer; the Job event carries the dense value (position
  // + 1), the same as the state, never the SWF number.
  int job_events = 0;
  for (const std::string& line : lines_of(t.prv)) {
    if (line.empty() || line[0] == '#') continue;
    auto f = fields_of(line);
    ASSERT_GE(f.size(), 8U) << line;
    for (std::size_t k = 7; k < f.size(); k += 2) {
      EXPECT_LE(std::stoll(f[k]), std::numeric_limits<std::int32_t>::max()) << line;
    }
    if (f[0] == "2" && f[6] == "90000001" && f[7] != "0") {
      ++job_events;
      EXPECT_TRUE(f[7] == "1" || f[7] == "2" || f[7] == "3") << line;
    }
  }
  EXPECT_EQ(job_events, 4);  // the first two jobs on one row each, the third on both rows
  // CPU 1 (row 2): the second job, value 2, from 1 s to 4 s, with its Job event.
  EXPECT_NE(t.prv.find("\n1:2:1:1:2:1000000000:4000000000:2\n"), std::string::npos) << t.prv;
  EXPECT_NE(t.prv.find("\n2:2:1:1:2:1000000000:90000001:2\n"), std::string::npos) << t.prv;

  // The labels keep the real numbers.
  auto jobs = pcf_section(t.pcf, "VALUES");
  ASSERT_EQ(jobs.size(), 4U) << t.pcf;
  EXPECT_EQ(jobs[1], "1      job 2147483648 bt");
  EXPECT_EQ(jobs[2], "2      job 2147483653 bt");
  EXPECT_EQ(jobs[3], "3      job 1099511627776 sp");
  auto states = pcf_section(t.pcf, "STATES");
  ASSERT_EQ(states.size(), 4U);
  EXPECT_EQ(states[3], "3    job 1099511627776 sp");
}

TEST(TraceEdges, ChromeTraceHasNoDisplayTimeUnitAndCountsMicroseconds) {
  results::Run run = two_cpu_run();
  run.jobs.push_back(job(1, "bt", 0, 0.5, 2, {segment(0.5, 2, {0})}));
  nlohmann::json trace = nlohmann::json::parse(chrome_trace(run, place_on_cpus(run), run.ml));
  EXPECT_FALSE(trace.contains("displayTimeUnit")) << "a display hint that some importers read as the ts unit";
  bool found = false;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 0.5e6);  // 0.5 s in µs
    EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 1.5e6);
    found = true;
  }
  EXPECT_TRUE(found);
}

TEST(TraceEdges, ChromeTraceEscapesControlCharactersInNames) {
  results::Run run = two_cpu_run();
  run.jobs.push_back(job(1, "lu\nx", 0, 0, 1, {segment(0, 1, {0})}));
  std::string text = chrome_trace(run, place_on_cpus(run), run.ml);
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "only the final newline is raw";
  nlohmann::json trace = nlohmann::json::parse(text);
  bool found = false;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") found = e["name"] == "lu\nx #1";
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace cosched::results
