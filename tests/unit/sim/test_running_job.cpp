// One job's timeline: baseline at one CPU, warm-up, measurement, steady state, reallocations, completion —
// checked against the arithmetic of docs/simulator.md.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/running_job.hpp"

using namespace cosched;
using sim::EventKind;
using sim::RunningJob;

namespace {

struct Fixture {
  sim::AppModel app{"lin", "lin", *sim::parse_speedup_spec("linear"), 1.0, "test"};
  sim::JobSpec spec;
  sim::AnalyzerSettings analyzer;
  sim::JobTiming timing;

  Fixture(double work, int request) {
    spec.number = 1;
    spec.request = request;
    spec.work = work;
    spec.app = &app;
  }
};

// Drives a job alone (no RM changes) through its events; returns the completion time.
double run_alone(RunningJob& job, int* reports = nullptr, double* first_report_at = nullptr) {
  std::uint64_t seq = 0;
  for (int guard = 0; guard < 100000; ++guard) {
    const auto next = job.next_event();
    const double resume = job.resume_at();
    if (resume < next.t) {
      job.on_resume(resume);
      continue;
    }
    if (next.kind == EventKind::completion) return next.t;
    job.on_boundary(next.t);
    if (job.analyzer().report_seq() != seq) {
      seq = job.analyzer().report_seq();
      if (reports != nullptr) ++*reports;
      if (first_report_at != nullptr && *first_report_at < 0) *first_report_at = next.t;
    }
  }
  ADD_FAILURE() << "job never completed";
  return -1;
}

// The job's latest report was measured at `cpus` with `speedup`.
void expect_report(const RunningJob& job, int cpus, double speedup) {
  policy::Perf p;
  ASSERT_TRUE(job.analyzer().perf(p));
  EXPECT_EQ(p.cpus, cpus);
  EXPECT_NEAR(p.speedup, speedup, 1e-9);
}

}  // namespace

TEST(RunningJob, BaselineAtOneCpuThenTheAllocation) {
  // 40 one-CPU seconds, 1-s iterations, 4 CPUs, linear: 3 baseline iterations at 1 CPU (3 s), a warm-up
  // and 3 measured iterations at 4 CPUs (1 s), report at t = 4; the remaining 33 units at rate 4 → 12.25.
  Fixture f(40, 4);
  RunningJob job(f.spec, f.analyzer, f.timing, 1);
  job.start(0, 4);
  EXPECT_EQ(job.team(), 1);
  int reports = 0;
  double first = -1;
  EXPECT_DOUBLE_EQ(run_alone(job, &reports, &first), 12.25);
  EXPECT_DOUBLE_EQ(first, 4.0);
  EXPECT_EQ(reports, 1);  // no noise: steady after the first report, nothing more to observe
  EXPECT_EQ(job.iterations_observed(), 7u);
  expect_report(job, 4, 4.0);
}

TEST(RunningJob, ReallocationCostIsLostProgressAtEachTeamChange) {
  Fixture f(40, 4);
  f.timing.realloc_cost_s = 0.5;
  RunningJob job(f.spec, f.analyzer, f.timing, 1);
  job.start(0, 4);
  // Team 1 → 4 at t = 3 stalls until 3.5; then 37 units at rate 4.
  EXPECT_DOUBLE_EQ(run_alone(job), 3.5 + 37.0 / 4);
}

TEST(RunningJob, WithoutAnalyzerTheJobRunsItsSwfTimeExactly) {
  Fixture f(40, 4);
  f.analyzer.enabled = false;
  RunningJob job(f.spec, f.analyzer, f.timing, 1);
  job.start(0, 4);
  EXPECT_EQ(job.team(), 4);
  EXPECT_DOUBLE_EQ(run_alone(job), 10.0);
  EXPECT_EQ(job.iterations_observed(), 0u);
}

TEST(RunningJob, ASteadyJobIsObservedAgainAfterAReallocation) {
  Fixture f(400, 8);
  RunningJob job(f.spec, f.analyzer, f.timing, 1);
  job.start(0, 8);
  // Baseline: 3 s. Warm-up + 3 at rate 8: 0.5 s. First report at t = 3.5; then steady (off).
  for (int i = 0; i < 7; ++i) job.on_boundary(job.next_event().t);
  EXPECT_EQ(job.analyzer().report_seq(), 1u);
  EXPECT_EQ(job.next_event().kind, EventKind::completion);
  // The RM halves it at t = 10.1 (mid-iteration): that iteration is dirty, and so is the next, which begins
  // within the released threads' spin (AnalyzerSettings::released_spin_s, 0.2 s) of the shrink; 3 more at 4
  // CPUs report.
  job.reallocate(10.1, 4, true);
  EXPECT_EQ(job.team(), 4);
  EXPECT_EQ(job.next_event().kind, EventKind::iteration_end);
  double t = 0;
  int boundaries = 0;
  while (job.analyzer().report_seq() < 2u && boundaries < 20) {
    t = job.next_event().t;
    job.on_boundary(t);
    ++boundaries;
  }
  // The dirty iteration began at 10.0 at 8 CPUs (0.8 of its work by 10.1) and ends at 10.15; the one from
  // 10.15 begins before 10.1 + 0.2; those from 10.40, 10.65 and 10.90 are clean: the report at 11.15.
  EXPECT_EQ(boundaries, 5);
  EXPECT_NEAR(t, 11.15, 1e-9);
  EXPECT_EQ(job.analyzer().report_seq(), 2u);
  policy::Perf p;
  ASSERT_TRUE(job.analyzer().perf(p));
  EXPECT_EQ(p.cpus, 4);
  EXPECT_NEAR(p.speedup, 4.0, 1e-9);
  // Work is conserved: done(10.1) = 3 + 0.5·8 + 6.6·8 = 59.8; to 400 at rate 4 → 10.1 + 85.05.
  EXPECT_NEAR(job.next_event().t, 10.1 + (400 - 59.8) / 4, 1e-9);
}

TEST(RunningJob, ReportEveryResamplesASteadyJob) {
  Fixture f(400, 8);
  f.timing.report_every_s = 2.0;
  RunningJob job(f.spec, f.analyzer, f.timing, 1);
  job.start(0, 8);
  int reports = 0;
  run_alone(job, &reports);
  // 3.5 s to the first report, then one about every 2 s (+ up to one 0.125-s iteration) until t = 50.125.
  EXPECT_GE(reports, 20);
  EXPECT_LE(reports, 24);
}

TEST(RunningJob, AStoppedJobMakesNoProgressAndResumes) {
  Fixture f(40, 4);
  f.analyzer.enabled = false;
  RunningJob job(f.spec, f.analyzer, f.timing, 1);
  job.start(0, 4);
  job.reallocate(2, 4, false);  // 8 units done
  EXPECT_TRUE(std::isinf(job.next_event().t));
  job.reallocate(7, 4, true);
  EXPECT_DOUBLE_EQ(job.next_event().t, 7 + 32.0 / 4);
}

TEST(RunningJob, DetectionDelayRunsNativelyFirst) {
  Fixture f(40, 4);
  f.analyzer.detect_iterations = 2;
  RunningJob job(f.spec, f.analyzer, f.timing, 1);
  job.start(0, 4);
  EXPECT_EQ(job.team(), 4);
  job.on_boundary(job.next_event().t);  // t = 0.25
  EXPECT_EQ(job.team(), 4);
  job.on_boundary(job.next_event().t);  // t = 0.5: the Analyzer starts; baseline at 1 CPU
  EXPECT_EQ(job.team(), 1);
  // The first baseline iteration follows a team change (DPD mode): discarded, so 4 baseline iterations.
  for (int i = 0; i < 4; ++i) job.on_boundary(job.next_event().t);
  EXPECT_EQ(job.team(), 4);
}

// A job that can never report at its team (no baseline, one team size: no second point for the Amdahl
// fit) used to be observed at every iteration for its whole life: a 10,000-job Lublin log took 52.8 s and
// 328 M events under Equipartition. Its observed iterations no longer grow with its length.
TEST(RunningJob, AJobThatCannotReportIsNotObservedForItsWholeLength) {
  std::uint64_t observed[2] = {0, 0};
  const double works[2] = {400, 40000};
  for (int i = 0; i < 2; ++i) {
    Fixture f(works[i], 4);
    f.analyzer.baseline = "never";
    RunningJob job(f.spec, f.analyzer, f.timing, 1);
    job.start(0, 4);
    int reports = 0;
    EXPECT_NEAR(run_alone(job, &reports), works[i] / 4, 1e-6);  // progress is closed form either way
    EXPECT_EQ(reports, 0);
    observed[i] = job.iterations_observed();
  }
  EXPECT_EQ(observed[0], observed[1]);
  EXPECT_LT(observed[1], 20U);
}

TEST(RunningJob, ObservationResumesWhenTheAllocationChanges) {
  // After going quiet at 4 CPUs, a move to 2 CPUs gives the Analyzer its second point: a report follows.
  Fixture f(4000, 4);
  f.analyzer.baseline = "never";
  RunningJob job(f.spec, f.analyzer, f.timing, 1);
  job.start(0, 4);
  double t = 0;
  while (job.next_event().kind != EventKind::completion) {
    t = job.next_event().t;
    job.on_boundary(t);
  }
  EXPECT_EQ(job.analyzer().report_seq(), 0U);
  job.reallocate(t + 0.5, 2, true);
  int reports = 0;
  run_alone(job, &reports);
  EXPECT_GE(reports, 1);
  policy::Perf p;
  ASSERT_TRUE(job.analyzer().perf(p));
  EXPECT_EQ(p.cpus, 2);
  EXPECT_NEAR(p.speedup, 2.0, 0.05);  // linear: the fit from the 4-CPU and 2-CPU points
}

// The catalog's `period`: what libcosched's periodicity detector makes of the job's loop.
TEST(RunningJob, ANonIterativeJobIsNeverMeasured) {
  Fixture f(40, 4);
  f.app.period = 0;  // one long parallel region (EP)
  RunningJob job(f.spec, f.analyzer, f.timing, 1);
  job.start(0, 4);
  EXPECT_FALSE(job.has_analyzer());
  EXPECT_EQ(job.team(), 4);  // no baseline: it runs at its allocation
  int reports = 0;
  EXPECT_DOUBLE_EQ(run_alone(job, &reports), 10.0);
  EXPECT_EQ(reports, 0);
}

TEST(RunningJob, ALoopLongerThanMaxPeriodIsNeverMeasured) {
  Fixture f(40, 4);
  f.analyzer.config.max_period = 1024;
  f.app.period = 1500;
  RunningJob job(f.spec, f.analyzer, f.timing, 1);
  job.start(0, 4);
  EXPECT_FALSE(job.has_analyzer());
  int reports = 0;
  EXPECT_DOUBLE_EQ(run_alone(job, &reports), 10.0);
  EXPECT_EQ(reports, 0);
}

TEST(RunningJob, ALongLoopIsDetectedAfterThreePeriods) {
  // 490 regions per iteration (a hydrodynamics proxy's time step), confirm_repeats 2, min_matches 6: the lag
  // is confirmed 2·490 events after its first period, so the detector locks at the end of iteration 3 and
  // the Analyzer starts there: 3 iterations at 4 CPUs (0.75 s), then the baseline at 1 CPU.
  Fixture f(40, 4);
  f.analyzer.config.max_period = 1024;
  f.app.period = 490;
  RunningJob job(f.spec, f.analyzer, f.timing, 1);
  job.start(0, 4);
  EXPECT_TRUE(job.has_analyzer());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(job.team(), 4) << "iteration " << i;
    job.on_boundary(job.next_event().t);
  }
  EXPECT_DOUBLE_EQ(job.next_event().t, 1.75);  // the first baseline iteration: 1 s at 1 CPU from t = 0.75
  EXPECT_EQ(job.team(), 1);
}

TEST(RunningJob, APeriodOfOneNeedsMinMatchesEvents) {
  // Period 1: confirmed after max(2·1, 6) = 6 matches, i.e. at the 7th region: 7 iterations natively.
  Fixture f(40, 4);
  f.app.period = 1;
  RunningJob job(f.spec, f.analyzer, f.timing, 1);
  job.start(0, 4);
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(job.team(), 4) << "iteration " << i;
    job.on_boundary(job.next_event().t);
  }
  EXPECT_EQ(job.team(), 1);
}

// --sa-baseline-cpus auto (0): a quarter of the job's request, as cosched-rm's --baseline-cpus.
TEST(RunningJob, AutoBaselineIsAQuarterOfTheRequest) {
  Fixture f(160, 16);
  f.analyzer.config.baseline_cpus = 0;
  RunningJob job(f.spec, f.analyzer, f.timing, 1);
  job.start(0, 16);
  EXPECT_EQ(job.team(), 4);
}

// --startup-noise: only the measurements of a job's first --startup-s seconds are perturbed.
TEST(RunningJob, StartUpNoiseOnlyPerturbsTheFirstSeconds) {
  auto first_report = [](double startup_noise) {
    Fixture f(400, 4);
    f.analyzer.startup_noise = startup_noise;
    f.analyzer.startup_s = 5;
    RunningJob job(f.spec, f.analyzer, f.timing, 7);
    job.start(0, 4);
    int reports = 0;
    double at = -1;
    run_alone(job, &reports, &at);
    policy::Perf p;
    EXPECT_TRUE(job.analyzer().perf(p));
    return p.speedup;
  };
  // Without noise the report is exact (S = 4 on a linear curve); with start-up noise the baseline (t < 3 s,
  // inside the first 5 s) is perturbed, so the speedup is not exactly 4.
  EXPECT_NEAR(first_report(0), 4.0, 1e-9);
  EXPECT_GT(std::fabs(first_report(0.3) - 4.0), 1e-3);
}

TEST(RunningJob, FixedTeamRunsItsBaselineByNarrowingAndPaysForItsExtraThreads) {
  // A fixed team of 4 (catalog team: fixed), 40 one-CPU seconds, 1-s iterations, oversub_cost 0.1. Its
  // baseline runs the 4 threads on 1 CPU: each iteration takes 1 x (1 + 0.1 x 3) = 1.3 s, so the 3 baseline
  // iterations end at 3.9; a warm-up and 3 measured iterations at 4 CPUs (0.25 s each) give the first report
  // at 4.9, speedup 1.3 / 0.25 = 5.2 (the baseline's switching counts in it, as in a real narrowed baseline);
  // the remaining 37 units at rate 4 end at 3.9 + 9.25 = 13.15.
  Fixture f(40, 4);
  f.app.fixed_team = true;
  f.timing.oversub_cost = 0.1;
  RunningJob job(f.spec, f.analyzer, f.timing, 1);
  job.start(0, 4);
  EXPECT_EQ(job.team(), 1);
  EXPECT_DOUBLE_EQ(job.progress().rate(), 1.0 / 1.3);
  double first = -1;
  EXPECT_DOUBLE_EQ(run_alone(job, nullptr, &first), 13.15);
  EXPECT_DOUBLE_EQ(first, 4.9);
  expect_report(job, 4, 5.2);
}

// Runs a job of 4 threads at 4 CPUs until its first report, then grants it 2 CPUs; returns the time of its
// first report at 2 CPUs (-1: none before it completed).
double first_report_after_a_shrink(bool fixed, double released_spin_s) {
  Fixture f(200, 4);
  f.app.fixed_team = fixed;
  f.analyzer.released_spin_s = released_spin_s;
  RunningJob job(f.spec, f.analyzer, f.timing, 1);
  job.start(0, 4);
  bool shrunk = false;
  std::uint64_t seq = 0;
  for (int guard = 0; guard < 100000; ++guard) {
    const auto next = job.next_event();
    if (job.resume_at() < next.t) {
      job.on_resume(job.resume_at());
      continue;
    }
    if (next.kind == EventKind::completion) return -1;
    job.on_boundary(next.t);
    if (job.analyzer().report_seq() == seq) continue;
    seq = job.analyzer().report_seq();
    policy::Perf p;
    if (!job.analyzer().perf(p)) continue;
    if (shrunk && p.cpus == 2) return next.t;
    if (!shrunk && p.cpus == 4) {
      job.reallocate(next.t, 2, true);
      shrunk = true;
    }
  }
  return -1;
}

TEST(RunningJob, AFixedTeamOnFewerCpusReleasedNoThreadSoItsSamplesWaitForNoSpinner) {
  // libruntime/measure.cpp: only a team that shrinks releases threads that spin on the CPUs left, and only
  // then do samples wait out the blocktime (released_spin_s). A malleable job granted 2 of its 4 CPUs shrinks
  // its team and waits 2 s here; a fixed team keeps its 4 threads on the 2 CPUs and waits for nothing: its
  // first report at 2 CPUs comes as early with a 2-s blocktime as with none.
  const double fixed_spin = first_report_after_a_shrink(true, 2.0);
  const double fixed_none = first_report_after_a_shrink(true, 0.0);
  ASSERT_GT(fixed_none, 0);
  EXPECT_DOUBLE_EQ(fixed_spin, fixed_none);
  const double malleable_spin = first_report_after_a_shrink(false, 2.0);
  const double malleable_none = first_report_after_a_shrink(false, 0.0);
  ASSERT_GT(malleable_none, 0);
  EXPECT_GT(malleable_spin, malleable_none + 1.0);
}

TEST(RunningJob, FixedTeamOnFewerCpusThanThreadsSharesThem) {
  // Without the Analyzer, a fixed team of 4 granted 2 CPUs runs its 4 threads there: rate S(2) / (1 + 0.1 x
  // (4/2 - 1)) = 2 / 1.1; at 8 CPUs it uses 4 of them (rate 4). A malleable job at 2 CPUs runs at rate 2.
  Fixture f(40, 4);
  f.app.fixed_team = true;
  f.timing.oversub_cost = 0.1;
  f.analyzer.enabled = false;
  RunningJob job(f.spec, f.analyzer, f.timing, 1);
  job.start(0, 2);
  EXPECT_DOUBLE_EQ(job.progress().rate(), 2.0 / 1.1);
  job.reallocate(1, 8, true);
  EXPECT_EQ(job.team(), 4);
  EXPECT_DOUBLE_EQ(job.progress().rate(), 4.0);
  Fixture g(40, 4);
  g.analyzer.enabled = false;
  RunningJob malleable(g.spec, g.analyzer, g.timing, 1);
  malleable.start(0, 2);
  EXPECT_DOUBLE_EQ(malleable.progress().rate(), 2.0);
}

// --baseline auto (Daemon::follow_sharing): the job's baseline waits while it is alone, pauses when it is
// left alone again, and resumes with the samples it had; the team changes at once, as libruntime's next
// region does. 40 one-CPU seconds in 1-s iterations, 4 CPUs, linear (0.25 s an iteration at 4, 1 s at 1):
//   0-1.1   alone at 4: 4.4 units;
//   1.1     a neighbour comes: the baseline starts at 1 CPU; the iteration in progress (0.6 units left)
//           ends at 1.7, dirty; 1.7-2.7 the first baseline sample;
//   3.0     alone again (6.3 units): the attempt pauses with its sample; 0.7 units at 4 end at 3.175;
//   4.0     the neighbour is back (10.3 units): the attempt resumes; 0.7 units at 1 end at 4.7, dirty;
//           4.7-5.7 and 5.7-6.7 the two samples it lacked (a fresh attempt would need three: 7.7);
//   6.7-7.7 a warm-up and 3 measured iterations at 4: the first report at 7.7, 17 units done;
//   then 23 units at 4: the end at 13.45.
TEST(RunningJob, ABaselinePausesWhileTheJobIsAloneAndResumesWithItsSamples) {
  Fixture f(40, 4);
  f.analyzer.baseline = "shared";  // "auto" under a policy that uses speedups
  RunningJob job(f.spec, f.analyzer, f.timing, 1);
  job.start(0, 4);
  EXPECT_EQ(job.team(), 4);
  double first_report = -1;
  std::uint64_t seq = 0;
  auto until = [&](double t) {
    for (int guard = 0; guard < 1000; ++guard) {
      const auto next = job.next_event();
      if (next.t > t || next.kind == EventKind::completion) return;
      job.on_boundary(next.t);
      if (job.analyzer().report_seq() != seq) {
        seq = job.analyzer().report_seq();
        if (first_report < 0) first_report = next.t;
      }
    }
  };
  until(1.1);
  EXPECT_TRUE(job.set_baseline_waits(1.1, false));
  EXPECT_EQ(job.team(), 1);
  until(3.0);
  EXPECT_TRUE(job.set_baseline_waits(3.0, true));
  EXPECT_EQ(job.team(), 4);
  until(4.0);
  EXPECT_DOUBLE_EQ(job.next_event().t, 4.175);
  EXPECT_TRUE(job.set_baseline_waits(4.0, false));
  EXPECT_EQ(job.team(), 1);
  EXPECT_DOUBLE_EQ(job.next_event().t, 4.7);
  until(7.7);
  EXPECT_DOUBLE_EQ(first_report, 7.7);
  expect_report(job, 4, 4.0);
  EXPECT_DOUBLE_EQ(run_alone(job), 13.45);
}
