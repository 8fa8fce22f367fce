// The ranks of an MPI job share its allocation (rm/placement/rank_split.hpp): shares and CPU slices.
#include <gtest/gtest.h>

#include "rm/placement/rank_split.hpp"

using cosched::CpuSet;
using cosched::rm::rank_shares;
using cosched::rm::split_cpus;

TEST(RankShares, EvenWithTheRemainderToTheFirstRanks) {
  EXPECT_EQ(rank_shares(4, 2), (std::vector<int>{2, 2}));
  EXPECT_EQ(rank_shares(5, 2), (std::vector<int>{3, 2}));
  EXPECT_EQ(rank_shares(7, 3), (std::vector<int>{3, 2, 2}));
  // Fewer CPUs than ranks: every rank still runs one thread.
  EXPECT_EQ(rank_shares(1, 2), (std::vector<int>{1, 1}));
  EXPECT_EQ(rank_shares(3, 1), (std::vector<int>{3}));
}

TEST(SplitCpus, ConsecutiveSlicesThatWrapWhenCpusAreShort) {
  auto s = split_cpus(CpuSet::range(0, 3), {2, 2});
  EXPECT_EQ(s[0].to_string(), "0-1");
  EXPECT_EQ(s[1].to_string(), "2-3");
  s = split_cpus(CpuSet::of({4, 6, 9}), {2, 1});
  EXPECT_EQ(s[0].to_string(), "4,6");
  EXPECT_EQ(s[1].to_string(), "9");
  // Two ranks of one CPU each on one CPU: they share it.
  s = split_cpus(CpuSet::of({1}), {1, 1});
  EXPECT_EQ(s[0].to_string(), "1");
  EXPECT_EQ(s[1].to_string(), "1");
  // Shares adding up to more than the set: the slices wrap round.
  s = split_cpus(CpuSet::range(0, 2), {2, 2});
  EXPECT_EQ(s[0].to_string(), "0-1");
  EXPECT_EQ(s[1].to_string(), "0,2");
}
