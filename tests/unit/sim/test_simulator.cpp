// The engine as a whole: the daemon's call sequence, qsubmit's admission rules, ties, determinism.
#include <gtest/gtest.h>

#include <cmath>

#include "sim_test_util.hpp"

using namespace cosched;
using namespace cosched::sim;
using namespace cosched::sim::testing;

namespace {

// A test fixture policy (never registered): equal shares, records every call, may ask for a timer and may
// stop the youngest job.
class Recording : public policy::Policy {
 public:
  std::vector<policy::Snapshot> calls;
  double wake_at = -1;
  bool stop_youngest_until = false;
  double resume_at = 0;

  std::string_view name() const override { return "recording"; }
  std::unique_ptr<policy::Policy> clone() const override { return std::make_unique<Recording>(*this); }
  policy::Decision decide(const policy::Snapshot& s) override {
    calls.push_back(s);
    policy::Decision d;
    const int n = static_cast<int>(s.jobs.size());
    for (const auto& j : s.jobs) {
      policy::Allocation a{j.id, std::max(1, std::min(j.request, s.machine.cpus / std::max(n, 1))), true, "", ""};
      if (stop_youngest_until && n > 1 && j.id == s.jobs.back().id && s.now < resume_at) a.runnable = false;
      d.jobs.push_back(a);
    }
    d.may_start = true;
    if (wake_at >= 0 && s.now < wake_at) d.wake_at = wake_at;
    return d;
  }
};

SimConfig no_analyzer(int cpus) {
  SimConfig c;
  c.cpus = cpus;
  c.analyzer.enabled = false;
  return c;
}

}  // namespace

TEST(Simulator, AJobAloneRunsItsSwfRunTime) {
  Apps apps;
  auto out = simulate(no_analyzer(8), {job(1, 5, 8, 100, apps.good)}, "equip");
  ASSERT_EQ(out.jobs.size(), 1u);
  EXPECT_DOUBLE_EQ(out.jobs[0].start, 5);
  EXPECT_NEAR(out.jobs[0].end, 105, 1e-9);
  ASSERT_EQ(out.jobs[0].allocation.size(), 1u);
  EXPECT_EQ(out.jobs[0].allocation[0].cpus, 8);
  EXPECT_EQ(out.jobs[0].allocation[0].cpu_list, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(Simulator, TheSelfAnalyzerBaselineIsPaidByTheJob) {
  Apps apps;
  SimConfig c;
  c.cpus = 4;
  c.analyzer.baseline = "always";  // equip uses no speedup: "auto" would skip the baseline (next test)
  auto out = simulate(c, {job(1, 0, 4, 10, apps.linear)}, "equip");
  EXPECT_DOUBLE_EQ(out.jobs[0].end, 12.25);  // see RunningJob.BaselineAtOneCpuThenTheAllocation
  EXPECT_EQ(out.stats.reports, 1u);
}

// cosched-rm --baseline auto (Daemon::follow_sharing): under a policy that uses speedups, a job alone runs
// no baseline, which would change no decision; once another job arrives it measures.
TEST(Simulator, UnderPdpaAJobAloneWaitsWithItsBaselineUntilAnotherJobArrives) {
  Apps apps;
  SimConfig c;
  c.cpus = 4;
  auto alone = simulate(c, {job(1, 0, 4, 10, apps.linear)}, "pdpa");
  EXPECT_DOUBLE_EQ(alone.jobs[0].end, 10);  // every iteration at 4 CPUs
  // Its only report is its sampler's waiting-time efficiency (1 at 4 CPUs: PDPA's check could matter, but the
  // baseline still waits while the job is alone).
  EXPECT_EQ(alone.stats.reports, 1u);
  EXPECT_EQ(alone.stats.baseline_iterations, 0u);
  c.analyzer.baseline = "always";  // PDPA §3.1: the baseline as the job starts
  auto paper = simulate(c, {job(1, 0, 4, 10, apps.linear)}, "pdpa");
  EXPECT_DOUBLE_EQ(paper.jobs[0].end, 12.25);  // as TheSelfAnalyzerBaselineIsPaidByTheJob
  c.analyzer.baseline = "auto";
  auto pair = simulate(c, {job(1, 0, 4, 10, apps.linear), job(2, 3, 4, 10, apps.linear)}, "pdpa");
  EXPECT_GT(pair.stats.reports, 0u);  // both measure once they share the machine
}

TEST(Simulator, EquipartitionJobsSkipTheBaseline) {
  Apps apps;
  SimConfig c;
  c.cpus = 4;
  c.model_unread_estimates = true;  // equip reads no estimate: without this the job would model none
  auto out = simulate(c, {job(1, 0, 4, 10, apps.linear)}, "equip");
  EXPECT_DOUBLE_EQ(out.jobs[0].end, 10);  // the whole run at the allocation: no iteration at 1 CPU
  // One allocation only: the SelfAnalyzer has nothing to compare with; the one report is the waiting-time
  // efficiency, which needs no second point (tests/unit/sim/test_waiting_model.cpp).
  EXPECT_EQ(out.stats.reports, 1u);
  EXPECT_EQ(out.stats.waiting_estimates, 1u);
  c.analyzer.waiting_time = false;
  EXPECT_EQ(simulate(c, {job(1, 0, 4, 10, apps.linear)}, "equip").stats.reports, 0u);
}

TEST(Simulator, TheDaemonsCallSequence) {
  Apps apps;
  SimConfig c;
  c.cpus = 4;
  c.analyzer.baseline = "always";
  Recording pol;
  simulate(c, {job(1, 0, 4, 10, apps.linear)}, pol);
  // Start-up decision; arrival and the tick that follows it; one tick after each iteration the job runs
  // while it waits for its first report (a policy may bound that wait in the job's own iterations:
  // JobView::analyzed_iterations); the report's tick (report, then quantum); departure. No other tick:
  // nothing changed, so the daemon's ticks would have decided the same.
  using E = policy::Event;
  std::vector<E> events;
  std::size_t report = 0;
  for (std::size_t k = 0; k < pol.calls.size(); ++k) {
    if (pol.calls[k].event == E::report) report = k;
    if (events.empty() || pol.calls[k].event != E::quantum || events.back() != E::quantum) {
      events.push_back(pol.calls[k].event);
    }
  }
  EXPECT_EQ(events, (std::vector<E>{E::quantum, E::arrival, E::quantum, E::report, E::quantum, E::departure}));
  for (std::size_t k = 2; k < report; ++k) {
    EXPECT_TRUE(pol.calls[k].jobs[0].analyzing_since < 0 || !pol.calls[k].jobs[0].perf.valid) << k;
  }
  // The report, published at t = 4.0, a quantum boundary, is read by the tick at that same instant.
  ASSERT_GT(report, 2u);
  EXPECT_NEAR(pol.calls[report].now, 4.0, 1e-9);
  ASSERT_EQ(pol.calls[report].jobs.size(), 1u);
  EXPECT_TRUE(pol.calls[report].jobs[0].perf.valid);
  EXPECT_EQ(pol.calls[report].jobs[0].perf.cpus, 4);
  EXPECT_EQ(pol.calls[report].jobs[0].history.size(), 1u);
  EXPECT_NEAR(pol.calls[1].now, 0.0, 1e-12);
  EXPECT_EQ(pol.calls[1].subject, 1);
  EXPECT_EQ(pol.calls[1].jobs[0].allocation, 0);  // arrival: no CPUs yet
}

TEST(Simulator, WakeAtBecomesATimerEvent) {
  Apps apps;
  Recording pol;
  pol.wake_at = 7.5;
  simulate(no_analyzer(4), {job(1, 0, 4, 10, apps.linear)}, pol);
  int timers = 0;
  for (const auto& s : pol.calls) {
    if (s.event == policy::Event::timer) {
      ++timers;
      EXPECT_NEAR(s.now, 7.5, 1e-12);
    }
  }
  EXPECT_EQ(timers, 1);
}

TEST(Simulator, AStoppedJobHoldsNoCpusAndMakesNoProgress) {
  // The time-sharing hook: Allocation::runnable = false stops a job until a later decision resumes it.
  Apps apps;
  Recording pol;
  pol.stop_youngest_until = true;
  pol.resume_at = 20;
  pol.wake_at = 20;
  auto out = simulate(no_analyzer(4), {job(1, 0, 2, 100, apps.linear), job(2, 0, 2, 10, apps.linear)}, pol);
  EXPECT_NEAR(out.jobs[1].start, 0, 1e-12);
  EXPECT_NEAR(out.jobs[1].end, 30, 1e-9);  // stopped for 20 s, then its 10 s
  ASSERT_EQ(out.jobs[1].allocation.size(), 1u);
  EXPECT_NEAR(out.jobs[1].allocation[0].t0, 20, 1e-12);
}

TEST(Simulator, FixedMultiprogrammingLevelQueuesJobs) {
  Apps apps;
  SimConfig c = no_analyzer(4);
  c.fixed_ml = 1;
  auto out = simulate(c, {job(1, 0, 4, 10, apps.linear), job(2, 1, 4, 10, apps.linear)}, "equip");
  EXPECT_NEAR(out.jobs[1].start, 10, 1e-9);  // waits for job 1: a completion at t frees its slot at t
  EXPECT_NEAR(out.jobs[1].end, 20, 1e-9);
  ASSERT_GE(out.ml.size(), 3u);
  EXPECT_EQ(out.ml[1].queued, 1);
}

TEST(Simulator, ChangesWithinOneInstantReachTheJobOnceAsTheirNetResult) {
  // Job 2's departure and job 3's start happen at the same instant (t = 10): Equipartition gives job 1 all 8
  // CPUs and takes 4 back at once. A program only sees its allocation at its next parallel region, so job 1
  // keeps 4 CPUs without paying the reallocation cost twice. Same at t = 0 (job 1 starts with 4, not 8).
  Apps apps;
  SimConfig c = no_analyzer(8);
  c.fixed_ml = 2;
  c.timing.realloc_cost_s = 1.0;
  auto out = simulate(c, {job(1, 0, 8, 50, apps.linear), job(2, 0, 4, 10, apps.linear), job(3, 1, 4, 10, apps.linear)},
                      "equip");
  EXPECT_DOUBLE_EQ(out.jobs[1].end, 10);
  EXPECT_DOUBLE_EQ(out.jobs[2].end, 20);
  // Job 1: 4 CPUs for 20 s (80 units), one 4 → 8 change at 20 (stalled to 21), 320 units at 8 CPUs.
  EXPECT_DOUBLE_EQ(out.jobs[0].end, 61);
}

TEST(Simulator, SelectionOrderAndTies) {
  Apps apps;
  SimConfig c = no_analyzer(8);
  c.fixed_ml = 1;
  // Three jobs queue behind job 1; FCFS takes file order among equal submit times, SJF the smallest.
  std::vector<JobSpec> jobs = {job(1, 0, 8, 10, apps.linear), job(2, 1, 8, 10, apps.linear),
                               job(3, 1, 2, 10, apps.linear), job(4, 1, 4, 10, apps.linear)};
  auto fcfs = simulate(c, jobs, "equip");
  EXPECT_LT(fcfs.jobs[1].start, fcfs.jobs[2].start);
  EXPECT_LT(fcfs.jobs[2].start, fcfs.jobs[3].start);
  c.selection = qs::Selection::shortest_request;
  auto sjf = simulate(c, jobs, "equip");
  EXPECT_LT(sjf.jobs[2].start, sjf.jobs[3].start);
  EXPECT_LT(sjf.jobs[3].start, sjf.jobs[1].start);
}

TEST(Simulator, UnusableJobsAreReportedNeverStarted) {
  Apps apps;
  std::vector<JobSpec> jobs = {job(1, 0, 2, 10, apps.linear), job(2, 1, 2, 10, apps.linear)};
  jobs[1].problem = "run time unknown";
  auto out = simulate(no_analyzer(4), jobs, "equip");
  EXPECT_EQ(out.jobs[1].start, -1);
  EXPECT_EQ(out.jobs[1].end, -1);
  EXPECT_EQ(out.jobs[1].exit_status, -1);
  EXPECT_EQ(out.jobs[1].id, 2);
}

TEST(Simulator, ZeroWorkJobsStartAndEndAtOnce) {
  Apps apps;
  auto out = simulate(no_analyzer(4), {job(1, 3, 2, 0, apps.linear)}, "equip");
  EXPECT_DOUBLE_EQ(out.jobs[0].start, 3);
  EXPECT_DOUBLE_EQ(out.jobs[0].end, 3);
}

TEST(Simulator, SameSeedSameRunDifferentSeedDifferentNoise) {
  Apps apps;
  SimConfig c;
  c.cpus = 16;
  c.analyzer.noise = 0.05;
  c.timing.report_every_s = 0.1;
  c.timing.realloc_cost_s = 0.05;
  std::vector<JobSpec> jobs;
  for (int i = 0; i < 12; ++i) jobs.push_back(job(i + 1, i * 3.0, 8, 30, i % 2 ? apps.good : apps.flat));
  c.seed = 11;
  auto a = simulate(c, jobs, "equal_eff");
  auto b = simulate(c, jobs, "equal_eff");
  EXPECT_TRUE(same_records(a.jobs, b.jobs));
  c.seed = 12;
  auto d = simulate(c, jobs, "equal_eff");
  EXPECT_FALSE(same_records(a.jobs, d.jobs));
}

TEST(Simulator, AClosedJobIsReleasedWhenItsPredecessorEndsPlusThinkTime) {
  // SWF fields 17-18: job 2 follows job 1 (think 3 s); its own submit time (0) does not count. Job 3 is open.
  Apps apps;
  auto second = job(2, 0, 8, 10, apps.good);
  second.preceding = 1;
  second.think = 3;
  auto out = simulate(no_analyzer(8), {job(1, 0, 8, 100, apps.good), second, job(3, 1, 8, 10, apps.good)}, "equip");
  ASSERT_EQ(out.jobs.size(), 3u);
  const double end1 = out.jobs[0].end;
  EXPECT_GT(end1, 100);  // shared with job 3 for a while
  EXPECT_NEAR(out.jobs[1].submit, end1 + 3, 1e-9);
  EXPECT_NEAR(out.jobs[1].start, end1 + 3, 1e-9);
  EXPECT_DOUBLE_EQ(out.jobs[2].start, 1);
}

// More jobs than CPUs (policies/queue_sharing.hpp, sim/cpu_sharing.cpp): four 1-CPU jobs of 20 s of work on 2
// CPUs, submitted together. Equipartition admits all four while they wait (jobs_per_cpu=4): placement puts
// two on each CPU, each goes at half speed, all end at 40 s. Under the papers' rule (jobs_per_cpu=1) two run
// at full speed and end at 20 s, the other two start then and end at 40 s.
TEST(Simulator, JobsThatShareACpuEachGetTheirShareOfIt) {
  Apps apps;
  const std::vector<JobSpec> four = {job(1, 0, 1, 20, apps.linear), job(2, 0, 1, 20, apps.linear),
                                     job(3, 0, 1, 20, apps.linear), job(4, 0, 1, 20, apps.linear)};
  auto shared = simulate(no_analyzer(2), four, "equip");
  for (const auto& j : shared.jobs) {
    EXPECT_NEAR(j.start, 0, 1e-9);
    EXPECT_NEAR(j.end, 40, 1e-9);
  }
  SimConfig pool = no_analyzer(2);
  pool.place_cpus = false;  // one pool: 2 CPUs / 4 teams
  for (const auto& j : simulate(pool, four, "equip").jobs) EXPECT_NEAR(j.end, 40, 1e-9);
  auto queued = simulate(no_analyzer(2), four, "equip", {{"jobs_per_cpu", "1"}});
  EXPECT_NEAR(queued.jobs[0].end, 20, 1e-9);
  EXPECT_NEAR(queued.jobs[1].end, 20, 1e-9);
  EXPECT_NEAR(queued.jobs[2].start, 20, 1e-9);
  EXPECT_NEAR(queued.jobs[3].end, 40, 1e-9);
}

// Sharing ends when jobs leave: a 2-s job and a 20-s job on one CPU (1 CPU machine) share it until the short
// one ends at 4 s (2 s of work at half speed); the long one then has 18 s of work left, alone: ends at 22 s.
TEST(Simulator, ACpuShareGrowsBackWhenTheOtherJobEnds) {
  Apps apps;
  auto out = simulate(no_analyzer(1), {job(1, 0, 1, 20, apps.linear), job(2, 0, 1, 2, apps.linear)}, "equip");
  EXPECT_NEAR(out.jobs[1].end, 4, 1e-9);
  EXPECT_NEAR(out.jobs[0].end, 22, 1e-9);
}
