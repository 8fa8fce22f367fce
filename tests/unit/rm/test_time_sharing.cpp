// The daemon's time-sharing room (rm/daemon/time_sharing.hpp): stops deferred while a job writes its report,
// what a stop and a resume leave in the arena the job reads and in `why`, the stopped seconds counted, and
// a job stopped from outside found in /proc.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "rm/daemon/time_sharing.hpp"
#include "rm_test_util.hpp"

namespace cosched::rm {
namespace {

// Records what it was asked to do; fails a stop when told to.
class RecordingStopper : public Stopper {
 public:
  [[nodiscard]] std::string_view name() const override { return "recording"; }
  Status stop(Job& job) override {
    calls.push_back("stop " + std::to_string(job.id));
    if (fail) return make_error(Errc::io_error, "freezer busy");
    return {};
  }
  Status resume(Job& job) override {
    calls.push_back("resume " + std::to_string(job.id));
    return {};
  }
  [[nodiscard]] bool stopped(const Job& /*job*/) const override { return false; }
  void release(Job& job) override { calls.push_back("release " + std::to_string(job.id)); }
  std::vector<std::string> calls;
  bool fail = false;
};

using test::map_as_job;

Job make_job(policy::JobId id, pid_t pid) {
  Job j = test::job_with_arena(id, pid);
  j.allocation = 2;
  return j;
}

TEST(TimeSharing, AStopAndItsResumeAreSeenByTheJobAndCountTheStoppedSeconds) {
  RecordingStopper s;
  Job j = make_job(3, ::getpid());
  proto::Arena* a = map_as_job(j);
  ASSERT_NE(a, nullptr);
  j.sensor_mark.open = true;
  ASSERT_TRUE(stop_job(s, j, "gang slot 2", 1.5));
  EXPECT_FALSE(j.runnable);
  EXPECT_EQ(a->rm.runnable.load(), 0U);
  EXPECT_FALSE(j.sensor_mark.open);  // it ran only part of the interval
  EXPECT_EQ(j.why.back().event, "stop");
  EXPECT_EQ(j.why.back().reason, "gang slot 2");
  resume_job(s, j, "gang slot 1", 4.0);
  EXPECT_TRUE(j.runnable);
  EXPECT_EQ(a->rm.runnable.load(), 1U);
  EXPECT_EQ(a->rm.stops.load(), 1U);  // an iteration spanning the stop is not a clean measurement
  EXPECT_EQ(j.stops, 1U);
  EXPECT_DOUBLE_EQ(j.stopped_s, 2.5);  // 4.0 − 1.5
  EXPECT_EQ(j.why.back().at, 4.0);
  EXPECT_EQ(s.calls, (std::vector<std::string>{"stop 3", "resume 3"}));
  munmap(a, proto::kArenaSize);
}

TEST(TimeSharing, AJobWritingItsReportIsNotStoppedUnlessTheCallerChecked) {
  RecordingStopper s;
  Job j = make_job(4, ::getpid());
  proto::Arena* a = map_as_job(j);
  ASSERT_NE(a, nullptr);
  a->job.seq.store(1);  // odd: a write in progress
  EXPECT_FALSE(stop_job(s, j, "quantum", 1.0));
  EXPECT_TRUE(j.runnable);
  EXPECT_EQ(j.why.back().event, "stop deferred");
  EXPECT_TRUE(s.calls.empty());
  EXPECT_TRUE(stop_job(s, j, "quantum", 1.0, /*writing_checked=*/true));
  EXPECT_FALSE(j.runnable);
  munmap(a, proto::kArenaSize);
}

TEST(TimeSharing, AFailedStopLeavesTheJobRunningAndSaysWhy) {
  RecordingStopper s;
  s.fail = true;
  Job j = make_job(5, ::getpid());
  EXPECT_FALSE(stop_job(s, j, "quantum", 1.0));
  EXPECT_TRUE(j.runnable);
  EXPECT_EQ(j.why.back().event, "stop failed");
  EXPECT_EQ(j.why.back().reason, "freezer busy");
}

TEST(TimeSharing, ReleaseLeavesAStoppedJobRunnable) {
  RecordingStopper s;
  Job j = make_job(6, ::getpid());
  proto::Arena* a = map_as_job(j);
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(stop_job(s, j, "quantum", 1.0));
  release_stop(s, j);
  EXPECT_TRUE(j.runnable);
  EXPECT_EQ(a->rm.runnable.load(), 1U);
  EXPECT_EQ(s.calls.back(), "release 6");
  munmap(a, proto::kArenaSize);
}

TEST(TimeSharing, WhyKeepsTheNewestLines) {
  Job j;
  for (int i = 0; i < 40; ++i) remember_why(j, i, "quantum", 1, 1, "line " + std::to_string(i));
  ASSERT_EQ(j.why.size(), kWhyDepth);
  EXPECT_EQ(j.why.front().reason, "line 8");  // 40 − 32
  EXPECT_EQ(j.why.back().reason, "line 39");
}

// /proc/<pid>/stat's state letter, after the last ')'.
char state_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = all.rfind(')');
  return close == std::string::npos || close + 2 >= all.size() ? '?' : all[close + 2];
}

bool wait_for_state(pid_t pid, bool stopped) {
  for (int i = 0; i < 500; ++i) {
    const char s = state_of(pid);
    if ((s == 'T' || s == 't') == stopped) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(TimeSharing, AJobStoppedFromOutsideIsSuspendedUntilItContinues) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    for (;;) ::pause();
  }
  std::map<policy::JobId, Job> jobs;
  jobs.emplace(1, make_job(1, child));
  EXPECT_FALSE(track_suspended(jobs, 1.0));  // running: nothing changes
  ::kill(child, SIGSTOP);
  ASSERT_TRUE(wait_for_state(child, true));
  EXPECT_TRUE(track_suspended(jobs, 2.0));
  EXPECT_TRUE(jobs.at(1).suspended);
  EXPECT_EQ(jobs.at(1).why.back().event, "suspended");
  EXPECT_FALSE(track_suspended(jobs, 2.5));  // still stopped: no news
  ::kill(child, SIGCONT);
  ASSERT_TRUE(wait_for_state(child, false));
  EXPECT_TRUE(track_suspended(jobs, 3.0));
  EXPECT_FALSE(jobs.at(1).suspended);
  EXPECT_EQ(jobs.at(1).why.back().event, "continued");
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace cosched::rm
