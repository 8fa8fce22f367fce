// Two rooms of the daemon that steer a job's SelfAnalyzer baseline: BaselineSteering (rm/daemon/baseline.hpp:
// --baseline, and the wait while a job is alone, read back from the arena the job maps) and narrowing
// (rm/daemon/narrowing.hpp: the CPUs a narrowed job runs on, the order of team and CPU changes, and what a
// job may ask).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "policies/registry.hpp"
#include "rm/daemon/baseline.hpp"
#include "rm/daemon/narrowing.hpp"
#include "rm_test_util.hpp"

namespace cosched::rm {
namespace {

using test::map_as_job;

Job job(policy::JobId id, int allocation, const CpuSet& cpus) {
  Job j = test::job_with_arena(id);
  j.allocation = allocation;
  j.cpus = cpus;
  return j;
}

std::unique_ptr<policy::Policy> policy_named(const std::string& name) {
  policy::Machine m;
  m.cpus = 4;
  auto p = policy::make_policy(name, m, {});
  EXPECT_TRUE(p);
  return std::move(*p);
}

TEST(BaselineSteering, BaselineModeAndThePolicysUseOfSpeedups) {
  auto pdpa = policy_named("pdpa");
  auto equip = policy_named("equip");
  EXPECT_TRUE(BaselineSteering("auto").wanted(*pdpa));
  EXPECT_FALSE(BaselineSteering("auto").wanted(*equip));  // Equipartition uses no speedup
  EXPECT_TRUE(BaselineSteering("always").wanted(*equip));
  EXPECT_FALSE(BaselineSteering("never").wanted(*pdpa));
}

TEST(BaselineSteering, ABaselineWaitsWhileTheJobIsAloneAndRunsOnceAnotherShares) {
  auto pdpa = policy_named("pdpa");
  BaselineSteering b("auto");
  JobTable jobs;
  jobs.emplace(1, job(1, 4, CpuSet::range(0, 3)));
  proto::Arena* a = map_as_job(jobs.at(1));
  ASSERT_NE(a, nullptr);
  policy::Snapshot s;
  s.jobs.resize(1);
  b.follow_sharing(s, jobs, *pdpa, 1.0);
  EXPECT_TRUE(b.waits());  // alone from the start (the daemon tells a job so as it registers)
  EXPECT_TRUE(jobs.at(1).why.empty());
  s.queued = 1;  // one waits for admission: the machine is shared
  b.follow_sharing(s, jobs, *pdpa, 2.0);
  EXPECT_FALSE(b.waits());
  EXPECT_EQ(a->rm.flags.load() & proto::rm_baseline_waits, 0U);
  EXPECT_EQ(jobs.at(1).why.back().reason, "a job waits for admission: its SelfAnalyzer baseline may run");
  const auto lines = jobs.at(1).why.size();
  b.follow_sharing(s, jobs, *pdpa, 3.0);  // no change: nothing said
  EXPECT_EQ(jobs.at(1).why.size(), lines);
  s.queued = 0;
  b.follow_sharing(s, jobs, *pdpa, 4.0);
  EXPECT_TRUE(b.waits());
  EXPECT_NE(a->rm.flags.load() & proto::rm_baseline_waits, 0U);
  EXPECT_EQ(jobs.at(1).why.back().reason, "alone: its SelfAnalyzer baseline waits");
  BaselineSteering always("always");
  always.follow_sharing(s, jobs, *pdpa, 4.0);
  EXPECT_FALSE(always.waits());  // only --baseline auto waits
  munmap(a, proto::kArenaSize);
}

TEST(Narrowing, ANarrowedJobRunsOnTheFirstCpusOfItsSet) {
  Job j = job(1, 4, CpuSet::of({2, 3, 5, 7}));
  auto [n, set] = running_set(j, 4, j.cpus);
  EXPECT_EQ(n, 4);
  EXPECT_EQ(set.to_string(), "2-3,5,7");
  j.narrow_request = 2;
  std::tie(n, set) = running_set(j, 4, j.cpus);
  EXPECT_EQ(n, 2);
  EXPECT_EQ(set.to_string(), "2-3");
  j.narrow_request = 4;  // not fewer than it holds: no narrowing
  EXPECT_EQ(running_set(j, 4, j.cpus).first, 4);
}

// Records the CPU sets applied; confines, or not.
class RecordingEnforcer : public Enforcer {
 public:
  [[nodiscard]] std::string_view name() const override { return "recording"; }
  Status attach(Job& /*job*/) override { return {}; }
  Status apply(Job& /*job*/, const CpuSet& cpus) override {
    applied.push_back(cpus.to_string() + " team " + std::to_string(arena->rm.allocation.load()));
    return {};
  }
  void release(Job& /*job*/) override {}
  [[nodiscard]] bool confines() const override { return confining; }
  std::vector<std::string> applied;
  bool confining = true;
  proto::Arena* arena = nullptr;  // the job's view of its arena: the team it was told when the CPUs changed
};

// A job holding `cpus`, told so through its arena, which `e` reads as the job sees it.
Job published_job(RecordingEnforcer& e, int allocation, const CpuSet& cpus) {
  Job j = job(1, allocation, cpus);
  e.arena = map_as_job(j);
  j.arena->publish(allocation, cpus, false);
  return j;
}

TEST(Narrowing, AGrowingTeamGetsItsCpusFirstAndAShrinkingOneShrinksFirst) {
  RecordingEnforcer e;
  Job j = published_job(e, 2, CpuSet::range(0, 1));
  ASSERT_NE(e.arena, nullptr);
  publish_and_apply(e, j, 2, 4, CpuSet::range(0, 3));
  EXPECT_EQ(e.applied.back(), "0-3 team 2");  // applied while the team was still 2
  publish_and_apply(e, j, 4, 1, CpuSet::range(0, 0));
  EXPECT_EQ(e.applied.back(), "0 team 1");  // the team was told 1 before its CPUs went
  munmap(e.arena, proto::kArenaSize);
}

TEST(Narrowing, OnlyARequestThatCanBeTrueIsFollowed) {
  RecordingEnforcer e;
  Job j = published_job(e, 4, CpuSet::range(0, 3));
  ASSERT_NE(e.arena, nullptr);
  j.progress.narrow_cpus = 1;
  j.progress.phase = proto::Phase::measuring;  // not in its baseline: ignored
  EXPECT_FALSE(follow_narrowing(e, j, 1.0));
  j.progress.phase = proto::Phase::baseline;
  e.confining = false;  // a backend that confines nothing cannot narrow
  EXPECT_FALSE(follow_narrowing(e, j, 1.0));
  e.confining = true;
  ASSERT_TRUE(follow_narrowing(e, j, 2.0));
  EXPECT_EQ(j.narrow_request, 1);
  EXPECT_EQ(e.applied.back(), "0 team 1");
  EXPECT_EQ(j.why.back().reason, "baseline by narrowing: 1 of its 4 CPU(s) [0], its team unchanged");
  j.progress.narrow_cpus = 0;  // the baseline ended
  ASSERT_TRUE(follow_narrowing(e, j, 3.0));
  EXPECT_EQ(e.applied.back(), "0-3 team 1");  // CPUs widen before the team grows back
  EXPECT_EQ(e.arena->rm.allocation.load(), 4);
  munmap(e.arena, proto::kArenaSize);
}

}  // namespace
}  // namespace cosched::rm
