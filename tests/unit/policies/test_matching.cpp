// Minimum-cost co-runner groups (policies/coschedule/matching.hpp): LEMON's blossom on small graphs with
// known optima, the dummy vertices for odd counts and spare cores, ties (where Boost 1.74's matching fails),
// and the SMT4 hierarchy against an exhaustive search.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <map>
#include <random>

#include "policies/coschedule/matching.hpp"

using namespace cosched::policy;

namespace {

using Groups = std::vector<std::vector<int>>;

// A symmetric pair-cost table; a single costs 1 (a job alone: no slowdown), a group the sum of its pairs'
// costs spread over its members: Σ_i (1 + Σ_{j≠i} x(i,j)) where x(i,j) = (pair(i,j) − 2)/2.
GroupCost table_cost(const std::map<std::pair<int, int>, double>& pair) {
  return [pair](const std::vector<int>& g) {
    double c = 0;
    for (int i : g) {
      c += 1;
      for (int j : g) {
        if (i == j) continue;
        c += (pair.at({std::min(i, j), std::max(i, j)}) - 2) / 2;
      }
    }
    return c;
  };
}

// The exhaustive optimum: every partition into exactly min(groups, n) groups of at most group_size items.
Groups brute_force_groups(int n, const GroupingLimits& limits, const GroupCost& cost) {
  const int size = limits.group_size;
  const int target = std::min(limits.groups, n);
  Groups best;
  double best_cost = std::numeric_limits<double>::infinity();
  Groups cur;
  std::function<void(int)> place = [&](int i) {
    if (i == n) {
      if (static_cast<int>(cur.size()) != target) return;
      double c = 0;
      for (const auto& g : cur) c += cost(g);
      if (c < best_cost - 1e-9) {
        best_cost = c;
        best = cur;
      }
      return;
    }
    for (std::size_t k = 0; k < cur.size(); ++k) {  // by index: the recursion grows `cur`
      if (static_cast<int>(cur[k].size()) >= size) continue;
      cur[k].push_back(i);
      place(i + 1);
      cur[k].pop_back();
    }
    if (static_cast<int>(cur.size()) < target) {
      cur.push_back({i});
      place(i + 1);
      cur.pop_back();
    }
  };
  place(0);
  return best;
}

double total(const Groups& gs, const GroupCost& cost) {
  double t = 0;
  for (const auto& g : gs) t += cost(g);
  return t;
}

std::map<std::pair<int, int>, double> random_table(int n, std::mt19937& rng) {
  std::uniform_int_distribution<int> d(0, 60);
  std::map<std::pair<int, int>, double> t;
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) t[{i, j}] = 2 + d(rng) / 20.0;  // pair costs in [2, 5], many ties
  }
  return t;
}

}  // namespace

TEST(Matching, FourJobsKnownOptimum) {
  // 0 and 1 hurt each other badly (10), as do 2 and 3; the cross pairs cost 2 or 5. Optimum {0,2}{1,3} = 4.
  const auto cost = table_cost({{{0, 1}, 10}, {{2, 3}, 10}, {{0, 2}, 2}, {{1, 3}, 2}, {{0, 3}, 5}, {{1, 2}, 5}});
  const Groups g = min_cost_groups(4, {2, 2, 2}, cost);
  EXPECT_EQ(g, (Groups{{0, 2}, {1, 3}}));
  EXPECT_DOUBLE_EQ(total(g, cost), 4.0);
}

TEST(Matching, OddCountLeavesTheCostliestPartnerAlone) {
  // Three jobs on two cores: one pair and one job alone (a dummy vertex). {0,1}+{2}: 2.1 + 1 = 3.1;
  // {0,2}+{1}: 4; {1,2}+{0}: 3.5.
  const auto cost = table_cost({{{0, 1}, 2.1}, {{0, 2}, 3}, {{1, 2}, 2.5}});
  EXPECT_EQ(min_cost_groups(3, {2, 2, 2}, cost), (Groups{{0, 1}, {2}}));
  // Enough cores for everyone: nobody shares.
  EXPECT_EQ(min_cost_groups(3, {2, 3, 2}, cost), (Groups{{0}, {1}, {2}}));
  // Five jobs on three cores: two pairs and one alone.
  std::mt19937 rng(5);
  const auto c5 = table_cost(random_table(5, rng));
  const Groups g5 = min_cost_groups(5, {2, 3, 2}, c5);
  EXPECT_EQ(g5.size(), 3U);
  EXPECT_DOUBLE_EQ(total(g5, c5), total(brute_force_groups(5, {2, 3, 2}, c5), c5));
}

TEST(Matching, EqualCostsStillGiveAPerfectMatching) {
  // Every pair costs the same (nothing learned yet): Boost 1.74's matching can crash or loop here.
  const GroupCost flat = [](const std::vector<int>& g) { return g.size() == 1 ? 1.0 : 2.0 * static_cast<double>(g.size()); };
  for (int n = 2; n <= 40; n += 7) {
    const Groups g = min_cost_groups(n, {2, (n + 1) / 2, 2}, flat);
    std::vector<int> seen;
    for (const auto& gr : g) {
      EXPECT_LE(gr.size(), 2U);
      seen.insert(seen.end(), gr.begin(), gr.end());
    }
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(static_cast<int>(seen.size()), n);
    EXPECT_EQ(static_cast<int>(g.size()), (n + 1) / 2);
    for (int i = 0; i < n; ++i) EXPECT_EQ(seen[static_cast<std::size_t>(i)], i);
  }
}

TEST(Matching, BlossomEqualsExhaustiveSearchOnRandomGraphs) {
  std::mt19937 rng(42);
  for (int round = 0; round < 60; ++round) {
    const int n = 2 + round % 9;                // 2..10 jobs
    const int cores = (n + 1) / 2 + round % 2;  // full cores, or one spare
    const auto cost = table_cost(random_table(n, rng));
    const GroupingLimits lim{2, cores, 2};
    const Groups g = min_cost_groups(n, lim, cost);
    EXPECT_NEAR(total(g, cost), total(brute_force_groups(n, lim, cost), cost), 1e-9) << "n=" << n << " cores=" << cores;
  }
}

TEST(Matching, SmtFourPairsOfPairsThenLocalSearch) {
  // Eight jobs on two SMT4 cores. Two of each kind A (0-3) and B (4-7)... a hand-made optimum: A jobs cost 4
  // with each other, B jobs 4 with each other, A with B 2.2: the best is two A and two B per core.
  std::map<std::pair<int, int>, double> t;
  for (int i = 0; i < 8; ++i) {
    for (int j = i + 1; j < 8; ++j) t[{i, j}] = (i < 4) == (j < 4) ? 4.0 : 2.2;
  }
  const auto cost = table_cost(t);
  const GroupingLimits lim{4, 2, 2};
  const Groups g = min_cost_groups(8, lim, cost);
  ASSERT_EQ(g.size(), 2U);
  for (const auto& gr : g) {
    ASSERT_EQ(gr.size(), 4U);
    EXPECT_EQ(std::count_if(gr.begin(), gr.end(), [](int i) { return i < 4; }), 2);
  }
  // With two groups the local search tries every split of the two: the exhaustive optimum, on any costs.
  std::mt19937 rng(7);
  for (int round = 0; round < 10; ++round) {
    const auto c = table_cost(random_table(8, rng));
    EXPECT_NEAR(total(min_cost_groups(8, lim, c), c), total(brute_force_groups(8, lim, c), c), 1e-9);
  }
  // Six jobs on two SMT4 cores: groups of at most four, both cores used.
  const auto c6 = table_cost(random_table(6, rng));
  const Groups g6 = min_cost_groups(6, lim, c6);
  EXPECT_EQ(g6.size(), 2U);
  for (const auto& gr : g6) EXPECT_LE(gr.size(), 4U);
}
