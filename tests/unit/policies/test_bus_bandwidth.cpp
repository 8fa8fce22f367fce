// Latest Quantum and Quanta Window (Antonopoulos et al. §4, eqs. 1-2) on the paper's own machine: 4 CPUs,
// a bus of 29.5 transactions/µs (64 bytes each), BBMA at 23.6 and nBBMA at 0.0037 transactions/µs per
// thread. Every fitness below is worked out by hand from eq. 1 in the comments.
#include <gtest/gtest.h>

#include <map>

#include "policies/bandwidth/bus_bandwidth.hpp"
#include "policies/registry.hpp"
#include "policy_test_util.hpp"

using namespace cosched::policy;
using cosched::policy::testing::machine_with;
using cosched::policy::testing::running;
using cosched::policy::testing::step;

namespace {

constexpr double kTr = 64e6;  // bytes/s per transaction/µs

// Gives job `id` `n` samples of `tr_per_us` transactions/µs for the whole job, at times ending at `t`.
void sample(Snapshot& s, JobId id, double tr_per_us, int n = 1, double t = 0, double step = 0.1) {
  for (auto& j : s.jobs) {
    if (j.id != id) continue;
    for (int k = 0; k < n; ++k) {
      j.bandwidth.source = "app-reported";
      j.bandwidth.push({t - (n - 1 - k) * step, tr_per_us * kTr, j.request});
    }
  }
}

// The paper's third experiment set on its machine: two 2-thread applications of 20 transactions/µs each
// (10 per thread), two BBMAs and two nBBMAs of one thread each.
Snapshot set_c() {
  Snapshot s = machine_with(4, {2, 2, 1, 1, 1, 1});
  s.machine.mem_bandwidth = 29.5 * kTr;
  s.quantum = 0.1;
  sample(s, 1, 20);
  sample(s, 2, 20);
  sample(s, 3, 23.6);
  sample(s, 4, 23.6);
  sample(s, 5, 0.0037);
  sample(s, 6, 0.0037);
  return s;
}

const std::string& reason(const Decision& d, JobId id) { return d.find(id)->reason; }

}  // namespace

TEST(BusBandwidth, FitnessIsEquationOne) {
  EXPECT_DOUBLE_EQ(BusBandwidth::fitness(4.75, 10), 160.0);  // 1000 / (1 + 5.25)
  EXPECT_DOUBLE_EQ(BusBandwidth::fitness(3, 3), 1000.0);
  EXPECT_DOUBLE_EQ(BusBandwidth::fitness(-2, 0), 1000.0 / 3);  // an overloaded bus: the lowest is fittest
  EXPECT_DOUBLE_EQ(BusBandwidth::to_tr_per_us(29.5 * kTr), 29.5);
}

TEST(BusBandwidth, HeadThenFittestWorkedExample) {
  BusBandwidth p(BusBandwidth::Mode::quanta_window);
  Snapshot s = set_c();
  Decision d = step(p, s, Event::arrival, 0);
  // Head: job 1 (2 CPUs, 20 tr/µs). ABBW/proc = (29.5 − 20) / 2 = 4.75. Job 2 (10/thread): 1000/6.25 = 160.0;
  // BBMAs: 1000/(1 + 18.85) = 50.4; nBBMAs: 1000/(1 + 4.7463) = 174.0 → job 5 (the earlier of a tie).
  // Then ABBW/proc = (29.5 − 20.0037) / 1 = 9.4963: BBMA 1000/15.1037 = 66.2, nBBMA 1000/10.4926 = 95.3 → 6.
  EXPECT_EQ(running(d), (std::vector<int>{1, 0, 0, 0, 1, 1}));
  EXPECT_NE(reason(d, 1).find("head of the list"), std::string::npos) << reason(d, 1);
  EXPECT_NE(reason(d, 5).find("ABBW/proc 4.75 tr/µs"), std::string::npos) << reason(d, 5);
  EXPECT_NE(reason(d, 5).find("fitness 174.0"), std::string::npos) << reason(d, 5);
  EXPECT_NE(reason(d, 5).find("next best: job 6, 174.0"), std::string::npos) << reason(d, 5);
  EXPECT_NE(reason(d, 6).find("ABBW/proc 9.50 tr/µs"), std::string::npos) << reason(d, 6);
  EXPECT_NE(reason(d, 6).find("fitness 95.3"), std::string::npos) << reason(d, 6);
  EXPECT_NE(reason(d, 6).find("next best: job 3, 66.2"), std::string::npos) << reason(d, 6);
  EXPECT_NE(reason(d, 3).find("waits"), std::string::npos) << reason(d, 3);
  ASSERT_TRUE(d.wake_at.has_value());
  EXPECT_DOUBLE_EQ(*d.wake_at, 0.225);  // the quantum, and a quarter of the RM's 100 ms
  EXPECT_TRUE(d.may_start);

  // A tick before the quantum is over changes nothing.
  EXPECT_EQ(running(step(p, s, Event::quantum, 0.1)), (std::vector<int>{1, 0, 0, 0, 1, 1}));
  // 200 ms: the list is [2, 3, 4, 1, 5, 6]. Head job 2; ABBW/proc 4.75 again: job 1 160.0, nBBMA 174.0 → 5,
  // then 6 (95.3 against the BBMAs' 66.2).
  EXPECT_EQ(running(step(p, s, Event::quantum, 0.2)), (std::vector<int>{0, 1, 0, 0, 1, 1}));
  // 400 ms: the list is [3, 4, 1, 2, 5, 6]. Head job 3 (BBMA, 23.6): ABBW/proc = 5.9/3 = 1.97; job 4:
  // 1000/22.63 = 44.2, apps 110.7, nBBMA 1000/2.963 = 337.5 → 5. ABBW/proc = 5.8963/2 = 2.95: job 4 46.2,
  // apps 124.2, job 6 253.5 → 6. One CPU left, ABBW/proc 5.89: only job 4 fits (53.5).
  Decision q3 = step(p, s, Event::quantum, 0.4);
  EXPECT_EQ(running(q3), (std::vector<int>{0, 0, 1, 1, 1, 1}));
  EXPECT_NE(reason(q3, 5).find("fitness 337.5"), std::string::npos) << reason(q3, 5);
  EXPECT_NE(reason(q3, 6).find("fitness 253.5"), std::string::npos) << reason(q3, 6);
  EXPECT_NE(reason(q3, 4).find("fitness 53.5"), std::string::npos) << reason(q3, 4);
}

TEST(BusBandwidth, HighPairsWithLowOnTwoCpus) {
  // Two BBMAs and two nBBMAs of one thread on 2 CPUs (integration test's workload) with B = 1.2 × BBMA:
  // head BBMA → ABBW/proc = 0.2·b: the nBBMA (|0.2b − 0|) beats the other BBMA (|0.2b − b| = 0.8b).
  Snapshot s = machine_with(2, {1, 1, 1, 1});
  s.machine.mem_bandwidth = 1.2 * 20 * kTr;
  s.quantum = 0.1;
  sample(s, 1, 20);
  sample(s, 2, 0.01);
  sample(s, 3, 20);
  sample(s, 4, 0.01);
  BusBandwidth p(BusBandwidth::Mode::quanta_window);
  int mixed = 0;
  int same = 0;
  for (int q = 0; q < 8; ++q) {
    Decision d = step(p, s, q == 0 ? Event::arrival : Event::quantum, 0.2 * q);
    auto r = running(d);
    ASSERT_EQ(r[0] + r[1] + r[2] + r[3], 2);
    const bool high = r[0] + r[2] == 1;
    mixed += high ? 1 : 0;
    same += high ? 0 : 1;
  }
  EXPECT_EQ(mixed, 8);
  EXPECT_EQ(same, 0);
}

TEST(BusBandwidth, LatestQuantumReadsOnlyTheLatestQuantum) {
  // A job whose window mixes an old burst with a quiet latest quantum: Latest Quantum sees only the quiet
  // part (samples within 200 ms of the latest), Quanta Window the mean of all five.
  Snapshot s = machine_with(2, {1, 1, 1});
  s.machine.mem_bandwidth = 30 * kTr;
  s.quantum = 0.1;
  for (double t : {0.1, 0.2, 0.3}) s.jobs[1].bandwidth.push({t, 25 * kTr, 1});  // burst
  for (double t : {0.9, 1.0}) s.jobs[1].bandwidth.push({t, 1 * kTr, 1});        // quiet now
  sample(s, 1, 28);  // head: leaves 2 tr/µs for the last CPU
  sample(s, 3, 12);
  // Latest Quantum: job 2 at 1 tr/µs: 1000/2 = 500 beats job 3 (1000/11 = 90.9).
  BusBandwidth lq(BusBandwidth::Mode::latest_quantum);
  EXPECT_EQ(running(step(lq, s, Event::arrival, 1.0)), (std::vector<int>{1, 1, 0}));
  // Quanta Window: job 2's mean (3·25 + 2·1)/5 = 15.4: 1000/14.4 = 69.4 loses to job 3's 90.9.
  BusBandwidth qw(BusBandwidth::Mode::quanta_window);
  EXPECT_EQ(running(step(qw, s, Event::arrival, 1.0)), (std::vector<int>{1, 0, 1}));
  // window=2: the two quiet samples only, as Latest Quantum.
  BusBandwidth qw2(BusBandwidth::Mode::quanta_window);
  ASSERT_TRUE(qw2.set_param("window", "2"));
  EXPECT_EQ(running(step(qw2, s, Event::arrival, 1.0)), (std::vector<int>{1, 1, 0}));
}

TEST(BusBandwidth, NoDataIsGangOrderAndSaysWhy) {
  // No sample anywhere: the list's round robin, each job filling what the others leave, the list sliding
  // by one job per quantum so that the pairs change: {1,2}, {2,3}, {3,4}, {4,1}.
  Snapshot s = machine_with(2, {1, 1, 1, 1});
  s.machine.mem_bandwidth = 30 * kTr;
  s.quantum = 0.1;
  BusBandwidth p(BusBandwidth::Mode::quanta_window);
  Decision d = step(p, s, Event::arrival, 0);
  EXPECT_EQ(running(d), (std::vector<int>{1, 1, 0, 0}));
  EXPECT_NE(reason(d, 2).find("gang order (no job has a bandwidth sample yet)"), std::string::npos) << reason(d, 2);
  EXPECT_EQ(running(step(p, s, Event::quantum, 0.2)), (std::vector<int>{0, 1, 1, 0}));
  EXPECT_EQ(running(step(p, s, Event::quantum, 0.4)), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(running(step(p, s, Event::quantum, 0.6)), (std::vector<int>{1, 0, 0, 1}));
  // Samples but no bus capacity: gang order too, and the reason names the option.
  sample(s, 1, 20);
  s.machine.mem_bandwidth = 0;
  d = step(p, s, Event::quantum, 0.8);
  bool named = false;
  for (const auto& a : d.jobs) named |= a.reason.find("--mem-bandwidth") != std::string::npos;
  EXPECT_TRUE(named);
  // pick=list: the bandwidth-blind baseline, whatever the data.
  s.machine.mem_bandwidth = 30 * kTr;
  ASSERT_TRUE(p.set_param("pick", "list"));
  d = step(p, s, Event::quantum, 1.0);
  bool listed = false;
  for (const auto& a : d.jobs) listed |= a.reason.find("gang order (pick=list): next in the list") != std::string::npos;
  EXPECT_TRUE(listed);
  EXPECT_FALSE(p.set_param("pick", "best"));
}

TEST(BusBandwidth, RandomPartnersAreSeededAndFair) {
  // pick=random: after the head, co-runners at random; the same seed gives the same draws, and over many
  // quanta the head's partner is each of the others about equally often.
  auto run = [](const char* seed) {
    Snapshot s = machine_with(2, {1, 1, 1, 1});
    s.quantum = 0.1;
    BusBandwidth p(BusBandwidth::Mode::quanta_window);
    EXPECT_TRUE(p.set_param("pick", "random"));
    EXPECT_TRUE(p.set_param("seed", seed));
    std::vector<int> seq;
    for (int q = 0; q < 300; ++q) {
      auto r = running(step(p, s, q == 0 ? Event::arrival : Event::quantum, 0.2 * q));
      seq.push_back(r[0] * 1 + r[1] * 2 + r[2] * 4 + r[3] * 8);
    }
    return seq;
  };
  EXPECT_EQ(run("7"), run("7"));
  EXPECT_NE(run("7"), run("8"));
  std::map<int, int> pairs;
  for (int v : run("7")) ++pairs[v];
  EXPECT_EQ(pairs.size(), 6u);  // all C(4,2) pairs occur
  for (const auto& [pair, n] : pairs) EXPECT_GT(n, 20) << pair;
}

TEST(BusBandwidth, EveryJobRunsAndDeparturesAreFilled) {
  Snapshot s = set_c();
  BusBandwidth p(BusBandwidth::Mode::latest_quantum);
  std::vector<int> ran(6, 0);
  for (int q = 0; q < 12; ++q) {
    auto r = running(step(p, s, q == 0 ? Event::arrival : Event::quantum, 0.2 * q));
    for (int i = 0; i < 6; ++i) ran[static_cast<std::size_t>(i)] += r[static_cast<std::size_t>(i)];
  }
  for (int i = 0; i < 6; ++i) EXPECT_GT(ran[static_cast<std::size_t>(i)], 0) << "job " << i + 1;
}

TEST(BusBandwidth, ADepartureIsFilledWithoutRotating) {
  Snapshot s = set_c();
  BusBandwidth p(BusBandwidth::Mode::quanta_window);
  EXPECT_EQ(running(step(p, s, Event::arrival, 0)), (std::vector<int>{1, 0, 0, 0, 1, 1}));
  // Job 5 leaves: one CPU, ABBW/proc = 29.5 − 20.0037 = 9.4963: the BBMAs (66.2 each) are all that fits → 3.
  p.forget(5);
  s.jobs.erase(s.jobs.begin() + 4);
  Decision d = step(p, s, Event::departure, 0.05);
  EXPECT_EQ(running(d), (std::vector<int>{1, 0, 1, 0, 1}));
  EXPECT_NE(reason(d, 3).find("fitness 66.2"), std::string::npos) << reason(d, 3);
  EXPECT_DOUBLE_EQ(*d.wake_at, 0.225);  // the quantum still ends when it would have
}

TEST(BusBandwidth, ParametersAndRegistry) {
  auto lq = make_policy("latest-quantum", Machine{});
  ASSERT_TRUE(lq);
  EXPECT_EQ((*lq)->name(), "latest-quantum");
  auto qw = make_policy("quanta-window", Machine{}, {{"window", "3"}, {"quantum_ms", "500"}});
  ASSERT_TRUE(qw);
  for (const auto& p : (*qw)->params()) {
    if (p.name == "window") {
      EXPECT_EQ(p.value, "3");
    }
    if (p.name == "quantum_ms") {
      EXPECT_EQ(p.value, "500");
    }
  }
  EXPECT_FALSE((*qw)->set_param("window", "6"));       // at most the sensors' 5
  EXPECT_FALSE((*lq)->set_param("window", "3"));       // Latest Quantum has no window
  EXPECT_FALSE((*qw)->set_param("bus_bandwidth", "-1"));
  EXPECT_TRUE((*qw)->set_param("bus_bandwidth", "29e9"));
}
