// The waiting-time efficiency in the simulator (sim/waiting_model.hpp): what a job's sampler publishes and when,
// how contention leaves it an upper bound, and how the RM side feeds it to policies as the daemon does
// (rm::choose_estimate, Daemon::follow_check). Every expected value is worked out by hand in the comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "sim/running_job.hpp"
#include "sim_test_util.hpp"

using namespace cosched;
using namespace cosched::sim;
using namespace cosched::sim::testing;

namespace {

// A policy from the registry, recording what each decide(report) shows it of the reporting job.
class Probe : public policy::Policy {
 public:
  struct Seen {
    double t = 0;
    policy::JobId id = 0;
    policy::Perf perf;
  };
  std::vector<Seen> seen;

  Probe(const std::string& name, int cpus, const policy::ParamList& params = {}) {
    auto p = policy::make_policy(name, policy::Machine{cpus, cpus, 1, 1}, params);
    if (!p.ok()) throw std::runtime_error(p.error().message);
    inner_ = std::move(*p);
  }
  std::string_view name() const override { return inner_->name(); }
  std::unique_ptr<policy::Policy> clone() const override { return std::unique_ptr<Probe>(new Probe(*this)); }
  policy::Decision decide(const policy::Snapshot& s) override {
    if (s.event == policy::Event::report) {
      for (const auto& j : s.jobs) {
        if (j.id == s.subject) seen.push_back({s.now, j.id, j.perf});
      }
    }
    return inner_->decide(s);
  }
  void forget(policy::JobId id) override { inner_->forget(id); }
  bool uses_speedup() const override { return inner_->uses_speedup(); }
  bool speedup_check_matters(const policy::JobView& j) const override { return inner_->speedup_check_matters(j); }

 private:
  Probe(const Probe& o) : policy::Policy(o), seen(o.seen), inner_(o.inner_->clone()) {}
  std::unique_ptr<policy::Policy> inner_;
};

struct OneJob {
  AppModel app;
  JobSpec spec;
  AnalyzerSettings analyzer;
  JobTiming timing;
  OneJob(const char* curve, double iteration_s, int request, double work)
      : app{"a", "a", *parse_speedup_spec(curve), iteration_s, "test"} {
    spec.number = 1;
    spec.request = request;
    spec.work = work;
    spec.app = &app;
    analyzer.baseline = "never";  // the job runs at its allocation throughout
  }
};

}  // namespace

// (a) Amdahl, serial fraction 0.1, alone on 4 CPUs: S(4) = 1 / (0.1 + 0.9/4) = 1/0.325, E = S(4)/4 = 0.76923;
// one iteration (1 s on one CPU) takes 0.325 s there, so a warm-up and 3 intervals end at 4 × 0.325 = 1.3 s.
TEST(WaitingModel, AJobAloneGetsItsCurveEfficiencyAfterFourIntervals) {
  OneJob j("amdahl:0.1", 1.0, 4, 100);
  RunningJob job(j.spec, j.analyzer, j.timing, 7);
  job.start(0, 4);
  EXPECT_NEAR(job.waiting_due(), 1.3, 1e-12);
  EXPECT_FALSE(job.waiting().valid);
  job.on_waiting(1.3);
  const rm::WaitingEstimate& w = job.waiting();
  EXPECT_TRUE(w.valid);
  EXPECT_EQ(w.cpus, 4);
  EXPECT_NEAR(w.efficiency, 1.0 / (4 * 0.325), 1e-12);
  EXPECT_NEAR(w.efficiency, 0.769231, 1e-6);
  EXPECT_EQ(w.intervals, 3);
  EXPECT_EQ(w.std_error, 0.0);  // no noise
  EXPECT_EQ(job.waiting_due(), std::numeric_limits<double>::infinity());  // nothing more until a change
}

// Iterations shorter than 40 ms: each interval is 40 ms (EfficiencyConfig::min_interval_s), 4 × 0.04 = 0.16 s.
TEST(WaitingModel, ShortIterationsWaitForFortyMillisecondIntervals) {
  OneJob j("amdahl:0.1", 0.01, 4, 100);  // 0.01 × 0.325 = 3.25 ms per iteration at 4 CPUs
  RunningJob job(j.spec, j.analyzer, j.timing, 7);
  job.start(0, 4);
  EXPECT_NEAR(job.waiting_due(), 0.16, 1e-12);
}

// A job stopped at 0.5 s, resumed at 1.0 s, still needs 1.3 − 0.5 = 0.8 s of running: its estimate comes at 1.8.
TEST(WaitingModel, AStoppedJobDoesNotAdvanceItsWarmUp) {
  OneJob j("amdahl:0.1", 1.0, 4, 100);
  RunningJob job(j.spec, j.analyzer, j.timing, 7);
  job.start(0, 4);
  job.reallocate(0.5, 4, false);
  EXPECT_EQ(job.waiting_due(), std::numeric_limits<double>::infinity());
  job.reallocate(1.0, 4, true);
  EXPECT_NEAR(job.waiting_due(), 1.8, 1e-12);
}

// At 2 CPUs S(2) = 1 / (0.1 + 0.45) = 1/0.55: E = 0.90909, an iteration 0.55 s, a warm-up of 2.2 s. Back at 4 CPUs
// the estimate kept there (the meter keeps the previous window) is published again with its values, after one
// interval (0.325 s) there.
TEST(WaitingModel, ANewCpuCountWarmsUpAndTheOneBeforeIsPublishedAgainAtOnce) {
  OneJob j("amdahl:0.1", 1.0, 4, 100);
  RunningJob job(j.spec, j.analyzer, j.timing, 7);
  job.start(0, 4);
  job.on_waiting(1.3);
  job.reallocate(2.0, 2, true);
  EXPECT_NEAR(job.waiting_due(), 2.0 + 2.2, 1e-12);
  job.reallocate(3.0, 4, true);  // before the estimate at 2 came
  EXPECT_NEAR(job.waiting_due(), 3.325, 1e-12);
  const std::uint64_t seq = job.waiting().seq;
  job.on_waiting(3.325);
  EXPECT_EQ(job.waiting().seq, seq + 1);
  EXPECT_EQ(job.waiting().cpus, 4);
  EXPECT_NEAR(job.waiting().efficiency, 1.0 / 1.3, 1e-12);
  // At 2 CPUs again: its window there was left before its estimate, so it warms up afresh from 4.0 s.
  job.reallocate(4.0, 2, true);
  EXPECT_NEAR(job.waiting_due(), 4.0 + 2.2, 1e-12);
  job.on_waiting(6.2);
  EXPECT_NEAR(job.waiting().efficiency, 1.0 / (2 * 0.55), 1e-12);
}

// With --noise X the estimate is the mean of 3 intervals: std_error = X / sqrt(3) × the published efficiency,
// and the measured path draws from its own stream, so its reports are those of a run without the sampler.
TEST(WaitingModel, NoiseGivesTheMeansStandardErrorAndLeavesTheMeasuredPathAlone) {
  OneJob j("amdahl:0.1", 1.0, 4, 100);
  j.analyzer.noise = 0.1;
  j.analyzer.baseline = "always";
  RunningJob with(j.spec, j.analyzer, j.timing, 7);
  AnalyzerSettings off = j.analyzer;
  off.waiting_time = false;
  RunningJob without(j.spec, off, j.timing, 7);
  with.start(0, 4);
  without.start(0, 4);
  for (int i = 0; i < 40; ++i) {
    const double t = with.next_event().t;
    ASSERT_EQ(t, without.next_event().t);
    if (with.waiting_due() <= t) with.on_waiting(with.waiting_due());
    with.on_boundary(t);
    without.on_boundary(t);
    ASSERT_EQ(with.analyzer().report_seq(), without.analyzer().report_seq());
  }
  policy::Perf a;
  policy::Perf b;
  ASSERT_TRUE(with.analyzer().perf(a));
  ASSERT_TRUE(without.analyzer().perf(b));
  EXPECT_EQ(a.speedup, b.speedup);
  const rm::WaitingEstimate& w = with.waiting();
  ASSERT_TRUE(w.valid);
  EXPECT_NEAR(w.std_error, 0.1 / std::sqrt(3.0) * w.efficiency, 1e-15);
  EXPECT_FALSE(without.waiting().valid);
}

// The policy sees it as the daemon gives it: a Perf of kind waiting_time, speedup E·P, at the first quantum tick
// after it. With 1.1-s iterations (0.3575 s at 4 CPUs) the estimate comes at 4 × 0.3575 = 1.43 s, read at 1.5 s.
// Under Equipartition the Analyzer, at one team size only, reports nothing.
TEST(WaitingModel, ThePolicyGetsItAtTheNextTick) {
  AppModel amdahl{"a", "a", *parse_speedup_spec("amdahl:0.1"), 1.1, "test"};
  SimConfig c;
  c.cpus = 4;
  Probe probe("equip", 4);
  auto out = simulate(c, {job(1, 0, 4, 50, amdahl)}, probe);
  ASSERT_EQ(probe.seen.size(), 1u);
  EXPECT_NEAR(probe.seen[0].t, 1.5, 1e-9);
  const policy::Perf& p = probe.seen[0].perf;
  EXPECT_EQ(p.kind, policy::EstimateKind::waiting_time);
  EXPECT_EQ(p.cpus, 4);
  EXPECT_NEAR(p.efficiency, 1.0 / 1.3, 1e-12);
  EXPECT_NEAR(p.speedup, 4.0 / 1.3, 1e-12);
  EXPECT_EQ(p.iteration_s, 0.0);
  EXPECT_EQ(out.stats.waiting_estimates, 1u);
  // --no-waiting-time: as a job run with COSCHED_SAMPLE_MS=0, nothing to report.
  c.analyzer.waiting_time = false;
  Probe quiet("equip", 4);
  out = simulate(c, {job(1, 0, 4, 50, amdahl)}, quiet);
  EXPECT_TRUE(quiet.seen.empty());
  EXPECT_EQ(out.stats.waiting_estimates, 0u);
}

// (b) A memory-bound job (one thread alone moves half of b: m = 0.5) on 4 CPUs of the paper's machine (B = 29.5,
// b = 23.6, k = 2.5 in transactions/µs): its 1-CPU baseline demands 11.8 < B (s = 1), its 4 threads 47.2, so
// s = 1 + 2.5 × 0.5 × (47.2/29.5 − 1) = 1.75. Linear curve, 0.12-s iterations: baseline 0-0.36 s at 0.12 s each,
// then 0.12 × 1.75 / 4 = 0.0525 s at 4 CPUs. Measured speedup 0.12 / 0.0525 = 2.2857 (E = 0.5714), after a
// warm-up and 5 samples (--sa-min-samples 5): 0.36 + 6 × 0.0525 = 0.675, read at the 0.7 tick. Waiting-time
// efficiency: the contention-free S(4)/4 = 1, after 0.36 + 4 × 0.0525 = 0.57, read at the 0.6 tick. Its threads
// do not wait more on a slow bus: the upper-bound error, which the measured speedup, chosen, corrects.
TEST(WaitingModel, AMemoryBoundJobKeepsItsContentionFreeEfficiencyWhileItsMeasuredSpeedupDrops) {
  constexpr double kTr = 64e6;
  AppModel streamer{"s", "s", *parse_speedup_spec("linear"), 0.12, "test"};
  streamer.bandwidth = 11.8 * kTr;
  SimConfig c;
  c.cpus = 4;
  c.memory.machine_bytes_per_s = 29.5 * kTr;
  c.memory.thread_bytes_per_s = 23.6 * kTr;
  c.memory.contention = 2.5;
  c.analyzer.baseline = "always";
  c.analyzer.config.min_report_samples = 5;
  Probe probe("equip", 4);
  simulate(c, {job(1, 0, 4, 20, streamer)}, probe);
  ASSERT_GE(probe.seen.size(), 2u);
  EXPECT_NEAR(probe.seen[0].t, 0.6, 1e-9);
  EXPECT_EQ(probe.seen[0].perf.kind, policy::EstimateKind::waiting_time);
  EXPECT_EQ(probe.seen[0].perf.cpus, 4);
  EXPECT_NEAR(probe.seen[0].perf.efficiency, 1.0, 1e-12);
  // The measured report below it (0.7 tick), exact without noise (spread 0, within rm::kPreciseSpread), is work
  // inflation at once: from then on the measured one is used.
  EXPECT_NEAR(probe.seen[1].t, 0.7, 1e-9);
  EXPECT_EQ(probe.seen[1].perf.kind, policy::EstimateKind::measured_speedup);
  EXPECT_EQ(probe.seen[1].perf.cpus, 4);
  EXPECT_NEAR(probe.seen[1].perf.speedup, 4 / 1.75, 1e-9);
  EXPECT_NEAR(probe.seen[1].perf.efficiency, 1 / 1.75, 1e-9);

  // Without contention both read 1 at 4 CPUs (0.03-s iterations there, shorter than an interval's 40 ms): the
  // waiting time at 0.36 + 4 × 0.04 = 0.52, the measured speedup at 0.36 + 6 × 0.03 = 0.54, both read at the
  // 0.6 tick. They agree, and without noise both are exact: the measured one (rm::choose_estimate's tie).
  c.memory = {};
  Probe plain("equip", 4);
  simulate(c, {job(1, 0, 4, 20, streamer)}, plain);
  ASSERT_GE(plain.seen.size(), 1u);
  EXPECT_NEAR(plain.seen[0].t, 0.6, 1e-9);
  EXPECT_EQ(plain.seen[0].perf.kind, policy::EstimateKind::measured_speedup);
  EXPECT_NEAR(plain.seen[0].perf.speedup, 4.0, 1e-9);
  EXPECT_NEAR(plain.seen[0].perf.efficiency, 1.0, 1e-9);
}

// (c) Daemon::follow_check under PDPA (Pdpa::speedup_check_matters). A flat job (S = 1 everywhere, 0.26-s
// iterations, 5 s of work) alone on 4 of 8 CPUs: under --baseline auto its baseline waits while it is alone; its
// waiting-time efficiency 1/4 = 0.25 < target_eff 0.7 comes at 4 × 0.26 = 1.04 s (read at 1.1 s), and PDPA
// decreases it whatever a check would find, so its baseline is turned off: when a second job arrives at 1.5 s
// it runs none (no iteration at a baseline team below its allocation). The second job has no loop (period 0):
// it never measures a baseline itself.
TEST(WaitingModel, UnderPdpaAJobBelowTargetRunsNoBaselineUnderAutoButDoesUnderAlways) {
  AppModel flat{"flat", "flat", *parse_speedup_spec("amdahl:1"), 0.26, "test"};
  AppModel loopless{"one", "one", *parse_speedup_spec("amdahl:1"), 1.0, "test"};
  loopless.period = 0;
  const std::vector<JobSpec> jobs = {job(1, 0, 4, 5, flat), job(2, 1.5, 4, 10, loopless)};
  SimConfig c;
  c.cpus = 8;
  Probe gated("pdpa", 8);
  auto out = simulate(c, jobs, gated);
  ASSERT_FALSE(gated.seen.empty());
  EXPECT_NEAR(gated.seen[0].t, 1.1, 1e-9);
  EXPECT_EQ(gated.seen[0].id, 1);
  EXPECT_EQ(gated.seen[0].perf.kind, policy::EstimateKind::waiting_time);
  EXPECT_NEAR(gated.seen[0].perf.efficiency, 0.25, 1e-12);
  EXPECT_EQ(out.stats.baseline_iterations, 0u);
  // PDPA's DEC to 3 CPUs gives the freed one back at once (lent: nobody else can use it), so the job holds 4
  // all along and its Analyzer never runs at a second team size.
  ASSERT_EQ(out.jobs[0].allocation.size(), 1u);
  EXPECT_EQ(out.jobs[0].allocation[0].cpus, 4);

  // The same jobs without the sampler: the neighbour's arrival starts its baseline (1 CPU of 4, from 1.5 s).
  SimConfig blind = c;
  blind.analyzer.waiting_time = false;
  Probe unseen("pdpa", 8);
  out = simulate(blind, jobs, unseen);
  EXPECT_GT(out.stats.baseline_iterations, 0u);

  // --baseline always: PDPA §3.1's baseline as the job starts, whatever the waiting time says.
  c.analyzer.baseline = "always";
  Probe paper("pdpa", 8);
  out = simulate(c, jobs, paper);
  EXPECT_GE(out.stats.baseline_iterations, 3u);  // --sa-baseline-iterations 3 at 1 CPU
}
