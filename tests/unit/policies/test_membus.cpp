// MemBUS (Koukis & Koziris 2006, §4, Algorithms 1 and 2): the Euclidean inverse fitness, the local selection,
// the reduction and the allocation by popularity, worked out by hand in the comments; then the policy object
// over quanta, locally and under a cluster order.
#include <gtest/gtest.h>

#include <cmath>

#include "policies/bandwidth/membus.hpp"
#include "policies/registry.hpp"
#include "policy_test_util.hpp"

using namespace cosched::policy;
using cosched::policy::testing::machine_with;

TEST(MembusDistance, EuclideanToTheRemainingBandwidthPerRemainingCpu) {
  // Ideal point (BW^M_rem / P_rem, BW^N_rem / P_rem) = (600/2, 200/2) = (300, 100); demand (303, 104):
  // sqrt(3² + 4²) = 5.
  EXPECT_DOUBLE_EQ(membus_distance({1, 303, 104}, 2, 600, 200), 5.0);
  EXPECT_DOUBLE_EQ(membus_distance({1, 0, 0}, 1, 3, 4), 5.0);
}

TEST(MembusSelect, HeadThenNearestFitUntilNoCpuIsLeft) {
  // P = 4, M = 1000, N = 200. A (head) p=2 (300, 10): selected first; P_rem = 2,
  // BW^M_rem = 1000 − 2·300 = 400, BW^N_rem = 200 − 2·10 = 180, ideal (200, 90).
  //   B p=2 (300, 10): hypot(100, −80) = 128.1;  C p=2 (50, 90): hypot(−150, 0) = 150;
  //   D p=1 (200, 80): hypot(0, −10) = 10 → D.  P_rem = 1, BW_rem = (200, 100).
  //   B and C need 2 CPUs: only E p=1 (20, 5) fits → E.  P_rem = 0.
  std::vector<MembusDemand> list = {{2, 300, 10}, {2, 300, 10}, {2, 50, 90}, {1, 200, 80}, {1, 20, 5}};
  EXPECT_EQ(membus_select(list, 4, 1000, 200), (std::vector<int>{1, 0, 0, 1, 1}));
}

TEST(MembusSelect, MemoryHeavyHeadPairsWithTheNetworkHeavyJob) {
  // P = 2, M = N = 1000. Head H1 (800, 0) → P_rem = 1, BW_rem = (200, 1000).
  //   H2 (800, 0): hypot(600, −1000) = 1166;  N1 (300, 300) (its BW^M includes its network): hypot(100, −700)
  //   = 707 → N1.
  std::vector<MembusDemand> list = {{1, 800, 0}, {1, 800, 0}, {1, 300, 300}};
  EXPECT_EQ(membus_select(list, 2, 1000, 1000), (std::vector<int>{1, 0, 1}));
}

TEST(MembusSelect, EndsWhenNothingFitsAndNeverSelectsTwice) {
  // P = 4: head p=1, then the only other job (p=4) does not fit in 3: the listing would loop for ever.
  EXPECT_EQ(membus_select({{1, 0, 0}, {4, 0, 0}}, 4, 1, 1), (std::vector<int>{1, 0}));
  // One job on 4 CPUs asking 1: selected once, 3 CPUs stay free.
  EXPECT_EQ(membus_select({{1, 0, 0}}, 4, 1, 1), (std::vector<int>{1}));
  // A head asking more than P runs on P.
  EXPECT_EQ(membus_select({{8, 0, 0}, {1, 0, 0}}, 4, 1, 1), (std::vector<int>{1, 0}));
  EXPECT_TRUE(membus_select({}, 4, 1, 1).empty());
}

TEST(MembusReduce, SumsTheNodesArraysAndSortsByPopularity) {
  // S_total = (1, 3, 1): application 1 first, then 0 and 2 in index order (ties keep the index order).
  std::vector<int> total;
  EXPECT_EQ(membus_reduce({{0, 1, 1}, {0, 1, 0}, {1, 1, 0}}, &total), (std::vector<std::size_t>{1, 0, 2}));
  EXPECT_EQ(total, (std::vector<int>{1, 3, 1}));
  // Shorter arrays count as zeros.
  EXPECT_EQ(membus_reduce({{1}, {0, 0, 1}, {0, 0, 1}}), (std::vector<std::size_t>{2, 0, 1}));
}

TEST(MembusAllocate, ResumesByPositionWhileCpusRemain) {
  // Order (1, 0, 2) on P = 4: 1 takes 2, 0 takes 2 → full, 2 waits.
  EXPECT_EQ(membus_allocate({1, 0, 2}, {2, 2, 1}, 4), (std::vector<int>{1, 1, 0}));
  // 0 needs 3 of the 2 left: skipped; 2 (1 CPU) fits.
  EXPECT_EQ(membus_allocate({1, 0, 2}, {2, 3, 1}, 4), (std::vector<int>{0, 1, 1}));
  // An application with no process on this node (procs 0) is skipped.
  EXPECT_EQ(membus_allocate({0, 1}, {0, 1}, 1), (std::vector<int>{0, 1}));
}

namespace {

void feed(Snapshot& s, const Decision& d) {
  for (std::size_t i = 0; i < s.jobs.size(); ++i) {
    s.jobs[i].allocation = d.jobs[i].cpus;
    s.jobs[i].runnable = d.jobs[i].runnable;
  }
}

std::vector<int> runs(const Decision& d) {
  std::vector<int> v;
  for (const auto& a : d.jobs) v.push_back(a.runnable ? 1 : 0);
  return v;
}

// Two memory-heavy jobs (800 MB/s per process, sensors) and a network-heavy one (300 MB/s counted by the
// PMPI wrappers), one CPU each, on 2 CPUs with M = N = 1000 MB/s.
Snapshot three_jobs() {
  Snapshot s = machine_with(2, {1, 1, 1});
  for (int i : {0, 1}) {
    s.jobs[i].bandwidth.push({0.0, 800e6, 1});
  }
  s.jobs[2].network.source = "pmpi";
  s.jobs[2].network.push({s.now, 300e6, 1});
  return s;
}

std::unique_ptr<Policy> membus_with(const ParamList& params) {
  auto p = make_policy("membus", Machine{2, 2, 1, 1}, params);
  EXPECT_TRUE(p.ok());
  return std::move(*p);
}

}  // namespace

TEST(MembusPolicy, MemoryHeavyJobsRunWithTheNetworkHeavyOneOnceMeasured) {
  auto p = membus_with({{"mem_bw", "1000"}, {"net_bw", "1000"}});
  Snapshot s = three_jobs();
  // Quantum 0: no sample yet (all predicted 0): head 1, then 2 (equal distances, list order).
  // Quantum 1: list (3, 1, 2) after rotation; 3 has no sample (0, 0), rem (1000, 1000): 1 and 2 both at
  //            hypot(800 − 1000, 0 − 1000) = 1020 → 1.
  // Quantum 2: list (2, 3, 1): head 2, rem (200, 1000): 3 at 707 beats 1 at 1166 (worked above) → 3.
  // From then on 3 runs every quantum, and 1 and 2 take turns with it.
  std::vector<std::vector<int>> seen;
  for (int k = 0; k < 12; ++k) {
    s.now = 0.5 * k;
    s.event = Event::quantum;
    Decision d = p->decide(s);
    feed(s, d);
    seen.push_back(runs(d));
  }
  EXPECT_EQ(seen[0], (std::vector<int>{1, 1, 0}));
  EXPECT_EQ(seen[1], (std::vector<int>{1, 0, 1}));
  EXPECT_EQ(seen[2], (std::vector<int>{0, 1, 1}));
  int memory_pair = 0;
  int mixed_pair = 0;
  for (std::size_t k = 2; k < seen.size(); ++k) {
    if (seen[k][0] && seen[k][1]) ++memory_pair;
    if (seen[k][2] && (seen[k][0] || seen[k][1])) ++mixed_pair;
  }
  EXPECT_EQ(memory_pair, 0);
  EXPECT_EQ(mixed_pair, 10);
  // Nobody starves: 1 and 2 alternate.
  EXPECT_NE(seen[10][0], seen[11][0]);
}

TEST(MembusPolicy, AQuantumsBandwidthIsTheMeanOfTheSamplesTakenInIt) {
  auto p = membus_with({{"q", "0.5"}});
  auto* m = dynamic_cast<Membus*>(p.get());
  ASSERT_NE(m, nullptr);
  Snapshot s = machine_with(1, {1});
  s.now = 0;
  feed(s, p->decide(s));  // the quantum begins at 0
  // A program that reports its traffic in lumps: 4 GB/s in one of the four RM quanta of this quantum, and
  // 8 GB/s in a sample taken before it began (not this quantum's). Mean over (0, 4, 0, 0) GB/s = 1 GB/s.
  s.jobs[0].bandwidth.push({-0.1, 8e9, 1});
  for (double at : {0.1, 0.2, 0.3, 0.4}) s.jobs[0].bandwidth.push({at, at == 0.2 ? 4e9 : 0.0, 1});
  s.now = 0.5;
  s.event = Event::quantum;
  feed(s, p->decide(s));
  EXPECT_DOUBLE_EQ(m->demand(s.jobs[0], 1).mem_per_proc, 1e9);  // the latest sample alone said 0
  // No sample in the next quantum: its value is the latest sample (0); window of w = 2: (1 + 0) / 2 GB/s.
  s.now = 1.0;
  feed(s, p->decide(s));
  EXPECT_DOUBLE_EQ(m->demand(s.jobs[0], 1).mem_per_proc, 0.5e9);
}

TEST(MembusPolicy, SwitchesOnlyEveryQuantum) {
  auto p = membus_with({{"q", "0.5"}});
  Snapshot s = machine_with(1, {1, 1});
  s.now = 0;
  Decision d0 = p->decide(s);
  feed(s, d0);
  ASSERT_EQ(runs(d0), (std::vector<int>{1, 0}));
  EXPECT_DOUBLE_EQ(*d0.wake_at, 0.5);
  s.now = 0.2;  // a report or an RM tick inside the quantum: no switch
  s.event = Event::report;
  Decision d1 = p->decide(s);
  feed(s, d1);
  EXPECT_EQ(runs(d1), (std::vector<int>{1, 0}));
  s.now = 0.5;
  s.event = Event::timer;
  Decision d2 = p->decide(s);
  EXPECT_EQ(runs(d2), (std::vector<int>{0, 1}));
}

TEST(MembusPolicy, FollowsTheClusterOrderThenFallsBackWhenItGoesStale) {
  auto p = membus_with({{"q", "0.5"}, {"stale", "3"}});
  Snapshot s = machine_with(2, {1, 1, 1});
  s.cluster.order = {3, 2, 1};  // the agreed popularity: 3 first, then 2
  s.cluster.at = 0;
  s.cluster.seq = 1;
  s.now = 0;
  Decision d = p->decide(s);
  feed(s, d);
  EXPECT_EQ(runs(d), (std::vector<int>{0, 1, 1}));
  // An RM tick 1 s later, no new order: the node keeps the agreed gang (no switch of its own).
  s.now = 1.0;
  s.event = Event::quantum;
  d = p->decide(s);
  feed(s, d);
  EXPECT_EQ(runs(d), (std::vector<int>{0, 1, 1}));
  // Past stale × q = 1.5 s without an order the node schedules alone: the jobs that ran go to the end of
  // the list, job 1 (head) runs.
  s.now = 1.6;
  d = p->decide(s);
  feed(s, d);
  EXPECT_EQ(runs(d)[0], 1);
  // What the node would propose to the coordinator now (Algorithm 2 on the rotated list), not applied.
  auto c = p->cluster_candidates(s);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->size(), 2U);
}

TEST(MembusPolicy, ArrivalFillsIdleCpusInLocalMode) {
  auto p = membus_with({});
  Snapshot s = machine_with(4, {2});
  Decision d = p->decide(s);
  feed(s, d);
  EXPECT_EQ(runs(d), (std::vector<int>{1}));
  JobView late;
  late.id = 2;
  late.request = 2;
  s.jobs.push_back(late);
  s.now = 0.1;
  s.event = Event::arrival;
  d = p->decide(s);
  EXPECT_EQ(runs(d), (std::vector<int>{1, 1}));  // 2 + 2 <= 4: work conserving
}

TEST(MembusPolicy, ParametersAreCheckedAndReported) {
  auto p = membus_with({});
  EXPECT_FALSE(p->set_param("q", "0").ok());
  EXPECT_FALSE(p->set_param("w", "0").ok());
  EXPECT_FALSE(p->set_param("mem_bw", "-1").ok());
  EXPECT_FALSE(p->set_param("nope", "1").ok());
  ASSERT_TRUE(p->set_param("w", "4").ok());
  bool found = false;
  for (const auto& prm : p->params()) {
    if (prm.name == "w") found = prm.value == "4";
  }
  EXPECT_TRUE(found);
}
