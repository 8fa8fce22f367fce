#include <gtest/gtest.h>

#include "rm/placement/placement.hpp"

using cosched::CpuSet;
using cosched::rm::place;
using cosched::rm::PlaceRequest;

namespace {
std::vector<int> range(int n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}
std::string s(const CpuSet& c) { return c.to_string(); }
}  // namespace

TEST(Placement, DisjointCompactBlocksForNewJobs) {
  auto out = place(range(8), {{1, 4, {}, {}}, {2, 2, {}, {}}, {3, 2, {}, {}}});
  EXPECT_EQ(s(out[1]), "0-3");
  EXPECT_EQ(s(out[2]), "4-5");
  EXPECT_EQ(s(out[3]), "6-7");
}

TEST(Placement, KeepsCurrentCpusWhenShrinking) {
  // Job 1 held 0-3; now it gets 2 and a newcomer 2: job 1 keeps the first two it had.
  auto out = place(range(4), {{1, 2, CpuSet::range(0, 3), {}}, {2, 2, {}, {}}});
  EXPECT_EQ(s(out[1]), "0-1");
  EXPECT_EQ(s(out[2]), "2-3");
}

TEST(Placement, StableAcrossReallocationsOfOthers) {
  // Job 2 sits on 4-5; job 1 shrinks from 0-3 to 0-1 and job 3 arrives: job 2 does not move.
  auto out = place(range(8), {{1, 2, CpuSet::range(0, 3), {}}, {2, 2, CpuSet::range(4, 5), {}}, {3, 4, {}, {}}});
  EXPECT_EQ(s(out[2]), "4-5");
  EXPECT_EQ(s(out[1]), "0-1");
  EXPECT_EQ(s(out[3]), "2-3,6-7");
}

TEST(Placement, AJobThatResumesDoesNotTakeTheCpusOfAJobRunningThere) {
  // Job 1 (admitted first) ran on 0-1 and was stopped; job 2 took 0-1 and runs there. Job 1 resumes with 2
  // CPUs of 4: job 2 keeps 0-1 and job 1 takes the free 2-3. Taking its old CPUs back would move job 2, whose
  // count did not change (a migration every quantum under a sliding window).
  PlaceRequest resumed{1, 2, CpuSet::range(0, 1), {}};
  resumed.resuming = true;
  auto out = place(range(4), {resumed, {2, 2, CpuSet::range(0, 1), {}}});
  EXPECT_EQ(s(out[2]), "0-1");
  EXPECT_EQ(s(out[1]), "2-3");
  // What of its old CPUs nobody runs on, it gets back: 1 is job 2's now, 0 is free.
  auto mixed = place(range(4), {resumed, {2, 2, CpuSet::range(1, 2), {}}});
  EXPECT_EQ(s(mixed[2]), "1-2");
  EXPECT_EQ(s(mixed[1]), "0,3");
}

TEST(Placement, GrowsNextToWhatItHas) {
  auto out = place(range(8), {{1, 3, CpuSet::of({5}), {}}, {2, 1, CpuSet::of({0}), {}}});
  EXPECT_EQ(s(out[2]), "0");
  EXPECT_TRUE(out[1].test(5));
  EXPECT_EQ(out[1].count(), 3);
  EXPECT_EQ(out[1].last() - out[1].first(), 2) << s(out[1]);  // contiguous around CPU 5
}

TEST(Placement, GrowsOneNearestCpuAtATimeLowestFirst) {
  // Job 1 keeps 2 and 7 and wants 6 of 10. Each pick takes the CPU nearest to what it has then, the lowest on a
  // tie: 1 (distance 1, lower than 3, 6 and 8), then 0 (now at distance 1 from 1), 3, and 4 (next to 3).
  auto out = place(range(10), {{1, 6, CpuSet::of({2, 7}), {}}});
  EXPECT_EQ(s(out[1]), "0-4,7");
}

TEST(Placement, OversubscriptionSpreadsEvenly) {
  // Four jobs of 1 CPU on 2 CPUs: two per CPU, never three.
  auto out = place(range(2), {{1, 1, {}, {}}, {2, 1, {}, {}}, {3, 1, {}, {}}, {4, 1, {}, {}}});
  int on0 = 0;
  for (auto& [id, set] : out) {
    EXPECT_EQ(set.count(), 1);
    on0 += set.test(0);
  }
  EXPECT_EQ(on0, 2);
}

TEST(Placement, UsesTopologyOrderNotNumbers) {
  // SMT sibling numbering 0,4 / 1,5 ...: compact in topology order means siblings together.
  std::vector<int> order = {0, 4, 1, 5, 2, 6, 3, 7};
  auto out = place(order, {{1, 2, {}, {}}, {2, 2, {}, {}}});
  EXPECT_EQ(s(out[1]), "0,4");
  EXPECT_EQ(s(out[2]), "1,5");
}

TEST(Placement, IgnoresCpusOutsideTheManagedSet) {
  auto out = place({2, 3}, {{1, 2, CpuSet::range(0, 3), {}}});
  EXPECT_EQ(s(out[1]), "2-3");
}

TEST(Placement, CountsAboveTheMachineAreClamped) {
  auto out = place(range(2), {{1, 5, {}, {}}});
  EXPECT_EQ(s(out[1]), "0-1");
}

TEST(Placement, ASlurmJobStaysInsideTheCpusSlurmGaveIt) {
  // Job 2 may use only 4-7 (its Slurm cpuset); job 1 may use anything. Job 2 gets no more than 4 CPUs, all
  // of them inside 4-7, even where 0-3 are free or it held 2-3 before.
  CpuSet four_to_seven = CpuSet::range(4, 7);
  auto out = place(range(8), {{1, 2, {}, {}}, {2, 6, CpuSet::range(2, 3), four_to_seven}});
  EXPECT_EQ(s(out[2]), "4-7");
  EXPECT_EQ(s(out[1]), "0-1");
  // Oversubscribed: both want everything, job 2 shares only within its set.
  out = place(range(8), {{1, 8, {}, {}}, {2, 8, {}, four_to_seven}});
  EXPECT_EQ(s(out[1]), "0-7");
  EXPECT_EQ(s(out[2]), "4-7");
  // A job that may use only CPU 0 gets it back from one that may go anywhere, even one that held it.
  out = place(range(2), {{1, 1, CpuSet::of({0}), {}}, {2, 1, CpuSet::of({0}), CpuSet::of({0})}});
  EXPECT_EQ(s(out[2]), "0");
  EXPECT_EQ(s(out[1]), "1");
  // The same when the unrestricted job held both CPUs and the restricted one arrives.
  out = place(range(2), {{1, 1, CpuSet::range(0, 1), {}}, {2, 1, {}, CpuSet::of({0})}});
  EXPECT_EQ(s(out[2]), "0");
  EXPECT_EQ(s(out[1]), "1");
  // A set naming none of the managed CPUs restricts nothing.
  out = place(range(2), {{1, 1, {}, CpuSet::range(8, 9)}});
  EXPECT_EQ(out[1].count(), 1);
}

TEST(Placement, AFixedTeamCountsAsItsThreadsWhenCpusAreShared) {
  // Three jobs of one CPU on two: GROMACS' fixed team of 2 on CPU 0 beside npb-bt, steps on CPU 1 (bench/
  // real-apps --jobs 6 --class W after the first departures). By jobs that is 2 and 1; by threads it was 3
  // and 1. Weights 2, 1, 1 give a cap of ceil(4 / 2) = 2 threads per CPU: GROMACS keeps CPU 0 alone, and bt
  // joins steps on CPU 1, two threads on each.
  PlaceRequest gromacs{1, 1, CpuSet::range(0, 0), {}};
  gromacs.threads = 2;
  auto out = place(range(2), {gromacs, {2, 1, CpuSet::range(0, 0), {}}, {3, 1, CpuSet::range(1, 1), {}}});
  EXPECT_EQ(s(out[1]), "0");
  EXPECT_EQ(s(out[2]), "1");
  EXPECT_EQ(s(out[3]), "1");
  // Without its team the same requests keep where they are: two jobs on CPU 0 (cap ceil(3 / 2) = 2).
  gromacs.threads = 0;
  out = place(range(2), {gromacs, {2, 1, CpuSet::range(0, 0), {}}, {3, 1, CpuSet::range(1, 1), {}}});
  EXPECT_EQ(s(out[1]), "0");
  EXPECT_EQ(s(out[2]), "0");
  EXPECT_EQ(s(out[3]), "1");
}

TEST(Placement, ATeamThatFitsItsCpusWeighsOnePerCpu) {
  // A team of 2 on its 2 CPUs is one thread per CPU: 4 CPUs, jobs of 2, 1 and 1 are placed disjoint.
  PlaceRequest fits{1, 2, {}, {}};
  fits.threads = 2;
  auto out = place(range(4), {fits, {2, 1, {}, {}}, {3, 1, {}, {}}});
  EXPECT_EQ(s(out[1]), "0-1");
  EXPECT_EQ(s(out[2]), "2");
  EXPECT_EQ(s(out[3]), "3");
}

TEST(Placement, AFixedTeamKeepsItsCpuBeforeLighterJobs) {
  // As the burst ran: steps on CPU 0, npb-bt and GROMACS (a team of 2) on CPU 1, in that admission order.
  // Kept in admission order, bt would keep CPU 1 and GROMACS, finding no CPU under the cap of 2 threads,
  // would join steps: 3 threads on CPU 0 and 1 on CPU 1. GROMACS keeps first; bt moves to steps' CPU.
  PlaceRequest gromacs{4, 1, CpuSet::range(1, 1), {}};
  gromacs.threads = 2;
  auto out = place(range(2), {{1, 1, CpuSet::range(0, 0), {}}, {2, 1, CpuSet::range(1, 1), {}}, gromacs});
  EXPECT_EQ(s(out[4]), "1");
  EXPECT_EQ(s(out[1]), "0");
  EXPECT_EQ(s(out[2]), "0");
}
