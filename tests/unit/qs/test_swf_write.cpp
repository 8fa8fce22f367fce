// SWF writer (canonical lines, header, files, round trips) and the processor-request helpers.
#include <gtest/gtest.h>

#include <limits>
#include <sstream>

#include "qs/swf.hpp"
#include "removed_at_end.hpp"

namespace swf = cosched::swf;

TEST(SwfWrite, CanonicalLine) {
  swf::Job j;
  j.number = 3;
  j.submit_s = 12;
  j.run_s = 0.5;
  j.requested_procs = 4;
  j.status = swf::kCancelled;
  j.executable = 2;
  j.think_time_s = 1e21;
  EXPECT_EQ(swf::to_line(j), "3 12 -1 0.5 -1 -1 -1 4 -1 -1 5 -1 -1 2 -1 -1 -1 1e+21");
  EXPECT_EQ(swf::to_line(swf::Job{}), "-1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1");
}

TEST(SwfWrite, HeaderThenJobs) {
  swf::Workload w;
  w.header.set("Version", "2.2");
  w.header.set("MaxProcs", "4");
  w.header.add_comment("hand written");
  w.header.set("MaxProcs", "8");  // replaces, keeps position
  swf::Job j;
  j.number = 1;
  j.submit_s = 0;
  w.jobs.push_back(j);
  std::ostringstream out;
  swf::write(out, w);
  EXPECT_EQ(out.str(),
            "; Version: 2.2\n"
            "; MaxProcs: 8\n"
            "; hand written\n"
            "1 0 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
}

TEST(SwfWrite, RoundTripKeepsEveryValue) {
  const std::string text =
      "; Version: 2.2\n"
      "; MaxProcs: 64\n"
      "; Note: a\n"
      "; free text\n"
      "1 0 5 3600 16 3500.25 2048 32 7200 4096 1 12 3 42 2 1 -1 -1\n"
      "2 0.125 -1 1e-3 1 -1 -1 -1 -1 -1 0 -1 -1 7 -1 -1 1 30.5\n"
      "3 99999999999 -1 10 2 -1 -1 2 -1 -1 5 -1 -1 1 -1 -1 -1 -1\n";
  auto first = swf::parse(text, "a.swf");
  ASSERT_TRUE(first.ok()) << first.error().message;
  std::ostringstream out;
  swf::write(out, *first);
  auto second = swf::parse(out.str(), "b.swf");
  ASSERT_TRUE(second.ok()) << second.error().message;
  ASSERT_EQ(second->jobs.size(), first->jobs.size());
  for (std::size_t i = 0; i < first->jobs.size(); ++i) {
    swf::Job a = first->jobs[i];
    swf::Job b = second->jobs[i];
    a.line = b.line = 0;  // the header layout may move lines; values must not change
    EXPECT_EQ(a, b) << "job " << i;
  }
  ASSERT_EQ(second->header.entries.size(), first->header.entries.size());
  for (std::size_t i = 0; i < first->header.entries.size(); ++i) {
    EXPECT_EQ(second->header.entries[i].key, first->header.entries[i].key);
    EXPECT_EQ(second->header.entries[i].value, first->header.entries[i].value);
  }
  // Canonical output is a fixed point.
  std::ostringstream again;
  swf::write(again, *second);
  EXPECT_EQ(again.str(), out.str());
}

TEST(SwfWrite, FilesPlainAndGzipReadBack) {
  swf::Workload w;
  w.header.set("MaxProcs", "2");
  for (int i = 1; i <= 1000; ++i) {
    swf::Job j;
    j.number = i;
    j.submit_s = i * 1.5;
    j.run_s = 10;
    j.requested_procs = 1 + i % 2;
    w.jobs.push_back(j);
  }
  for (const std::string name : {"/write.swf", "/write.swf.gz"}) {
    const std::string path = testing::TempDir() + name;
    const RemovedAtEnd remove{path};
    ASSERT_TRUE(swf::write_file(path, w).ok());
    auto back = swf::read_file(path);
    ASSERT_TRUE(back.ok()) << back.error().message;
    ASSERT_EQ(back->jobs.size(), 1000U);
    EXPECT_EQ(back->jobs[999].submit_s, 1500);
    EXPECT_EQ(back->header.max_procs(), 2);
  }
  auto bad = swf::write_file("/nonexistent/dir/x.swf", w);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, cosched::Errc::io_error);
}

TEST(SwfRequest, RequestedThenAllocatedProcessors) {
  swf::Job j;
  j.number = 5;
  j.line = 12;
  j.requested_procs = 8;
  j.allocated_procs = 4;
  EXPECT_EQ(*swf::processor_request(j), 8);
  j.requested_procs = -1;
  EXPECT_EQ(*swf::processor_request(j), 4);
  j.allocated_procs = -1;
  auto none = swf::processor_request(j);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, cosched::Errc::invalid_argument);
  EXPECT_EQ(none.error().message,
            "job 5 (line 12): no processor request: fields 8 (requested processors) and 5 (allocated processors) "
            "are -1 and -1");
}

TEST(SwfRequest, ScalingFromALargerMachine) {
  // PDPA's 60-CPU workloads on a 4-CPU machine: 30 -> 2, 2 -> 1 (never 0).
  EXPECT_EQ(swf::scale_request(30, 60, 4), 2);
  EXPECT_EQ(swf::scale_request(2, 60, 4), 1);
  EXPECT_EQ(swf::scale_request(60, 60, 4), 4);
  // Nearest integer, halves up: 3 * 4 / 8 = 1.5 -> 2; 5 * 4 / 8 = 2.5 -> 3; 1 * 4 / 8 = 0.5 -> 1.
  EXPECT_EQ(swf::scale_request(3, 8, 4), 2);
  EXPECT_EQ(swf::scale_request(5, 8, 4), 3);
  EXPECT_EQ(swf::scale_request(1, 8, 4), 1);
  EXPECT_EQ(swf::scale_request(2, 3, 2), 1);  // 1.33 -> 1
  // Bad data: a request larger than the trace machine is capped first.
  EXPECT_EQ(swf::scale_request(500, 128, 4), 4);
  // Huge sizes do not overflow.
  constexpr auto kBig = std::numeric_limits<std::int64_t>::max() / 2;
  EXPECT_EQ(swf::scale_request(kBig, kBig, 1024), 1024);
}

TEST(SwfRequest, NoScalingFromSmallerOrUnknownMachines) {
  EXPECT_EQ(swf::scale_request(3, 4, 8), 3);   // smaller trace machine: kept
  EXPECT_EQ(swf::scale_request(3, -1, 8), 3);  // unknown: kept
  EXPECT_EQ(swf::scale_request(16, -1, 8), 8); // ...but never above this machine
  EXPECT_EQ(swf::scale_request(0, -1, 8), 1);  // and at least one CPU
  EXPECT_EQ(swf::scale_request(5, 5, 0), 1);   // a nonsensical machine size still yields a usable request
}
