// The co-scheduling policies bas, fair, perf-fair and symbiotic (policies/coschedule/coschedule.hpp) against
// a small world: each job has a rate alone and a slowdown next to each partner in its group, the world
// samples every job that ran each 100 ms RM quantum as the daemon does, and the policies learn from those
// samples only.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>

#include "policies/coschedule/coschedule.hpp"
#include "policies/registry.hpp"
#include "policy_test_util.hpp"

using namespace cosched::policy;

namespace {

struct World {
  Snapshot s;
  std::function<double(JobId, JobId)> slowdown;  // of the first next to the second in one group
  std::vector<std::vector<JobId>> groups;        // the latest decision's
  std::map<std::pair<JobId, JobId>, int> together;  // quanta each pair spent in one group
  std::uint64_t seq = 0;
  double now = 0;
  // Without SMT, the slowdown a job suffers comes from every job running beside it, its group or not (the
  // memory is shared by all cores), while a sample names its group partners only, as the daemon's do.
  bool machine_wide = false;

  World(int cpus, int cores, int jobs, std::function<double(JobId, JobId)> sd) : slowdown(std::move(sd)) {
    s = cosched::policy::testing::machine_with(cpus, std::vector<int>(static_cast<std::size_t>(jobs), 1));
    s.machine.cores = cores;
    s.machine.threads_per_core = cpus / cores;
    s.quantum = 0.1;
  }

  const std::vector<JobId>* group_of(JobId id) const {
    for (const auto& g : groups) {
      if (std::find(g.begin(), g.end(), id) != g.end()) return &g;
    }
    return nullptr;
  }

  // One RM quantum: sample the jobs that ran (rate alone 100/s divided by the product of their slowdowns),
  // then decide.
  Decision tick(Policy& p) {
    now += 0.1;
    for (auto& j : s.jobs) {
      if (!j.runnable || j.allocation == 0) continue;
      const auto* g = group_of(j.id);
      RateSample r{now, 0.1, 100, 1, "model", {}};
      if (g != nullptr) {
        for (JobId o : *g) {
          if (o != j.id) r.with.push_back(o);
        }
      }
      for (const auto& o : s.jobs) {
        const bool beside = machine_wide ? o.runnable && o.allocation > 0
                                         : std::find(r.with.begin(), r.with.end(), o.id) != r.with.end();
        if (o.id != j.id && beside) r.per_s /= slowdown(j.id, o.id);
      }
      j.rate.latest = r;
      j.rate.seq = ++seq;
    }
    s.now = now;
    s.event = Event::quantum;
    Decision d = p.decide(s);
    for (std::size_t i = 0; i < s.jobs.size(); ++i) {
      s.jobs[i].allocation = d.jobs[i].cpus;
      s.jobs[i].runnable = d.jobs[i].runnable;
    }
    groups = d.co_schedule;
    for (const auto& g : groups) {
      if (g.size() == 2) ++together[{std::min(g[0], g[1]), std::max(g[0], g[1])}];
    }
    return d;
  }
};

// Jobs 1 and 2 are BBMA-like (2× slower next to each other), 3 and 4 light (nobody slows them, they slow
// nobody); a BBMA next to a light job loses 5 %.
double bbma_world(JobId i, JobId j) {
  const bool hi = i <= 2;
  const bool hj = j <= 2;
  if (hi && hj) return 2.0;
  if (hi) return 1.05;
  return 1.0;
}

std::unique_ptr<Policy> make(const std::string& name, const ParamList& params = {}) {
  auto p = make_policy(name, Machine{}, params);
  EXPECT_TRUE(p.ok()) << name;
  return std::move(*p);
}

}  // namespace

TEST(Coschedule, RegistryHasTheFourPolicies) {
  for (const char* n : {"bas", "fair", "perf-fair", "symbiotic"}) {
    auto p = make(n);
    EXPECT_EQ(p->name(), n);
    EXPECT_TRUE(p->pairs().has_value());
  }
  EXPECT_FALSE(make_policy("fair", Machine{}, {{"pairing", "best"}}).ok());
  EXPECT_FALSE(make_policy("bas", Machine{}, {{"fair_gap", "0.1"}}).ok());
  EXPECT_TRUE(make_policy("fair", Machine{}, {{"expire_quanta", "10"}, {"close_quanta", "5"}}).ok());
  EXPECT_FALSE(make_policy("fair", Machine{}, {{"close_quanta", "50"}}).ok());
}

TEST(Coschedule, SymbioticLearnsTheHeavyPairAndAvoidsIt) {
  // This machine's shape: 2 CPUs, no SMT; four one-CPU jobs, two run per quantum as one group.
  World w(2, 2, 4, bbma_world);
  auto p = make("symbiotic");
  for (int q = 0; q < 400; ++q) {
    Decision d = w.tick(*p);
    int running = 0;
    for (const auto& a : d.jobs) running += a.runnable ? 1 : 0;
    ASSERT_EQ(running, 2) << "work conservation at quantum " << q;
  }
  auto r = p->pairs();
  ASSERT_TRUE(r.has_value());
  // The learned pair costs ŝ(i|j) + ŝ(j|i): BBMA+BBMA 2 + 2 = 4 is the worst, light+light 2 the best.
  std::map<std::pair<JobId, JobId>, double> cost;
  for (const auto& e : r->entries) cost[{std::min(e.job, e.with), std::max(e.job, e.with)}] += e.slowdown;
  const std::pair<JobId, JobId> heavy{1, 2};
  ASSERT_EQ(cost.count(heavy), 1U) << "exploration must have run the two BBMAs together";
  EXPECT_NEAR(cost[heavy], 4.0, 0.05);
  for (const auto& [pair, c] : cost) {
    if (pair != heavy) {
      EXPECT_LT(c, cost[heavy]) << pair.first << "+" << pair.second;
    }
  }
  const double light_heavy = cost[std::pair<JobId, JobId>(1, 3)];
  EXPECT_NEAR(light_heavy, 2.05, 0.02);
  // Once learned, the BBMAs run together only when exploration forces it: at most one quantum in 4 explores,
  // and only unseen (or stale) pairs.
  auto together = [&](JobId a, JobId b) { return w.together[std::pair<JobId, JobId>(a, b)]; };
  EXPECT_LT(together(1, 2), 40);
  EXPECT_GT(together(1, 3) + together(1, 4) + together(2, 3) + together(2, 4), 150);
  EXPECT_GT(r->explored, 0U);
  EXPECT_LE(r->explored * 4, r->quanta);
  EXPECT_GT(r->exploration_cost, 0.0);
}

TEST(Coschedule, SymbioticWithoutSmtMeasuresRatesAloneBesideLightJobsOnly) {
  // This machine's shape again, with the physics of a machine without SMT: a BBMA is slowed by the other BBMA
  // on the adjacent core whether or not the policy calls them a group. The BBMAs report their traffic (30 GB/s
  // a thread: 469 tr/µs, heavy-sharing above 3.5), the light jobs none. A rate alone taken with the other BBMA
  // running would read 100 / 2 = 50; beside a light job it is 100 / 1.05 = 95.24, and the light jobs' 100.
  World w(2, 2, 4, bbma_world);
  w.machine_wide = true;
  for (auto& j : w.s.jobs) j.bandwidth.push({0, j.id <= 2 ? 30e9 : 0.0, 1});
  auto p = make("symbiotic");
  int estimations = 0;
  for (int q = 0; q < 400; ++q) {
    Decision d = w.tick(*p);
    for (const auto& a : d.jobs) {
      if (a.state != "estimating") continue;
      ++estimations;
      for (const auto& b : d.jobs) {
        EXPECT_FALSE(b.id != a.id && b.runnable && b.id <= 2)
            << "quantum " << q << ": job " << a.id << " measures its rate alone beside BBMA " << b.id;
      }
    }
  }
  EXPECT_GE(estimations, 4);
  auto r = p->pairs();
  ASSERT_TRUE(r.has_value());
  for (const auto& j : r->jobs) {
    EXPECT_NEAR(j.alone, j.id <= 2 ? 100 / 1.05 : 100.0, 1e-9) << "job " << j.id;
  }
  // With true rates alone the matrix ranks BBMA+BBMA first: 2 + 2 (measured beside each other only).
  std::map<std::pair<JobId, JobId>, double> cost;
  for (const auto& e : r->entries) cost[{std::min(e.job, e.with), std::max(e.job, e.with)}] += e.slowdown;
  const std::pair<JobId, JobId> heavy{1, 2};
  ASSERT_EQ(cost.count(heavy), 1U);
  for (const auto& [pair, c] : cost) {
    if (pair != heavy) {
      EXPECT_LT(c + 1, cost[heavy]) << pair.first << "+" << pair.second;
    }
  }
}

TEST(Coschedule, SymbioticMatchesOnSmtCores) {
  // 4 SMT2 cores, 8 jobs: everyone runs, in four groups of two. Jobs 1-4 slow each other 1.8× on a core; next
  // to 5-8 they lose 10 % and cost 2 %. Once learned, a heavy job shares its core with a heavy one only when
  // exploration revisits that pair (at most one quantum in 4; an entry is stale after 8 s).
  World w(8, 4, 8, [](JobId i, JobId j) { return i <= 4 && j <= 4 ? 1.8 : (i <= 4 ? 1.1 : 1.02); });
  auto p = make("symbiotic");
  int quanta = 0;
  int heavy_pairs = 0;
  for (int q = 0; q < 400; ++q) {
    Decision d = w.tick(*p);
    const bool estimation =
        std::any_of(d.jobs.begin(), d.jobs.end(), [](const Allocation& a) { return a.state == "estimating"; });
    if (q < 100 || estimation) continue;
    ++quanta;
    ASSERT_EQ(d.co_schedule.size(), 4U);
    for (const auto& g : d.co_schedule) {
      ASSERT_EQ(g.size(), 2U);
      heavy_pairs += g[0] <= 4 && g[1] <= 4 ? 1 : 0;
    }
  }
  // Random pairing would put two heavy jobs on a core in 3/7 of the groups, 4 groups a quantum.
  EXPECT_LT(heavy_pairs, quanta / 4) << heavy_pairs << " heavy pairs in " << quanta << " quanta";
}

TEST(Coschedule, FairEqualisesProgressAndMeasuresRatesAlone) {
  World w(2, 2, 4, bbma_world);
  auto p = make("fair");
  int estimation = 0;
  for (int q = 0; q < 600; ++q) {
    Decision d = w.tick(*p);
    for (const auto& a : d.jobs) estimation += a.state == "estimating" ? 1 : 0;
  }
  EXPECT_GT(estimation, 0);
  auto r = p->pairs();
  double lo = 1e9;
  double hi = 0;
  for (const auto& j : r->jobs) {
    EXPECT_NEAR(j.alone, 100.0, 1e-9) << "job " << j.id << ": the rate alone is the rate with nobody in its group";
    lo = std::min(lo, j.progress);
    hi = std::max(hi, j.progress);
  }
  // Progress within 10 % of each other after 60 s of quanta (Algorithm 7's purpose).
  EXPECT_LT(hi / lo, 1.10);
}

TEST(Coschedule, PerfFairEstimationQuantaLastHalfAQuantum) {
  World w(2, 2, 4, bbma_world);
  auto p = make("perf-fair");
  // The first decision: every rate alone has expired, so an estimation quantum of 100 ms (§6.3.1): the next
  // wake-up is 100 ms plus a quarter RM quantum after it.
  Decision d = w.tick(*p);
  ASSERT_TRUE(d.wake_at.has_value());
  EXPECT_NEAR(*d.wake_at - w.now, 0.1 + 0.025, 1e-9);
  // Nothing is known yet, so every job counts as light-sharing: the target and the next light job close to
  // expire each get a core alone (both CPUs of this machine).
  EXPECT_EQ(std::count_if(d.jobs.begin(), d.jobs.end(), [](const Allocation& a) { return a.state == "estimating"; }), 2);
  // Never two estimation quanta in a row: the next one is an ordinary 200 ms quantum.
  d = w.tick(*p);
  ASSERT_TRUE(d.wake_at.has_value());
  EXPECT_NEAR(*d.wake_at - w.now, 0.2 + 0.025, 1e-9);
  EXPECT_EQ(std::count_if(d.jobs.begin(), d.jobs.end(), [](const Allocation& a) { return a.state == "estimating"; }), 0);
}

TEST(Coschedule, BasSelectsByBandwidthFitnessAndPairsExtremes) {
  // 2 SMT2 cores; per-thread bandwidths 9, 8, 0.5, 0.1 tr/µs (64-byte transactions). OATR = 17.6/4 × 4 = 17.6.
  // Head job 1 (9): 8.6 left for 3 contexts, 2.867 each: job 3 (0.5, fitness 1/2.367) beats 4 (1/2.767) and
  // 2 (1/5.133)... then (8.6 − 0.5)/2 = 4.05: 4 (1/3.95) vs 2 (1/3.95)? 2: |4.05 − 8| = 3.95, 4: |4.05 − 0.1| =
  // 3.95: a tie, the earlier in the list (2); then 4. All four run: OATR only orders them here.
  Snapshot s = cosched::policy::testing::machine_with(4, {1, 1, 1, 1});
  s.machine.cores = 2;
  const double bw[] = {9, 8, 0.5, 0.1};
  for (std::size_t i = 0; i < 4; ++i) s.jobs[i].bandwidth.push({0, bw[i] * 64e6, 1});
  auto p = make("bas");
  Decision d = p->decide(s);
  for (const auto& a : d.jobs) EXPECT_TRUE(a.runnable);
  // Algorithm 6 with memory bandwidth for L1: sorted 4 (0.1), 3 (0.5), 2 (8), 1 (9): {1, 4} and {2, 3}.
  std::vector<std::vector<JobId>> groups = d.co_schedule;
  for (auto& g : groups) std::sort(g.begin(), g.end());
  std::sort(groups.begin(), groups.end());
  EXPECT_EQ(groups, (std::vector<std::vector<JobId>>{{1, 4}, {2, 3}}));
}

TEST(Coschedule, EveryJobRunsAndNoneStarves) {
  // Eight jobs on 2 CPUs under each policy: every job runs within 40 quanta of 200 ms.
  for (const char* n : {"bas", "fair", "perf-fair", "symbiotic"}) {
    World w(2, 2, 8, bbma_world);
    auto p = make(n);
    std::map<JobId, int> ran;
    for (int q = 0; q < 80; ++q) {
      Decision d = w.tick(*p);
      for (const auto& a : d.jobs) ran[a.id] += a.runnable ? 1 : 0;
    }
    for (JobId id = 1; id <= 8; ++id) EXPECT_GT(ran[id], 0) << n << ": job " << id;
  }
}
