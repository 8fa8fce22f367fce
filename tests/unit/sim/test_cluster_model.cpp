// cosched-sim's cluster model (sim/cluster_model.hpp): the contention rates worked by hand, --job parsing, and
// whole runs: under membus a memory-heavy job runs with a light one, never with its twin, and does better
// than under gang with its admission-order rows.
#include <gtest/gtest.h>

#include "sim/cluster_model.hpp"

using namespace cosched::sim;

TEST(ClusterModel, RatesFollowTheOversubscribedResource) {
  ClusterModel m;
  m.cpus = 2;
  m.mem_bw = 1000;
  m.net_bw = 100;
  m.jobs = {{"A", 1, 800, 0, 1.0, 0}, {"B", 1, 700, 0, 0.5, 0}, {"C", 1, 100, 150, 0.1, 0.4}};
  // A + B: D_M = 1500 > 1000, stretch 1.5: A 1/(1 + 1·0.5) = 0.667, B 1/(1 + 0.5·0.5) = 0.8.
  auto r = node_rates(m, {1, 1, 0});
  EXPECT_NEAR(r[0], 1 / 1.5, 1e-12);
  EXPECT_NEAR(r[1], 0.8, 1e-12);
  EXPECT_EQ(r[2], 0.0);
  // A + C: D_M = 800 + 100 + 150 = 1050 (C's network crosses the bus), stretch 1.05; D_N = 150, stretch 1.5:
  // A 1/1.05, C 1/(1 + 0.1·0.05 + 0.4·0.5) = 1/1.205.
  r = node_rates(m, {1, 0, 1});
  EXPECT_NEAR(r[0], 1 / 1.05, 1e-12);
  EXPECT_NEAR(r[2], 1 / 1.205, 1e-12);
  // Alone: no contention.
  EXPECT_EQ(node_rates(m, {0, 1, 0})[1], 1.0);
}

TEST(ClusterModel, JobSpecsAreCheckedByField) {
  auto j = parse_cluster_job("CG,1,674,40,0.9,0.1");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->name, "CG");
  EXPECT_EQ(j->procs, 1);
  EXPECT_DOUBLE_EQ(j->mem_mbs, 674);
  EXPECT_FALSE(parse_cluster_job("CG,1,674,40,0.9").ok());
  EXPECT_NE(parse_cluster_job("CG,0,674,40,0.9,0.1").error().message.find("PROCS"), std::string::npos);
  EXPECT_NE(parse_cluster_job("CG,1,674,40,1.5,0").error().message.find("F"), std::string::npos);
  EXPECT_FALSE(parse_cluster_job("CG,1,674,40,0.7,0.7").ok());
  EXPECT_FALSE(parse_cluster_job("CG,1,x,40,0.1,0.1").ok());
}

TEST(ClusterModel, MembusPairsTheHeavyJobsWithTheLightOnes) {
  ClusterModel m;
  m.nodes = 4;
  m.cpus = 2;
  m.mem_bw = 750;
  m.duration = 60;
  // Admission order heavy, heavy, light, light: gang's rows are (heavy, heavy) and (light, light).
  m.jobs = {{"H1", 1, 700, 0, 0.9, 0}, {"H2", 1, 700, 0, 0.9, 0}, {"L1", 1, 100, 0, 0.1, 0}, {"L2", 1, 100, 0, 0.1, 0}};
  const auto mb = run_cluster(m, ClusterScheduler::membus, 1);
  const auto gg = run_cluster(m, ClusterScheduler::gang, 1);
  // After the first quanta (no samples yet) membus never runs the two heavy jobs together.
  EXPECT_LT(mb.pairs[0][1], mb.pairs[0][2] + mb.pairs[0][3]);
  EXPECT_LE(mb.pairs[0][1], 2 * m.nodes);
  EXPECT_EQ(gg.pairs[0][2] + gg.pairs[0][3], 0);
  // So the heavy jobs get more done under membus than under gang.
  EXPECT_GT(mb.normalized[0], gg.normalized[0]);
  EXPECT_GT(mb.normalized[1], gg.normalized[1]);
}
