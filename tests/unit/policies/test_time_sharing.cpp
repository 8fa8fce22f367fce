// The time-sharing policies: gang (Ousterhout rows), sw-dss and ssw-dss (Polychronopoulos et al. §3.2.1,
// §3.2.2, Inequality 5) and vtq-dss (§3.2.3, eqs. 7–9 as read in vtq_dss.hpp). Expected values are worked
// out by hand from the equations in the comments.
#include <gtest/gtest.h>

#include <map>

#include "policies/time_sharing/gang.hpp"
#include "policies/registry.hpp"
#include "policies/time_sharing/sw_dss.hpp"
#include "policies/time_sharing/vtq_dss.hpp"
#include "policies/time_sharing/window.hpp"
#include "policy_test_util.hpp"

using namespace cosched::policy;
using cosched::policy::testing::counts;
using cosched::policy::testing::machine_with;
using cosched::policy::testing::running;
using cosched::policy::testing::step;

TEST(GangRows, FirstFitInAdmissionOrder) {
  EXPECT_EQ(gang_rows({2, 2, 2, 2}, 2), (std::vector<int>{0, 1, 2, 3}));
  // P = 3: 2 → row 0 (1 left), 1 → row 0 (full), 1 → row 1 (2 left), 2 → row 1 (full), 1 → row 2.
  EXPECT_EQ(gang_rows({2, 1, 1, 2, 1}, 3), (std::vector<int>{0, 0, 1, 1, 2}));
}

TEST(Gang, OneRowPerQuantumRoundRobin) {
  // Four jobs asking for 2 CPUs on 2 CPUs, the flat gang (narrow=0): four rows, each runs alone on its 2 CPUs
  // in turn.
  Gang p;
  ASSERT_TRUE(p.set_param("narrow", "0"));
  auto s = machine_with(2, {2, 2, 2, 2});
  auto d = step(p, s, Event::arrival, 0);
  EXPECT_EQ(running(d), (std::vector<int>{1, 0, 0, 0}));
  EXPECT_EQ(counts(d), (std::vector<int>{2, 2, 2, 2}));
  // A report is no quantum: the row keeps running.
  EXPECT_EQ(running(step(p, s, Event::report, 0.05)), (std::vector<int>{1, 0, 0, 0}));
  EXPECT_EQ(running(step(p, s, Event::quantum, 0.1)), (std::vector<int>{0, 1, 0, 0}));
  EXPECT_EQ(running(step(p, s, Event::quantum, 0.2)), (std::vector<int>{0, 0, 1, 0}));
  d = step(p, s, Event::quantum, 0.3);
  EXPECT_EQ(running(d), (std::vector<int>{0, 0, 0, 1}));
  EXPECT_EQ(d.jobs[3].reason, "gang: its row 4 of 4 runs this quantum on min(ρ=2, P=2) = 2 CPU(s)");
  EXPECT_EQ(d.jobs[2].reason, "gang: row 4 of 4 runs this quantum; this job's row 3 waits");
  EXPECT_TRUE(d.jobs[0].reason.empty());  // stopped before, stopped now: nothing to explain
  EXPECT_EQ(running(step(p, s, Event::quantum, 0.4)), (std::vector<int>{1, 0, 0, 0}));
}

TEST(Gang, MoreJobsThanCpusTakeOneColumnEach) {
  // The same four jobs under narrow=1 (the default): one column each, two rows of two jobs.
  Gang p;
  auto s = machine_with(2, {2, 2, 2, 2});
  auto d = step(p, s, Event::arrival, 0);
  EXPECT_EQ(running(d), (std::vector<int>{1, 1, 0, 0}));
  EXPECT_EQ(counts(d), (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(d.jobs[0].state, "row 1/2");
  d = step(p, s, Event::quantum, 0.1);
  EXPECT_EQ(running(d), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(d.jobs[2].reason, "gang: its row 2 of 2 runs this quantum on 1 CPU (4 jobs for 2 CPUs: one column "
                              "each, narrow=1)");
  EXPECT_EQ(running(step(p, s, Event::quantum, 0.2)), (std::vector<int>{1, 1, 0, 0}));
  // As many jobs as CPUs: their requests again (two rows of one 2-CPU job).
  auto two = machine_with(2, {2, 2});
  EXPECT_EQ(counts(step(p, two, Event::arrival, 0.3)), (std::vector<int>{2, 2}));
}

TEST(Gang, AlternateSelectionFillsIdleColumns) {
  // P = 4, widths 3, 3, 1: rows {1, 3} and {2}. Row 2 leaves one column, which job 3 fills.
  Gang p;
  auto s = machine_with(4, {3, 3, 1});
  EXPECT_EQ(running(step(p, s, Event::arrival, 0)), (std::vector<int>{1, 0, 1}));
  EXPECT_EQ(running(step(p, s, Event::quantum, 0.1)), (std::vector<int>{0, 1, 1}));
  Gang strict;
  ASSERT_TRUE(strict.set_param("alternate", "0").ok());
  auto t = machine_with(4, {3, 3, 1});
  step(strict, t, Event::arrival, 0);
  EXPECT_EQ(running(step(strict, t, Event::quantum, 0.1)), (std::vector<int>{0, 1, 0}));
}

TEST(Gang, NoJobStarvesWhileJobsComeAndGo) {
  Gang p;
  auto s = machine_with(4, {3, 2, 2, 1, 4, 1});
  std::map<JobId, double> last_ran;
  for (const auto& j : s.jobs) last_ran[j.id] = 0;
  JobId next = 7;
  for (int q = 1; q <= 200; ++q) {
    if (q % 17 == 0) {  // one leaves, one arrives
      p.forget(s.jobs.front().id);
      last_ran.erase(s.jobs.front().id);
      s.jobs.erase(s.jobs.begin());
      JobView j;
      j.id = next++;
      j.request = 1 + q % 4;
      s.jobs.push_back(j);
      last_ran[j.id] = q * 0.1;
    }
    auto d = step(p, s, Event::quantum, q * 0.1);
    int used = 0;
    for (const auto& a : d.jobs) {
      if (!a.runnable) continue;
      last_ran[a.id] = q * 0.1;
      used += a.cpus;
    }
    EXPECT_LE(used, 4);
    for (const auto& [id, t] : last_ran) EXPECT_LE(q * 0.1 - t, 0.1 * 7 + 1e-9) << "job " << id << " starves";
  }
}

TEST(Window, InequalityFiveBoundsTheGang) {
  // P = 8, 3P = 24: 8 + 8 + 8 = 24 fits, a further 4 would make 28.
  EXPECT_EQ(gang_from({8, 8, 8, 4, 4}, 0, 8, {}), (std::vector<std::size_t>{0, 1, 2}));
  // From job 4: 4 + 4 + 8 + 8 = 24, round the ring.
  EXPECT_EQ(gang_from({8, 8, 8, 4, 4}, 3, 8, {}), (std::vector<std::size_t>{3, 4, 0, 1}));
  // A job asking more than 3P still runs, alone.
  EXPECT_EQ(gang_from({30, 1}, 0, 8, {}), (std::vector<std::size_t>{0}));
  // Our bound: at most P jobs (here 2).
  EXPECT_EQ(gang_from({1, 1, 1}, 0, 2, {}), (std::vector<std::size_t>{0, 1}));
}

TEST(SwDss, WindowsFollowEachOther) {
  // P = 8, ρ = 8, 8, 8, 4, 4. Window 1 = jobs 1-3 (Σ = 24 = 3P): DSS W = 24, R = ⌊64/24⌋ = 2 each; the
  // floor leaves 2 CPUs, which go to the largest remainders (64 - 48 = 16 each; ties: first) → 3, 3, 2.
  SlidingWindowDss p(SlidingWindowDss::Step::window);
  auto s = machine_with(8, {8, 8, 8, 4, 4});
  auto d = step(p, s, Event::arrival, 0);
  EXPECT_EQ(running(d), (std::vector<int>{1, 1, 1, 0, 0}));
  EXPECT_EQ(counts(d)[0], 3);
  EXPECT_EQ(counts(d)[1], 3);
  EXPECT_EQ(counts(d)[2], 2);
  // Window 2 starts after job 3: 4 + 4 + 8 + 8 = 24 → jobs 4, 5, 1, 2. DSS over ρ = 8, 8, 4, 4 (W = 24):
  // R = 2, 2, 1, 1; remainders 16, 16, 8, 8 → +1 to jobs 1 and 2: 3, 3, 1, 1.
  d = step(p, s, Event::quantum, 0.1);
  EXPECT_EQ(running(d), (std::vector<int>{1, 1, 0, 1, 1}));
  EXPECT_EQ(counts(d), (std::vector<int>{3, 3, 2, 1, 1}));  // job 3 keeps its count while stopped
  // Window 3 starts after job 2: job 3, 4, 5, 1 (8 + 4 + 4 + 8 = 24).
  EXPECT_EQ(running(step(p, s, Event::quantum, 0.2)), (std::vector<int>{1, 0, 1, 1, 1}));
}

TEST(SwDss, PaperLeavesTheFloorIdle) {
  SlidingWindowDss p(SlidingWindowDss::Step::window);
  ASSERT_TRUE(p.set_param("fill_remainder", "0").ok());
  auto s = machine_with(8, {8, 8, 8, 4, 4});
  EXPECT_EQ(counts(step(p, s, Event::arrival, 0)), (std::vector<int>{2, 2, 2, 4, 4}));
}

TEST(SswDss, SlidesByOneJob) {
  // P = 2, four jobs of ρ = 2: a gang holds two (our bound of P jobs; Σ = 4 ≤ 6). DSS: W = 4, R = 1 each.
  SlidingWindowDss p(SlidingWindowDss::Step::one);
  auto s = machine_with(2, {2, 2, 2, 2});
  auto d = step(p, s, Event::arrival, 0);
  EXPECT_EQ(running(d), (std::vector<int>{1, 1, 0, 0}));
  EXPECT_EQ(counts(d), (std::vector<int>{1, 1, 2, 2}));
  EXPECT_EQ(running(step(p, s, Event::quantum, 0.1)), (std::vector<int>{0, 1, 1, 0}));
  EXPECT_EQ(running(step(p, s, Event::quantum, 0.2)), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(running(step(p, s, Event::quantum, 0.3)), (std::vector<int>{1, 0, 0, 1}));
  // SW on the same jobs jumps a whole window.
  SlidingWindowDss sw(SlidingWindowDss::Step::window);
  auto t = machine_with(2, {2, 2, 2, 2});
  step(sw, t, Event::arrival, 0);
  EXPECT_EQ(running(step(sw, t, Event::quantum, 0.1)), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(running(step(sw, t, Event::quantum, 0.2)), (std::vector<int>{1, 1, 0, 0}));
}

TEST(SwDss, AllJobsInOneWindowIsPlainDss) {
  SlidingWindowDss p(SlidingWindowDss::Step::window);
  auto s = machine_with(8, {2, 2});
  EXPECT_EQ(running(step(p, s, Event::arrival, 0)), (std::vector<int>{1, 1}));
  auto d = step(p, s, Event::quantum, 0.1);
  EXPECT_EQ(running(d), (std::vector<int>{1, 1}));
  EXPECT_EQ(counts(d), (std::vector<int>{2, 2}));
  EXPECT_TRUE(d.jobs[0].reason.empty());  // nothing changed
}

TEST(VtqDss, VariableQuantaEqualiseCpuTime) {
  // P = 4, q0 = 0.1 s, at most 3 jobs per gang; ρ = 2, 1, 1, 4.
  VtqDss p;
  ASSERT_TRUE(p.set_param("window_jobs", "3").ok());
  auto s = machine_with(4, {2, 1, 1, 4});
  s.quantum = 0.1;
  // Phase 1 cuts the queue from job 1: [1 2 3] (3 jobs), [4] → job 4 is the repository.
  // Step 1: DSS over ρ = 2, 1, 1 on 4 CPUs: W = 4, x = 2, 1, 1; first quanta are q0 (§3.2.3).
  // Eq. 7: T = 0.2, 0.1, 0.1.
  auto d = step(p, s, Event::arrival, 0);
  EXPECT_EQ(running(d), (std::vector<int>{1, 1, 1, 0}));
  EXPECT_EQ(counts(d), (std::vector<int>{2, 1, 1, 4}));
  EXPECT_DOUBLE_EQ(p.cpu_time(1), 0.2);
  EXPECT_DOUBLE_EQ(p.cpu_time(2), 0.1);
  ASSERT_TRUE(d.wake_at.has_value());
  EXPECT_DOUBLE_EQ(*d.wake_at, 0.1);
  // Step 2 (t = 0.1): phase 2 cuts from the repository: [4 1 2], [3]. DSS over ρ = 4, 2, 1 on 4 CPUs:
  // W = 7, R = ⌊16/7⌋ = 2, ⌊8/7⌋ = 1, ⌊4/7⌋ = 0 → δ = 1: x = 1, 1, 2 in admission order (jobs 1, 2, 4).
  // Eq. 8: T_w = 0.2 + 0.1 + 0 = 0.3, n = 3, x̄ = 4/3: every T after the step = 0.1 + 0.1·4/3 = 0.2333.
  // Job 4 is new: q0. Job 1: q = (0.2333 - 0.2)/1 = 0.0333; job 2: (0.2333 - 0.1)/1 = 0.1333.
  d = step(p, s, Event::timer, 0.1);
  EXPECT_EQ(running(d), (std::vector<int>{1, 1, 0, 1}));
  EXPECT_EQ(counts(d)[0], 1);
  EXPECT_EQ(counts(d)[1], 1);
  EXPECT_EQ(counts(d)[3], 2);
  EXPECT_NEAR(p.quantum(1), 0.1 / 3, 1e-12);
  EXPECT_NEAR(p.quantum(2), 0.4 / 3, 1e-12);
  EXPECT_NEAR(p.quantum(4), 0.1, 1e-12);
  EXPECT_NEAR(p.cpu_time(1), 0.7 / 3, 1e-12);
  EXPECT_NEAR(p.cpu_time(2), 0.7 / 3, 1e-12);
  EXPECT_NEAR(p.cpu_time(4), 0.2, 1e-12);
  ASSERT_TRUE(d.wake_at.has_value());
  EXPECT_NEAR(*d.wake_at, 0.1 + 0.1 / 3, 1e-12);  // job 1's quantum ends first
  // t = 0.1333: job 1 stops; its CPU goes to the repository's job 3 for the rest of the step.
  d = step(p, s, Event::timer, 0.1 + 0.1 / 3);
  EXPECT_EQ(running(d), (std::vector<int>{0, 1, 1, 1}));
  EXPECT_EQ(counts(d)[2], 1);
  EXPECT_EQ(d.jobs[2].state, "hole (repository)");
  EXPECT_NEAR(*d.wake_at, 0.2, 1e-12);  // job 4's quantum
}

TEST(VtqDss, DecisionsBetweenItsWakeUpsChangeNothing) {
  // The daemon asks the policy at every tick; the simulator may ask it only at its wake-ups. The holes'
  // eq. 7 charges must come out bit for bit the same either way: charged where T_i is read or the holes
  // change, not in pieces at every decision (a sum in other pieces rounds otherwise, and a quantum clamped
  // or a step ending a hair earlier then changes the rest of the run). The setting of
  // VariableQuantaEqualiseCpuTime: from t = 0.1333 job 3 fills job 1's CPU until the step ends.
  VtqDss woken;
  VtqDss ticked;
  for (VtqDss* p : {&woken, &ticked}) ASSERT_TRUE(p->set_param("window_jobs", "3").ok());
  auto s = machine_with(4, {2, 1, 1, 4});
  s.quantum = 0.1;
  auto s2 = s;
  double wake = 0;
  for (int i = 0; i < 40; ++i) {
    auto d = step(woken, s, i == 0 ? Event::arrival : Event::timer, wake);
    ASSERT_TRUE(d.wake_at.has_value());
    const double next = *d.wake_at;
    // The other one is also asked at every 7 ms in between (ticks that are not its wake-ups).
    step(ticked, s2, i == 0 ? Event::arrival : Event::timer, wake);
    for (double t = std::floor(wake / 0.007 + 1) * 0.007; t < next; t += 0.007) step(ticked, s2, Event::quantum, t);
    wake = next;
    for (JobId id = 1; id <= 4; ++id) {
      EXPECT_EQ(woken.cpu_time(id), ticked.cpu_time(id)) << "job " << id << " before t=" << wake;
      EXPECT_EQ(woken.quantum(id), ticked.quantum(id)) << "job " << id << " before t=" << wake;
    }
  }
}

TEST(VtqDss, NoJobStarvesAndNoCpuIdlesWhileAJobWaits) {
  VtqDss p;
  auto s = machine_with(2, {2, 2, 2, 2, 1});
  s.quantum = 0.1;
  std::map<JobId, double> last_ran;
  double t = 0;
  for (int i = 0; i < 400; ++i) {
    auto d = step(p, s, i == 0 ? Event::arrival : Event::timer, t);
    int used = 0;
    for (const auto& a : d.jobs) {
      if (a.runnable) {
        last_ran[a.id] = t;
        used += a.cpus;
      }
    }
    EXPECT_EQ(used, 2) << "t=" << t;
    ASSERT_TRUE(d.wake_at.has_value());
    t = *d.wake_at;
    if (t > 1) {
      for (const auto& j : s.jobs) EXPECT_LE(t - last_ran[j.id], 2.0) << "job " << j.id << " starves";
    }
  }
}

TEST(TimeSharing, RegisteredWithTheirParameters) {
  Machine m;
  m.cpus = 4;
  for (const char* name : {"gang", "sw-dss", "ssw-dss", "vtq-dss"}) {
    auto p = make_policy(name, m, {});
    ASSERT_TRUE(p.ok()) << name;
    EXPECT_EQ((*p)->name(), name);
  }
  EXPECT_FALSE(make_policy("sw-dss", m, {{"window_factor", "0.5"}}).ok());
  EXPECT_TRUE(make_policy("ssw-dss", m, {{"window_factor", "2"}}).ok());
}

TEST(TimeSharing, WithoutAReaderTheDecisionsAreTheSameAndUnexplained) {
  // Snapshot::explain false (cosched-sim without a decision log): the same allocations, states and wake-ups
  // step after step, and no reason formatted; with it, the moves are explained (the first step moves every
  // job: each starts waiting with no CPUs).
  Machine m;
  m.cpus = 4;
  for (const char* name : {"gang", "sw-dss", "ssw-dss", "vtq-dss"}) {
    auto told = make_policy(name, m, {}).value();
    auto silent = make_policy(name, m, {}).value();
    auto a = machine_with(4, {2, 1, 3, 4, 1});
    auto b = a;
    b.explain = false;
    double now = 0;
    for (int k = 0; k < 12; ++k) {
      const Event e = k == 0 ? Event::arrival : Event::quantum;
      const Decision x = step(*told, a, e, now);
      const Decision y = step(*silent, b, e, now);
      ASSERT_EQ(x.jobs.size(), y.jobs.size());
      bool explained = false;
      for (std::size_t i = 0; i < x.jobs.size(); ++i) {
        EXPECT_EQ(x.jobs[i].cpus, y.jobs[i].cpus) << name << " step " << k << " job " << i;
        EXPECT_EQ(x.jobs[i].runnable, y.jobs[i].runnable) << name << " step " << k << " job " << i;
        EXPECT_EQ(x.jobs[i].state, y.jobs[i].state) << name << " step " << k << " job " << i;
        EXPECT_TRUE(y.jobs[i].reason.empty()) << name << " step " << k << " job " << i;
        explained |= !x.jobs[i].reason.empty();
      }
      if (k == 0) {
        EXPECT_TRUE(explained) << name;
      }
      EXPECT_EQ(x.wake_at, y.wake_at) << name << " step " << k;
      now = x.wake_at ? *x.wake_at : now + 0.1;
    }
  }
}
