// PDPA's multiprogramming-level policy (Corbalan et al., TPDS 2005, §4.3): may a new job start now?
#include <gtest/gtest.h>

#include "test_pdpa_driver.hpp"

using namespace cosched::policy;
using cosched::policy::testing::PdpaDriver;

namespace {
PdpaRunningJob job(JobId id, int request, int cpus, PdpaState s) { return PdpaRunningJob{id, request, cpus, s}; }
}  // namespace

TEST(PdpaMl, EmptyMachineAcceptsAJob) {
  auto ms = pdpa_may_start({}, 8, PdpaParams{});
  EXPECT_TRUE(ms.ok);
}

TEST(PdpaMl, FreeCpusAndAllStableAccepts) {
  auto ms = pdpa_may_start({job(1, 30, 20, PdpaState::stable), job(2, 30, 30, PdpaState::stable)}, 60, {});
  EXPECT_TRUE(ms.ok);
  EXPECT_NE(ms.reason.find("10 free CPUs and every running job is settled"), std::string::npos) << ms.reason;
}

TEST(PdpaMl, JobStillSearchingUpwardBlocks) {
  auto no_ref = pdpa_may_start({job(1, 30, 20, PdpaState::stable), job(2, 30, 10, PdpaState::no_ref)}, 60, {});
  EXPECT_FALSE(no_ref.ok);
  EXPECT_EQ(no_ref.reason, "30 free CPUs but job 2 is in NO_REF and may still claim them");
  auto inc = pdpa_may_start({job(1, 30, 12, PdpaState::inc)}, 60, {});
  EXPECT_FALSE(inc.ok);
}

TEST(PdpaMl, JobsThatCannotUseMoreDoNotBlock) {
  // NO_REF but holding its whole request; DEC (it is giving CPUs back).
  auto ms = pdpa_may_start({job(1, 2, 2, PdpaState::no_ref), job(2, 30, 8, PdpaState::dec)}, 60, {});
  EXPECT_TRUE(ms.ok);
}

TEST(PdpaMl, AJobAtItsEqualShareWhileJobsWaitDoesNotBlock) {
  PdpaRunningJob capped{1, 16, 4, PdpaState::no_ref, false, 4};  // 1 running + 3 waiting on 16 CPUs
  auto ms = pdpa_may_start({capped}, 16, {});
  EXPECT_TRUE(ms.ok) << ms.reason;
  PdpaRunningJob below{1, 16, 3, PdpaState::no_ref, false, 4};  // below its share: it may still claim one
  EXPECT_FALSE(pdpa_may_start({below}, 16, {}).ok);
}

TEST(PdpaMl, BadPerformanceAcceptsEvenWhileAnotherJobGrows) {
  auto ms = pdpa_may_start({job(1, 30, 12, PdpaState::inc), job(2, 30, 8, PdpaState::dec)}, 60, {});
  EXPECT_TRUE(ms.ok);
  EXPECT_NE(ms.reason.find("job 2 shows bad performance (DEC)"), std::string::npos) << ms.reason;
}

TEST(PdpaMl, NoFreeCpuRefusesEvenWithBadPerformance) {
  auto ms = pdpa_may_start({job(1, 30, 59, PdpaState::stable), job(2, 30, 1, PdpaState::dec)}, 60, {});
  EXPECT_FALSE(ms.ok);
  EXPECT_EQ(ms.reason, "no free CPU (60 of 60 allocated)");
}

TEST(PdpaMl, MaxMlCapsAndMinMlFloors) {
  PdpaParams p;
  p.max_ml = 2;
  auto capped = pdpa_may_start({job(1, 4, 4, PdpaState::stable), job(2, 4, 4, PdpaState::stable)}, 60, p);
  EXPECT_FALSE(capped.ok);
  EXPECT_EQ(capped.reason, "2 jobs running, max_ml is 2");

  PdpaParams floor;
  floor.min_ml = 4;  // the paper's §5 default level: below it jobs start even on a busy machine
  auto below = pdpa_may_start({job(1, 60, 60, PdpaState::no_ref)}, 60, floor);
  EXPECT_TRUE(below.ok);
  auto at = pdpa_may_start({job(1, 30, 30, PdpaState::no_ref), job(2, 30, 30, PdpaState::no_ref),
                            job(3, 30, 0, PdpaState::no_ref), job(4, 30, 0, PdpaState::no_ref)},
                           60, floor);
  EXPECT_FALSE(at.ok);  // 4 jobs: the §4.3 rule again (no free CPU)
}

TEST(PdpaMl, JobsBeingStartedHoldAFreeCpuEach) {
  // 16 CPUs, job 1 STABLE on 12: 4 free. Three jobs being started take one each: 1 left, a fourth may start.
  auto three = pdpa_may_start({job(1, 16, 12, PdpaState::stable)}, 16, {}, 3);
  EXPECT_TRUE(three.ok) << three.reason;
  auto four = pdpa_may_start({job(1, 16, 12, PdpaState::stable)}, 16, {}, 4);
  EXPECT_FALSE(four.ok);
  EXPECT_EQ(four.reason, "no free CPU (16 of 16 allocated, counting one for each of the 4 jobs being started)");
  // Nothing registered yet: the job being started is the only one, and it cannot claim anything yet.
  EXPECT_TRUE(pdpa_may_start({}, 2, {}, 1).ok);
  EXPECT_FALSE(pdpa_may_start({}, 2, {}, 2).ok);
  PdpaParams p;
  p.max_ml = 2;
  auto ml = pdpa_may_start({job(1, 16, 8, PdpaState::stable)}, 16, p, 1);
  EXPECT_FALSE(ml.ok);
  EXPECT_EQ(ml.reason, "2 jobs running, max_ml is 2") << "a job being started counts as running";
}

TEST(PdpaMl, DecisionCountsCpusFreedByThisVeryDecision) {
  PdpaDriver m(16);
  m.arrive(1, 16);
  EXPECT_FALSE(m.last.may_start);  // no free CPU
  m.report(1, 8.0);                // E 0.5 at 16 → DEC 15 (step 1 on 16 CPUs)
  EXPECT_EQ(m.cpus(1), 15);
  EXPECT_TRUE(m.last.may_start);
  EXPECT_NE(m.last.may_start_reason.find("1 free CPU and"), std::string::npos) << m.last.may_start_reason;
}

TEST(PdpaMl, QueryAnswersWithoutChangingAllocations) {
  PdpaDriver m(16);
  m.arrive(1, 8);
  m.arrive(2, 16);  // NO_REF at 8 of 16: may claim more
  auto& d = m.step(Event::query, -1);
  EXPECT_EQ(m.cpus(1), 8);
  EXPECT_EQ(m.cpus(2), 8);
  EXPECT_FALSE(d.may_start);
  m.report(2, 7.2);  // E 0.9: STABLE at 8, machine full
  EXPECT_FALSE(m.last.may_start);
  m.report(1, 4.0);  // E 0.5: DEC 8 → 7, one CPU free
  EXPECT_TRUE(m.last.may_start);
}
