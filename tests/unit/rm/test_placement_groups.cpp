// Placement of co-scheduled groups (rm/placement/placement_groups.cpp): SMT siblings of one core on machines
// described with hwloc synthetic topologies, adjacent cores without SMT, and the fallback when groups do not
// fit.
#include <gtest/gtest.h>

#include "rm/placement/placement.hpp"
#include "rm/placement/topology.hpp"

using cosched::CpuSet;
using namespace cosched::rm;

namespace {

Topology machine(const std::string& synthetic) {
  auto t = Topology::load({}, synthetic);
  EXPECT_TRUE(t.ok()) << synthetic;
  return std::move(*t);
}

std::string set_text(const CpuSet& c) { return c.to_string(); }

// The core of `cpu` on `t`.
int core(const Topology& t, int cpu) {
  for (std::size_t i = 0; i < t.order().size(); ++i) {
    if (t.order()[i] == cpu) return t.core_of()[i];
  }
  return -1;
}

}  // namespace

TEST(PlacementGroups, PairsAreSiblingsOfOneCoreWithSmt2) {
  const Topology t = machine("package:1 core:4 pu:2");
  // Jobs 1+2 and 3+4, one CPU each; job 5 alone.
  auto out = place_with_groups(t.order(), t.core_of(),
                               {{1, 1, {}, {}}, {2, 1, {}, {}}, {3, 1, {}, {}}, {4, 1, {}, {}}, {5, 1, {}, {}}},
                               {{1, 2}, {3, 4}, {5}});
  ASSERT_EQ(out.size(), 5U);
  EXPECT_EQ(core(t, out[1].first()), core(t, out[2].first()));
  EXPECT_NE(out[1].first(), out[2].first());
  EXPECT_EQ(core(t, out[3].first()), core(t, out[4].first()));
  EXPECT_NE(core(t, out[1].first()), core(t, out[3].first()));
  // Job 5's core is its own.
  for (int other : {1, 3}) EXPECT_NE(core(t, out[5].first()), core(t, out[other].first()));
}

TEST(PlacementGroups, WideJobsShareEachOfTheirCores) {
  const Topology t = machine("package:1 core:4 pu:2");
  // Two 2-CPU jobs in one group: two cores, each job one PU of each (the first PUs, then the second ones).
  auto out = place_with_groups(t.order(), t.core_of(), {{1, 2, {}, {}}, {2, 2, {}, {}}}, {{1, 2}});
  ASSERT_EQ(out[1].count(), 2);
  ASSERT_EQ(out[2].count(), 2);
  EXPECT_TRUE((out[1] & out[2]).empty());
  std::vector<int> c1, c2;
  for (int cpu : out[1].to_vector()) c1.push_back(core(t, cpu));
  for (int cpu : out[2].to_vector()) c2.push_back(core(t, cpu));
  EXPECT_EQ(c1, c2);
  EXPECT_NE(c1[0], c1[1]);
}

TEST(PlacementGroups, Smt4GroupOfFourOnOneCore) {
  const Topology t = machine("package:1 core:2 pu:4");
  auto out = place_with_groups(t.order(), t.core_of(), {{1, 1, {}, {}}, {2, 1, {}, {}}, {3, 1, {}, {}}, {4, 1, {}, {}}},
                               {{1, 2, 3, 4}});
  CpuSet all;
  for (int id = 1; id <= 4; ++id) {
    EXPECT_EQ(core(t, out[id].first()), core(t, out[1].first()));
    all = all | out[id];
  }
  EXPECT_EQ(all.count(), 4);
}

TEST(PlacementGroups, AdjacentCoresWithoutSmtAndStableGroups) {
  std::vector<int> order = {0, 1, 2, 3};
  std::vector<int> cores = {0, 1, 2, 3};
  auto out = place_with_groups(order, cores, {{1, 1, {}, {}}, {2, 1, {}, {}}, {3, 1, {}, {}}, {4, 1, {}, {}}},
                               {{3, 1}, {2, 4}});
  EXPECT_EQ(set_text(out[3]), "0");
  EXPECT_EQ(set_text(out[1]), "1");
  EXPECT_EQ(set_text(out[2]), "2");
  EXPECT_EQ(set_text(out[4]), "3");
  // The same groups next quantum keep their cores even in another order.
  out = place_with_groups(order, cores,
                          {{1, 1, out[1], {}}, {2, 1, out[2], {}}, {3, 1, out[3], {}}, {4, 1, out[4], {}}},
                          {{2, 4}, {3, 1}});
  EXPECT_EQ(set_text(out[3]), "0");
  EXPECT_EQ(set_text(out[1]), "1");
  EXPECT_EQ(set_text(out[2]), "2");
  EXPECT_EQ(set_text(out[4]), "3");
}

TEST(PlacementGroups, UngroupedJobsTakeWhatIsLeftAndOversizedGroupsFallBack) {
  const Topology t = machine("package:1 core:2 pu:2");
  auto out = place_with_groups(t.order(), t.core_of(), {{1, 1, {}, {}}, {2, 1, {}, {}}, {3, 2, {}, {}}}, {{1, 2}});
  EXPECT_EQ(core(t, out[1].first()), core(t, out[2].first()));
  EXPECT_TRUE((out[3] & (out[1] | out[2])).empty());
  EXPECT_EQ(out[3].count(), 2);
  // Groups needing three cores on two: placed as if there were no groups (every job still gets its count).
  out = place_with_groups(t.order(), t.core_of(), {{1, 3, {}, {}}, {2, 1, {}, {}}}, {{1}, {2}});
  EXPECT_EQ(out[1].count(), 3);
  EXPECT_EQ(out[2].count(), 1);
}
