#include <gtest/gtest.h>

#include "rm/placement/topology.hpp"

using cosched::CpuSet;
using cosched::rm::Topology;

TEST(Topology, SyntheticMachineSummary) {
  auto t = Topology::load({}, "package:2 core:4 pu:2");
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto m = t->machine();
  EXPECT_EQ(m.cpus, 16);
  EXPECT_EQ(m.cores, 8);
  EXPECT_EQ(m.packages, 2);
  EXPECT_EQ(m.threads_per_core, 2);
  ASSERT_EQ(t->order().size(), 16U);
  // SMT siblings are adjacent in the order and share a core index.
  EXPECT_EQ(t->core_of()[0], t->core_of()[1]);
  EXPECT_NE(t->core_of()[1], t->core_of()[2]);
}

TEST(Topology, RestrictsToManagedCpus) {
  auto t = Topology::load(CpuSet::range(4, 7), "package:2 core:4 pu:1");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->machine().cpus, 4);
  EXPECT_EQ(t->cpus().to_string(), "4-7");
  EXPECT_EQ(t->machine().packages, 1);
}

TEST(Topology, RejectsCpusTheMachineLacks) {
  auto t = Topology::load(CpuSet::range(0, 99), "package:1 core:4 pu:1");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("4-99"), std::string::npos) << t.error().message;
}

TEST(Topology, RejectsBadSyntheticDescription) {
  auto t = Topology::load({}, "banana:3");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("synthetic"), std::string::npos);
}

TEST(Topology, LargeModelledMachine) {
  auto t = Topology::load({}, "package:8 numa:2 core:32 pu:2");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->machine().cpus, 1024);
}
