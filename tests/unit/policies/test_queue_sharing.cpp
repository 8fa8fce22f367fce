// The space-sharing policies' rule for a queue longer than the machine (policies/queue_sharing.hpp).
#include <gtest/gtest.h>

#include "policies/queue_sharing.hpp"
#include "policies/space/dss.hpp"
#include "policies/space/equal_efficiency.hpp"
#include "policies/space/equipartition.hpp"
#include "policies/space/pdpa.hpp"
#include "policy_test_util.hpp"

using namespace cosched::policy;
using cosched::policy::testing::counts;
using cosched::policy::testing::machine_with;

namespace {

Snapshot queued(Snapshot s, int waiting, int starting = 0) {
  s.queued = waiting;
  s.starting = starting;
  return s;
}

}  // namespace

TEST(QueueSharing, AdmitsUpToFourJobsPerCpuWhileJobsWait) {
  Equipartition p;
  // 2 CPUs, each holding a job, 4 waiting: a third job may start and share a CPU.
  auto d = p.decide(queued(machine_with(2, {2, 2}), 4));
  EXPECT_TRUE(d.may_start);
  EXPECT_EQ(d.may_start_reason, "4 jobs wait and every CPU holds a job: jobs share CPUs rather than queue (2 running "
                                "of at most 8, jobs_per_cpu=4)");
  // 7 running and 1 being started make 8 = 4 × 2: no more.
  EXPECT_FALSE(p.decide(queued(machine_with(2, {2, 2, 2, 2, 2, 2, 2}), 3, 1)).may_start);
  EXPECT_TRUE(p.decide(queued(machine_with(2, {2, 2, 2, 2, 2, 2, 2}), 3, 0)).may_start);
  // The shared jobs hold one CPU each (placement shares the CPUs).
  EXPECT_EQ(counts(p.decide(queued(machine_with(2, {2, 2, 2}), 3))), (std::vector<int>{1, 1, 1}));
}

TEST(QueueSharing, NothingWaitingKeepsThePapersRule) {
  Equipartition p;
  auto d = p.decide(machine_with(2, {2, 2}));  // queued = 0: nobody to admit
  EXPECT_FALSE(d.may_start);
  EXPECT_EQ(d.may_start_reason, "every CPU already holds a job");
}

TEST(QueueSharing, OneJobPerCpuIsThePapersRule) {
  Equipartition p;
  ASSERT_TRUE(p.set_param("jobs_per_cpu", "1"));
  EXPECT_FALSE(p.decide(queued(machine_with(2, {2, 2}), 4)).may_start);
  ASSERT_TRUE(p.set_param("jobs_per_cpu", "2"));
  EXPECT_TRUE(p.decide(queued(machine_with(2, {2, 2, 2}), 4)).may_start);
  EXPECT_FALSE(p.decide(queued(machine_with(2, {2, 2, 2, 2}), 4)).may_start);
}

TEST(QueueSharing, RejectsBadValuesAndChangesNothing) {
  Equipartition p;
  auto st = p.set_param("jobs_per_cpu", "0");
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("jobs_per_cpu"), std::string::npos);
  EXPECT_FALSE(p.set_param("jobs_per_cpu", "x"));
  ASSERT_EQ(p.params().size(), 1u);
  EXPECT_EQ(p.params()[0].name, "jobs_per_cpu");
  EXPECT_EQ(p.params()[0].value, "4");
}

TEST(QueueSharing, AFreeCpuLeavesThePolicysOwnRule) {
  // PDPA with one job on 2 of 4 CPUs: CPUs are free and the job may still claim them (NO_REF): its own rule
  // says wait, and the queue does not override it (fewer jobs than CPUs).
  Pdpa p(Machine{4, 4, 1, 1});
  auto d = p.decide(queued(machine_with(4, {4}, {2}), 3));
  for (const auto& a : d.jobs) EXPECT_GE(a.cpus, 1);
  auto s = queued(machine_with(4, {4, 4, 4, 4}, {1, 1, 1, 1}), 3);
  s.event = Event::quantum;
  EXPECT_TRUE(p.decide(s).may_start);
}

TEST(QueueSharing, PdpaStrictAndMaxMlKeepTheirWord) {
  Pdpa strict(Machine{2, 2, 1, 1});
  ASSERT_TRUE(strict.set_param("strict", "1"));
  EXPECT_FALSE(strict.decide(queued(machine_with(2, {2, 2}, {1, 1}), 4)).may_start);
  Pdpa capped(Machine{2, 2, 1, 1});
  ASSERT_TRUE(capped.set_param("max_ml", "3"));
  EXPECT_TRUE(capped.decide(queued(machine_with(2, {2, 2}, {1, 1}), 4)).may_start);
  EXPECT_FALSE(capped.decide(queued(machine_with(2, {2, 2, 2}, {1, 1, 1}), 4)).may_start);
}

TEST(QueueSharing, EveryFamilyMemberAdmits) {
  Dss dss;
  EXPECT_TRUE(dss.decide(queued(machine_with(2, {2, 2}), 1)).may_start);
  EXPECT_FALSE(dss.decide(machine_with(2, {2, 2})).may_start);
  EqualEfficiency ee;
  EXPECT_TRUE(ee.decide(queued(machine_with(2, {2, 2}), 1)).may_start);
  EXPECT_FALSE(ee.decide(machine_with(2, {2, 2})).may_start);
}
