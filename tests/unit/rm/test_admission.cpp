// The daemon's Admission room (rm/daemon/admission.hpp): the queuing system's counts and how long they
// count, a registration taken off them, and an announced Slurm job holding the policy's yes back.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rm/daemon/admission.hpp"

namespace cosched::rm {
namespace {

TEST(Admission, CountsHoldForTwoSecondsAfterTheQueuingSystemAsked) {
  Admission a;
  EXPECT_EQ(a.queued(0), 0);  // never asked
  a.heard(5, 3, 16, 10.0);
  EXPECT_EQ(a.queued(11.9), 5);
  EXPECT_EQ(a.starting(12.0), 3);   // 10.0 + kQueuedFreshS, still fresh
  EXPECT_EQ(a.queued(12.01), 0);    // nobody asks any more
  EXPECT_EQ(a.starting(12.01), 0);
}

TEST(Admission, StartingJobsAreTrustedNoFurtherThanTheMachine) {
  Admission a;
  a.heard(-4, 1000, 16, 0.0);
  EXPECT_EQ(a.queued(0), 0);
  EXPECT_EQ(a.starting(0), 16);
}

TEST(Admission, ARegistrationIsOneFewerStartingThenOneFewerWaiting) {
  Admission a;
  a.heard(2, 1, 16, 0.0);
  a.registered();
  EXPECT_EQ(a.starting(0), 0);
  EXPECT_EQ(a.queued(0), 2);
  a.registered();
  a.registered();
  a.registered();  // more registrations than counted: never below zero
  EXPECT_EQ(a.queued(0), 0);
}

TEST(Admission, AReleasedProcessCountsAsStartingUntilItExits) {
  Admission a;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  auto pidfd = [&] { return static_cast<int>(::syscall(SYS_pidfd_open, child, 0)); };
  a.released(pidfd());
  a.released(pidfd());  // two processes' worth (an MPI job's ranks count one each): counted twice
  a.released(-1);       // no pidfd (a kernel without them): nothing counted
  a.heard(0, 1, 16, 0.0);
  EXPECT_EQ(a.released_running(), 2);
  EXPECT_EQ(a.starting(0), 3);
  EXPECT_EQ(a.starting(10), 2);  // the queuing system's count went stale; the released process still runs
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(a.released_running(), 0);
  EXPECT_EQ(a.starting(10), 0);
  a.released(pidfd());  // already reaped: no pidfd, nothing to count
  EXPECT_EQ(a.released_running(), 0);
}

TEST(Admission, AnAnnouncedSlurmJobHoldsTheYesUntilItRegistersOrFiveSecondsPass) {
  Admission a;
  a.expect(4242, 100.0);
  bool may = true;
  std::string why = "2 of 4 CPUs free";
  a.hold(may, why, 101.0);
  EXPECT_FALSE(may);
  EXPECT_EQ(why, "Slurm job 4242 started and has not registered yet (the policy would say: 2 of 4 CPUs free)");
  may = true;
  why = "free";
  a.hold(may, why, 105.01);  // past kExpectS: it never entered OpenMP
  EXPECT_TRUE(may);
  a.expect(7, 200.0);
  a.registered_slurm(7);
  may = true;
  a.hold(may, why, 200.5);
  EXPECT_TRUE(may);
  bool no = false;
  std::string kept = "machine full";
  a.expect(8, 300.0);
  a.hold(no, kept, 300.1);  // a no stays the policy's own no
  EXPECT_EQ(kept, "machine full");
}

}  // namespace
}  // namespace cosched::rm
