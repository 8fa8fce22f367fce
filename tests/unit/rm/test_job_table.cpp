// The job table's views (rm/daemon/job_table.hpp): the policy's jobs in admission order with their ranks in
// rank order, what a job of several asks for, Slurm's bound on a request, a job stopped from outside left
// to placement, and the all-or-none stop of a job's processes.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rm/daemon/job_table.hpp"
#include "rm/placement/cpu_sharing.hpp"
#include "rm/placement/placement.hpp"
#include "rm_test_util.hpp"

namespace cosched::rm {
namespace {

Job process(policy::JobId id, policy::JobId gang, int rank, int request) {
  Job j = test::job_with_arena(id);
  j.gang = gang;
  j.rank = rank;
  j.request = request;
  return j;
}

// Records stops; resumes and releases are not asked here.
class CountingStopper : public Stopper {
 public:
  [[nodiscard]] std::string_view name() const override { return "counting"; }
  Status stop(Job& /*job*/) override {
    ++stops;
    return {};
  }
  Status resume(Job& /*job*/) override { return {}; }
  [[nodiscard]] bool stopped(const Job& /*job*/) const override { return false; }
  void release(Job& /*job*/) override {}
  int stops = 0;
};

// Job 1 of its own; job 2 of two ranks registered rank 1 first (records 2 and 3); job 4 of its own.
JobTable table() {
  JobTable t;
  t.emplace(1, process(1, 0, 0, 2));
  t.emplace(2, process(2, 2, 1, 3));
  t.emplace(3, process(3, 2, 0, 4));
  t.emplace(4, process(4, 0, 0, 1));
  return t;
}

TEST(JobTable, UnitsAreInAdmissionOrderWithRanksInRankOrder) {
  JobTable t = table();
  auto u = units(t);
  ASSERT_EQ(u.size(), 3U);
  EXPECT_EQ(u[0].id, 1);
  EXPECT_EQ(u[1].id, 2);
  ASSERT_EQ(u[1].members.size(), 2U);
  EXPECT_EQ(u[1].members[0]->id, 3);  // rank 0
  EXPECT_EQ(u[1].members[1]->id, 2);  // rank 1
  EXPECT_EQ(u[2].id, 4);
  EXPECT_EQ(view_id(t.at(3)), 2);
  EXPECT_EQ(view_id(t.at(4)), 4);
}

TEST(JobTable, AJobOfSeveralAsksForWhatItsRanksAskTogetherWithinSlurmsCpus) {
  JobTable t = table();
  GangTable g;
  g[2] = Gang{0, "mpi:x", {2, 3}, 5, CpuSet::range(0, 4)};
  sensors::SensorSet sensors;
  auto u = units(t);
  policy::JobView v = job_view(u[1], g, sensors);
  EXPECT_EQ(v.id, 2);
  EXPECT_EQ(v.request, 7);     // 3 + 4
  EXPECT_EQ(v.allocation, 5);  // the allocation the ranks share
  EXPECT_FALSE(v.perf.valid);  // a rank's speedup is not the job's
  t.at(2).allowed = CpuSet::range(0, 2);
  t.at(3).allowed = CpuSet::range(4, 5);
  EXPECT_EQ(job_view(u[1], g, sensors).request, 5);  // Slurm gave the job CPUs 0-2 and 4-5
}

TEST(JobTable, AJobStoppedFromOutsideIsLeftToPlacement) {
  JobTable t = table();
  GangTable g;
  g[2] = Gang{0, "mpi:x", {2, 3}, 5, CpuSet::range(0, 4)};
  t.at(4).suspended = true;
  auto cj = core_jobs(units(t), g);
  ASSERT_EQ(cj.size(), 2U);
  EXPECT_EQ(cj[0].id, 1);
  EXPECT_FALSE(cj[0].several);
  EXPECT_EQ(cj[1].id, 2);
  EXPECT_TRUE(cj[1].several);
  EXPECT_EQ(cj[1].allocation, 5);
  EXPECT_EQ(cj[1].processes.size(), 2U);
}

TEST(JobTable, ARankWritingItsReportDefersTheStopOfEveryRank) {
  JobTable t = table();
  auto u = units(t);
  proto::Arena* a = test::map_as_job(t.at(2));
  ASSERT_NE(a, nullptr);
  a->job.seq.store(1);  // rank 1 mid-write
  CountingStopper s;
  EXPECT_FALSE(stop_unit(s, u[1], "quantum", 1.0));
  EXPECT_EQ(s.stops, 0);
  EXPECT_TRUE(t.at(3).runnable);
  EXPECT_EQ(t.at(3).why.back().event, "stop deferred");  // both ranks say why
  a->job.seq.store(2);
  EXPECT_TRUE(stop_unit(s, u[1], "quantum", 2.0));
  EXPECT_EQ(s.stops, 2);
  EXPECT_FALSE(t.at(2).runnable);
  EXPECT_FALSE(t.at(3).runnable);
  munmap(a, proto::kArenaSize);
}

TEST(JobTable, RanksJoinTheirUsersJobAndTheLastToLeaveEndsIt) {
  GangTable g;
  Job a = process(10, 0, 0, 1);
  a.uid = 1000;
  a.job_key = "mpi:run-1";
  join_gang(g, a);
  EXPECT_EQ(a.gang, 10);  // the first founds the job: its id is the job's
  Job b = process(11, 0, 1, 1);
  b.uid = 1000;
  b.job_key = "mpi:run-1";
  join_gang(g, b);
  EXPECT_EQ(b.gang, 10);
  Job other = process(12, 0, 0, 1);
  other.uid = 1001;  // the same key under another uid is another user's job, never this one
  other.job_key = "mpi:run-1";
  join_gang(g, other);
  EXPECT_EQ(other.gang, 12);
  EXPECT_EQ(g.at(10).members, (std::vector<policy::JobId>{10, 11}));
  EXPECT_FALSE(leave_gang(g, a));
  EXPECT_TRUE(leave_gang(g, b));
  EXPECT_EQ(g.count(10), 0U);
  EXPECT_EQ(g.count(12), 1U);
}

TEST(JobTable, AFixedTeamLargerThanItsCpusIsPlacedAsItsThreadsWhenCpusAreSharedPerThread) {
  JobTable t;
  t.emplace(1, process(1, 0, 0, 2));
  Job& j = t.at(1);
  j.allocation = 1;
  j.progress.last_team = 2;
  j.progress.team_mode = proto::TeamMode::set_by_program;  // GROMACS' -ntomp 2
  EXPECT_EQ(fixed_team(j), 2);
  EXPECT_EQ(core_jobs(units(t), {})[0].threads, 2);
  // In a cpu cgroup of its own (--cpu-share job) the kernel gives it one job's share of its CPU, whatever its
  // threads: placement counts it as one job.
  j.share_dir = "/sys/fs/cgroup/cpu/cosched-job.1.1";
  EXPECT_EQ(core_jobs(units(t), {})[0].threads, 0);
  j.share_dir.clear();
  j.progress.team_mode = proto::TeamMode::resizable;  // its next team is the allocation
  EXPECT_EQ(fixed_team(j), 0);
  j.progress.team_mode = proto::TeamMode::clause;
  j.allocation = 2;  // the team fits its CPUs: one thread per CPU for placement
  EXPECT_EQ(fixed_team(j), 2);
  const auto placed = place({0, 1, 2, 3}, {{1, 2, {}, {}, fixed_team(j)}, {2, 1, {}, {}}, {3, 1, {}, {}}});
  EXPECT_EQ(placed.at(1).to_string(), "0-1");
  EXPECT_EQ(placed.at(2).to_string(), "2");
  EXPECT_EQ(placed.at(3).to_string(), "3");
}

TEST(CpuSharing, ASetSharesWhenAnotherHoldsOneOfItsCpus) {
  const CpuSet a = CpuSet::range(0, 1), b = CpuSet::range(1, 2), c = CpuSet::of({3}), empty;
  // CPU 1 is in a and b; c and the empty set share nothing.
  EXPECT_EQ(sharing_a_cpu({&a, &b, &c, &empty}), (std::vector<char>{1, 1, 0, 0}));
  EXPECT_EQ(sharing_a_cpu({&a, &c}), (std::vector<char>{0, 0}));
  EXPECT_EQ(sharing_a_cpu({&c, &c}), (std::vector<char>{1, 1}));  // two jobs on one CPU
  EXPECT_TRUE(sharing_a_cpu({}).empty());
}

TEST(CpuSharing, OnlyRunningJobsCompeteAndTheJobReadsTheFlagInItsArena) {
  // Six jobs on 2 CPUs as equip places them: three on CPU 0, three on CPU 1; then the RM stops two of CPU 0's
  // (time sharing) and one of CPU 1's is stopped by its user: CPU 0's third job is alone, CPU 1's two share.
  JobTable t;
  for (policy::JobId id = 1; id <= 6; ++id) {
    t.emplace(id, process(id, 0, 0, 2));
    t.at(id).allocation = 1;
    t.at(id).cpus = CpuSet::of({id <= 3 ? 0 : 1});
  }
  proto::Arena* job3 = test::map_as_job(t.at(3));
  ASSERT_NE(job3, nullptr);
  note_cpu_sharing(t);
  for (policy::JobId id = 1; id <= 6; ++id) EXPECT_TRUE(t.at(id).arena->cpus_shared()) << id;
  EXPECT_NE(job3->rm.flags.load() & proto::rm_cpus_shared, 0U);
  t.at(1).runnable = false;
  t.at(2).runnable = false;
  t.at(4).suspended = true;
  note_cpu_sharing(t);
  EXPECT_FALSE(t.at(1).arena->cpus_shared());  // stopped: it competes for nothing
  EXPECT_FALSE(t.at(2).arena->cpus_shared());
  EXPECT_FALSE(t.at(3).arena->cpus_shared());  // alone on CPU 0 now
  EXPECT_EQ(job3->rm.flags.load() & proto::rm_cpus_shared, 0U);
  EXPECT_FALSE(t.at(4).arena->cpus_shared());
  EXPECT_TRUE(t.at(5).arena->cpus_shared());
  EXPECT_TRUE(t.at(6).arena->cpus_shared());
  munmap(job3, proto::kArenaSize);
}

}  // namespace
}  // namespace cosched::rm
