// Every transition of PDPA's state diagram (Corbalan et al., TPDS 2005, §4.2), one job at a time.
#include <gtest/gtest.h>

#include "policies/space/pdpa_state.hpp"

using namespace cosched::policy;

namespace {

// The paper's thresholds (§5): target_eff 0.7, high_eff 0.9; step 4 is our default on 60 CPUs (the paper
// gives step no value).
PdpaParams paper() {
  PdpaParams p;
  p.step = 4;
  return p;
}

Perf report(int cpus, double speedup, double iteration_s = 0, std::uint64_t seq = 1) {
  Perf perf;
  perf.valid = true;
  perf.cpus = cpus;
  perf.speedup = speedup;
  perf.efficiency = speedup / cpus;
  perf.iteration_s = iteration_s;
  perf.seq = seq;
  return perf;
}

PdpaJobMemory in_inc(int cpus_before, double speedup_before, int added, double iteration_before = 0) {
  PdpaJobMemory m;
  m.state = PdpaState::inc;
  m.previous = PdpaPoint{cpus_before, speedup_before, speedup_before / cpus_before, iteration_before};
  m.added = added;
  return m;
}

PdpaJobMemory in_state(PdpaState s, double stable_efficiency = -1) {
  PdpaJobMemory m;
  m.state = s;
  m.stable_efficiency = stable_efficiency;
  return m;
}

}  // namespace

TEST(PdpaStep, DefaultScalesWithTheMachine) {
  EXPECT_EQ(default_step(1), 1);
  EXPECT_EQ(default_step(2), 1);
  EXPECT_EQ(default_step(16), 1);
  EXPECT_EQ(default_step(60), 4);  // the paper's machine and step
  EXPECT_EQ(default_step(64), 4);
  EXPECT_EQ(default_step(1024), 68);
}

// §4.2.1 NO_REF ------------------------------------------------------------------------------------------

TEST(PdpaNoRef, HighEfficiencyGoesInc) {
  auto st = pdpa_on_report(PdpaJobMemory{}, 8, 30, report(8, 7.6), paper());  // E = 0.95
  EXPECT_EQ(st.next.state, PdpaState::inc);
  EXPECT_EQ(st.cpus, 8);
  EXPECT_EQ(st.grow, 4);  // the caller grants min(step, free)
  EXPECT_EQ(st.next.previous.cpus, 8);
  EXPECT_EQ(st.next.last_seq, 1u);
  EXPECT_NE(st.reason.find("INC: efficiency 0.95 > high_eff 0.90 at 8 CPUs"), std::string::npos) << st.reason;
}

TEST(PdpaNoRef, LowEfficiencyGoesDecByStep) {
  auto st = pdpa_on_report(PdpaJobMemory{}, 8, 30, report(8, 4.0), paper());  // E = 0.5
  EXPECT_EQ(st.next.state, PdpaState::dec);
  EXPECT_EQ(st.cpus, 4);
  EXPECT_EQ(st.grow, 0);
  EXPECT_EQ(st.reason, "DEC: efficiency 0.50 < target_eff 0.70 at 8 CPUs → 4 CPUs");
}

TEST(PdpaNoRef, DecNeverGoesBelowOneCpu) {
  auto st = pdpa_on_report(PdpaJobMemory{}, 2, 30, report(2, 0.96), paper());  // E = 0.48
  EXPECT_EQ(st.next.state, PdpaState::dec);
  EXPECT_EQ(st.cpus, 1);
  EXPECT_EQ(st.reason, "DEC: efficiency 0.48 < target_eff 0.70 at 2 CPUs → 1 CPU");

  auto at_one = pdpa_on_report(PdpaJobMemory{}, 1, 30, report(1, 0.5), paper());
  EXPECT_EQ(at_one.next.state, PdpaState::dec);
  EXPECT_EQ(at_one.cpus, 1);
  EXPECT_NE(at_one.reason.find("already at the minimum"), std::string::npos);
}

TEST(PdpaNoRef, AcceptableEfficiencyGoesStable) {
  auto st = pdpa_on_report(PdpaJobMemory{}, 8, 30, report(8, 6.4), paper());  // E = 0.8
  EXPECT_EQ(st.next.state, PdpaState::stable);
  EXPECT_EQ(st.cpus, 8);
  EXPECT_DOUBLE_EQ(st.next.stable_efficiency, 0.8);
  // The thresholds themselves are "between" (greater-than / lower-than in §4.2.1 are strict).
  EXPECT_EQ(pdpa_on_report(PdpaJobMemory{}, 10, 30, report(10, 9.0), paper()).next.state, PdpaState::stable);
  EXPECT_EQ(pdpa_on_report(PdpaJobMemory{}, 10, 30, report(10, 7.0), paper()).next.state, PdpaState::stable);
}

TEST(PdpaNoRef, HighEfficiencyAtRequestIsStable) {
  auto st = pdpa_on_report(PdpaJobMemory{}, 30, 30, report(30, 28.5), paper());
  EXPECT_EQ(st.next.state, PdpaState::stable);
  EXPECT_EQ(st.cpus, 30);
  EXPECT_EQ(st.grow, 0);
}

// §4.2.2 INC ---------------------------------------------------------------------------------------------

TEST(PdpaInc, AllThreeConditionsKeepGrowing) {
  // 8 → 12 CPUs, iteration 1.0 s → 0.6 s: relative speedup 1.67 > (12/8) × 0.9 = 1.35.
  auto st = pdpa_on_report(in_inc(8, 8.0, 4, 1.0), 12, 30, report(12, 13.3, 0.6), paper());
  EXPECT_EQ(st.next.state, PdpaState::inc);
  EXPECT_EQ(st.cpus, 12);
  EXPECT_EQ(st.grow, 4);
  EXPECT_EQ(st.next.previous.cpus, 12);
}

TEST(PdpaInc, SuperlinearThenFlatteningStopsOnRelativeSpeedup) {
  // swim-like (§5.4): superlinear up to 12 CPUs (S = 14), then 16 CPUs give S = 15.5. Efficiency 0.97 is still
  // above high_eff and the speedup grew, but 15.5 / 14 = 1.11 ≤ (16/12) × 0.9 = 1.2: the last CPUs barely
  // helped. STABLE, and since efficiency ≥ target_eff the CPUs are kept.
  auto st = pdpa_on_report(in_inc(12, 14.0, 4), 16, 30, report(16, 15.5), paper());
  EXPECT_EQ(st.next.state, PdpaState::stable);
  EXPECT_EQ(st.cpus, 16);
  EXPECT_EQ(st.grow, 0);
  EXPECT_NE(st.reason.find("relative speedup 1.11 ≤ 1.20"), std::string::npos) << st.reason;
}

TEST(PdpaInc, RelativeSpeedupPrefersExecutionTimes) {
  // Same speedups as above, but the measured iteration times say the increment paid off: 1.3 > 1.2.
  auto st = pdpa_on_report(in_inc(12, 14.0, 4, 1.3), 16, 30, report(16, 15.5, 1.0), paper());
  EXPECT_EQ(st.next.state, PdpaState::inc);
  EXPECT_EQ(st.grow, 4);
}

TEST(PdpaInc, SpeedupThatDidNotGrowStops) {
  // Superlinear at 8 (S = 11), 10.9 at 12: efficiency 0.91 > 0.9 but no gain.
  auto st = pdpa_on_report(in_inc(8, 11.0, 4), 12, 30, report(12, 10.9), paper());
  EXPECT_EQ(st.next.state, PdpaState::stable);
  EXPECT_EQ(st.cpus, 12);
  EXPECT_NE(st.reason.find("speedup did not grow"), std::string::npos) << st.reason;
}

TEST(PdpaInc, BelowTargetGivesTheLastStepBack) {
  // 8 → 12 CPUs, speedup 7.6 → 7.8: efficiency 0.65 < target_eff.
  auto st = pdpa_on_report(in_inc(8, 7.6, 4), 12, 30, report(12, 7.8), paper());
  EXPECT_EQ(st.next.state, PdpaState::stable);
  EXPECT_EQ(st.cpus, 8);
  EXPECT_DOUBLE_EQ(st.next.stable_efficiency, -1);  // re-anchored by the next report, taken at 8 CPUs
  EXPECT_NE(st.reason.find("gives back the last 4 CPUs → 8 CPUs"), std::string::npos) << st.reason;
}

TEST(PdpaInc, GivesBackOnlyWhatItReceived) {
  // Only 2 CPUs were free at the last INC transition: only those 2 go back.
  auto st = pdpa_on_report(in_inc(8, 7.6, 2), 10, 30, report(10, 6.5), paper());
  EXPECT_EQ(st.next.state, PdpaState::stable);
  EXPECT_EQ(st.cpus, 8);
}

TEST(PdpaInc, BetweenThresholdsKeepsTheStep) {
  // efficiency 0.8: fails condition (1) but ≥ target_eff, so the 4 CPUs stay.
  auto st = pdpa_on_report(in_inc(8, 7.6, 4), 12, 30, report(12, 9.6), paper());
  EXPECT_EQ(st.next.state, PdpaState::stable);
  EXPECT_EQ(st.cpus, 12);
}

TEST(PdpaInc, ReachingTheRequestIsStable) {
  auto st = pdpa_on_report(in_inc(26, 26.0, 4, 1.0), 30, 30, report(30, 29.5, 0.88), paper());
  EXPECT_EQ(st.next.state, PdpaState::stable);
  EXPECT_EQ(st.cpus, 30);
  EXPECT_EQ(st.grow, 0);
}

TEST(PdpaInc, WaitingForCpusIsJudgedByEfficiencyAlone) {
  // INC got no CPU (none free): there is no increment to judge, so the NO_REF rule applies.
  auto st = pdpa_on_report(in_inc(8, 7.6, 0), 8, 30, report(8, 4.0), paper());
  EXPECT_EQ(st.next.state, PdpaState::dec);
  EXPECT_EQ(st.cpus, 4);
  auto again = pdpa_on_report(in_inc(8, 7.6, 0), 8, 30, report(8, 7.7), paper());
  EXPECT_EQ(again.next.state, PdpaState::inc);
  EXPECT_EQ(again.grow, 4);
}

// §4.2.3 DEC ---------------------------------------------------------------------------------------------

TEST(PdpaDec, StillBadShrinksAgainToAtLeastOne) {
  auto st = pdpa_on_report(in_state(PdpaState::dec), 6, 30, report(6, 3.0), paper());
  EXPECT_EQ(st.next.state, PdpaState::dec);
  EXPECT_EQ(st.cpus, 2);
  auto low = pdpa_on_report(in_state(PdpaState::dec), 3, 30, report(3, 1.2), paper());
  EXPECT_EQ(low.cpus, 1);  // max(3 - 4, 1)
}

TEST(PdpaDec, ReachingTargetIsStableAndKeeps) {
  auto st = pdpa_on_report(in_state(PdpaState::dec), 4, 30, report(4, 3.0), paper());  // E = 0.75
  EXPECT_EQ(st.next.state, PdpaState::stable);
  EXPECT_EQ(st.cpus, 4);
  EXPECT_DOUBLE_EQ(st.next.stable_efficiency, 0.75);
}

// §4.2.4 STABLE ------------------------------------------------------------------------------------------

TEST(PdpaStable, KeepsTheAllocation) {
  auto st = pdpa_on_report(in_state(PdpaState::stable, 0.8), 12, 30, report(12, 9.9), paper());  // E 0.825
  EXPECT_EQ(st.next.state, PdpaState::stable);
  EXPECT_EQ(st.cpus, 12);
  EXPECT_TRUE(st.reason.empty());
}

TEST(PdpaStable, FirstReportAfterGiveBackSetsTheReference) {
  // After INC→STABLE gave CPUs back, the efficiency at the smaller allocation is naturally higher; it must
  // not send the job straight back to INC.
  auto st = pdpa_on_report(in_state(PdpaState::stable, -1), 8, 30, report(8, 7.6), paper());  // E 0.95
  EXPECT_EQ(st.next.state, PdpaState::stable);
  EXPECT_DOUBLE_EQ(st.next.stable_efficiency, 0.95);
}

TEST(PdpaStable, FlatSuperlinearJobStaysStable) {
  // Stable at 0.97 after the relative-speedup stop: still > high_eff, but unchanged → no new INC.
  auto st = pdpa_on_report(in_state(PdpaState::stable, 0.97), 16, 30, report(16, 15.6), paper());
  EXPECT_EQ(st.next.state, PdpaState::stable);
  EXPECT_EQ(st.cpus, 16);
}

TEST(PdpaStable, RealPerformanceChangeLeavesStable) {
  auto up = pdpa_on_report(in_state(PdpaState::stable, 0.8), 12, 30, report(12, 11.4), paper());  // 0.95
  EXPECT_EQ(up.next.state, PdpaState::inc);
  EXPECT_EQ(up.grow, 4);
  EXPECT_EQ(up.next.stable_exits, 1);
  auto down = pdpa_on_report(in_state(PdpaState::stable, 0.8), 12, 30, report(12, 7.2), paper());  // 0.6
  EXPECT_EQ(down.next.state, PdpaState::dec);
  EXPECT_EQ(down.cpus, 8);
  EXPECT_EQ(down.next.stable_exits, 1);
}

TEST(PdpaStable, SmallDriftBelowTargetStaysInsideTheBand) {
  // Stable at 0.72, now 0.68: below target_eff but only 0.04 away → noise, no DEC.
  auto st = pdpa_on_report(in_state(PdpaState::stable, 0.72), 10, 30, report(10, 6.8), paper());
  EXPECT_EQ(st.next.state, PdpaState::stable);
  EXPECT_EQ(st.cpus, 10);
}

TEST(PdpaStable, PingPongIsLimited) {
  PdpaJobMemory m = in_state(PdpaState::stable, 0.8);
  m.stable_exits = 3;  // max_stable_exits reached
  auto st = pdpa_on_report(m, 12, 30, report(12, 7.2), paper());
  EXPECT_EQ(st.next.state, PdpaState::stable);
  EXPECT_EQ(st.cpus, 12);
}

// Stale reports and parameter changes --------------------------------------------------------------------

TEST(PdpaReport, StaleReportIsConsumedButIgnored) {
  // Measured with 8 CPUs while the job already holds 12 (our last decision): it describes the past.
  auto st = pdpa_on_report(in_inc(8, 7.6, 4), 12, 30, report(8, 4.0, 0, 7), paper());
  EXPECT_EQ(st.next.state, PdpaState::inc);
  EXPECT_EQ(st.cpus, 12);
  EXPECT_EQ(st.next.last_seq, 7u);
  EXPECT_TRUE(st.reason.empty());
}

TEST(PdpaParamChange, MovesStableJobsAcrossNewThresholds) {
  const Perf at_12 = report(12, 10.2);  // E 0.85
  PdpaParams lower_high = paper();
  lower_high.high_eff = 0.8;
  auto inc = pdpa_on_param_change(in_state(PdpaState::stable, 0.85), 12, 30, at_12, lower_high);
  EXPECT_EQ(inc.next.state, PdpaState::inc);
  EXPECT_EQ(inc.grow, 4);
  EXPECT_EQ(inc.next.stable_exits, 0);  // operator changes are not rationed

  PdpaParams higher_target = paper();
  higher_target.high_eff = 0.95;
  higher_target.target_eff = 0.9;
  auto dec = pdpa_on_param_change(in_state(PdpaState::stable, 0.85), 12, 30, at_12, higher_target);
  EXPECT_EQ(dec.next.state, PdpaState::dec);
  EXPECT_EQ(dec.cpus, 8);

  auto same = pdpa_on_param_change(in_state(PdpaState::stable, 0.85), 12, 30, at_12, paper());
  EXPECT_EQ(same.next.state, PdpaState::stable);
  // Jobs in other states meet the new values at their next report.
  auto dec_job = pdpa_on_param_change(in_state(PdpaState::dec), 12, 30, at_12, lower_high);
  EXPECT_EQ(dec_job.next.state, PdpaState::dec);
  EXPECT_EQ(dec_job.cpus, 12);
}

// History: a job at one CPU always measures E = 1 (issue: measurement integrity) --------------------------

TEST(PdpaHistory, ASerialJobDoesNotClaimAgainWhatItWasSeenToWaste) {
  PdpaParams p;  // target_eff 0.7, high_eff 0.9, step 1
  // NO_REF at 1 CPU, E = 1.0 > 0.9: it claims a second CPU once.
  auto st = pdpa_on_report(PdpaJobMemory{}, 1, 2, report(1, 1.0, 0.1, 1), p);
  ASSERT_EQ(st.next.state, PdpaState::inc);
  EXPECT_EQ(st.grow, 1);
  // At 2 CPUs it reaches E = 0.5 (< target_eff 0.7): the step is given back.
  st.next.added = 1;
  st = pdpa_on_report(st.next, 2, 2, report(2, 1.0, 0.1, 2), p);
  EXPECT_EQ(st.cpus, 1);
  // Back at 1 CPU and measured afresh (NO_REF again), E = 1.0 > high_eff, but its history holds
  // E(2) = 0.5 < 0.7: no new claim.
  PdpaJobMemory again = st.next;
  again.state = PdpaState::no_ref;
  st = pdpa_on_report(again, 1, 2, report(1, 1.0, 0.1, 3), p);
  EXPECT_EQ(st.next.state, PdpaState::stable);
  EXPECT_EQ(st.grow, 0);
  EXPECT_NE(st.reason.find("its history has 0.50 < target_eff 0.70 at 2 CPUs"), std::string::npos) << st.reason;
  // Its behaviour changes (iteration time at 1 CPU 0.1 s → 0.3 s, more than 2 × stable_band): the history is
  // forgotten and it may claim again.
  again = st.next;
  again.state = PdpaState::no_ref;
  st = pdpa_on_report(again, 1, 2, report(1, 1.0, 0.3, 4), p);
  EXPECT_EQ(st.next.state, PdpaState::inc);
  EXPECT_EQ(st.grow, 1);
}

TEST(PdpaHistory, RemembersSeveralAllocations) {
  PdpaParams p;
  PdpaJobMemory m;
  m.state = PdpaState::dec;
  for (int cpus : {8, 7, 6, 5, 4}) {
    auto st = pdpa_on_report(m, cpus, 8, report(cpus, cpus * 0.5, 0.1, static_cast<std::uint64_t>(cpus)), p);
    m = st.next;
  }
  // The four latest allocations, oldest first: 8 was dropped.
  EXPECT_EQ(m.seen[0].cpus, 7);
  EXPECT_EQ(m.seen[3].cpus, 4);
}
