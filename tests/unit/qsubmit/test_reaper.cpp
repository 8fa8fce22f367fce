// A job's end is seen without reaping it, and reaping happens off the caller's thread: real child processes.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <thread>

#include "reaper.hpp"

namespace qsub = cosched::qsubmit;

namespace {

pid_t child_exiting_with(int code) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(code);
  return pid;
}

std::optional<int> wait_for_end(pid_t pid) {
  for (int i = 0; i < 500; ++i) {
    if (auto st = qsub::ended_status(pid)) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::nullopt;
}

}  // namespace

TEST(EndedStatus, SeesTheExitCodeAndLeavesTheChildToReap) {
  const pid_t pid = child_exiting_with(3);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(wait_for_end(pid), 3);
  EXPECT_EQ(qsub::ended_status(pid), 3);  // still there: not reaped
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, WNOHANG), pid);
  EXPECT_EQ(WEXITSTATUS(status), 3);
}

TEST(EndedStatus, ASignalIsOneHundredTwentyEightPlusItsNumber) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::pause();
    ::_exit(0);
  }
  ASSERT_GT(pid, 0);
  EXPECT_EQ(qsub::ended_status(pid), std::nullopt);  // running
  ::kill(pid, SIGKILL);
  EXPECT_EQ(wait_for_end(pid), 128 + SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

TEST(EndedStatus, NotOurChildIsTwoHundredFiftyFive) { EXPECT_EQ(qsub::ended_status(1), 255); }

TEST(Reaper, ReapsWhatItIsHandedAndDrains) {
  qsub::Reaper reaper;
  pid_t pids[3];
  for (int i = 0; i < 3; ++i) {
    pids[i] = child_exiting_with(i);
    ASSERT_EQ(wait_for_end(pids[i]), i);
    reaper.reap(pids[i]);
  }
  reaper.drain();
  for (pid_t pid : pids) {
    errno = 0;
    EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
    EXPECT_EQ(errno, ECHILD) << "pid " << pid << " was not reaped";
  }
}
