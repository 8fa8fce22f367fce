#include <gtest/gtest.h>

#include "policies/space/equipartition.hpp"
#include "policy_test_util.hpp"

using namespace cosched::policy;

using cosched::policy::testing::counts;
using cosched::policy::testing::machine_with;

TEST(Equipartition, SplitsEvenly) {
  Equipartition p;
  EXPECT_EQ(counts(p.decide(machine_with(2, {2, 2}))), (std::vector<int>{1, 1}));
  EXPECT_EQ(counts(p.decide(machine_with(60, {30, 30, 30, 30}))), (std::vector<int>{15, 15, 15, 15}));
}

TEST(Equipartition, SingleJobGetsItsRequestOnly) {
  Equipartition p;
  EXPECT_EQ(counts(p.decide(machine_with(8, {3}))), (std::vector<int>{3}));
}

TEST(Equipartition, SmallRequestsLeaveRemainderToOthers) {
  Equipartition p;
  // apsi asks for 2: the other two share the rest (PDPA paper workload w3 style).
  EXPECT_EQ(counts(p.decide(machine_with(60, {30, 2, 30}))), (std::vector<int>{29, 2, 29}));
  EXPECT_EQ(counts(p.decide(machine_with(10, {1, 1, 30}))), (std::vector<int>{1, 1, 8}));
}

TEST(Equipartition, RemainderGoesToCurrentHolderThenOlderJob) {
  Equipartition p;
  // 5 CPUs, 2 jobs: one gets 3. The younger job holds 3 now, so it keeps them.
  EXPECT_EQ(counts(p.decide(machine_with(5, {4, 4}, {2, 3}))), (std::vector<int>{2, 3}));
  // No current holding: the older job gets the extra CPU.
  EXPECT_EQ(counts(p.decide(machine_with(5, {4, 4}))), (std::vector<int>{3, 2}));
}

TEST(Equipartition, MoreJobsThanCpusKeepsOneEach) {
  Equipartition p;
  auto d = p.decide(machine_with(2, {2, 2, 2, 2}));
  EXPECT_EQ(counts(d), (std::vector<int>{1, 1, 1, 1}));
  EXPECT_FALSE(d.may_start);
}

TEST(Equipartition, MayStartWhileACpuIsUnshared) {
  Equipartition p;
  EXPECT_TRUE(p.decide(machine_with(4, {4, 4})).may_start);
  EXPECT_TRUE(p.decide(machine_with(4, {})).may_start);
  // Jobs the queuing system has started but that have not registered will each hold a CPU too.
  auto s = machine_with(4, {4, 4});
  s.starting = 1;
  EXPECT_TRUE(p.decide(s).may_start);
  s.starting = 2;
  auto d = p.decide(s);
  EXPECT_FALSE(d.may_start);
  EXPECT_EQ(d.may_start_reason, "every CPU already holds a job, counting the 2 being started");
}

TEST(Equipartition, ReasonOnlyWhenAllocationChanges) {
  Equipartition p;
  auto d = p.decide(machine_with(2, {2, 2}, {1, 0}));
  EXPECT_TRUE(d.jobs[0].reason.empty());
  EXPECT_NE(d.jobs[1].reason.find("→ 1 CPUs"), std::string::npos) << d.jobs[1].reason;
}
