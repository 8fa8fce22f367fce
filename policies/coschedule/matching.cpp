#include "matching.hpp"

#include <lemon/list_graph.h>
#include <lemon/matching.h>

#include <algorithm>
#include <cmath>
#include <functional>

namespace cosched::policy {

namespace {

// Costs enter LEMON as integers (exact duals, no floating-point ties that depend on rounding): micro-units of
// slowdown, negated because LEMON maximises.
long long weight_of(double cost) { return -std::llround(cost * 1e6); }

std::vector<int> merged(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> m = a;
  m.insert(m.end(), b.begin(), b.end());
  std::sort(m.begin(), m.end());
  return m;
}

void sort_units(std::vector<std::vector<int>>& units) {
  for (auto& u : units) std::sort(u.begin(), u.end());
  std::sort(units.begin(), units.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
}

// Matches `items` (groups of the caller's indices) into exactly `units` units: singles stay as they are,
// pairs are merged. LEMON's perfect matching over the items plus one dummy per single.
std::vector<std::vector<int>> match_level(const std::vector<std::vector<int>>& items, int units, const GroupCost& cost) {
  const int n = static_cast<int>(items.size());
  units = std::clamp(units, (n + 1) / 2, n);
  const int singles = 2 * units - n;
  if (singles == n) return items;  // nobody shares
  lemon::ListGraph g;
  std::vector<lemon::ListGraph::Node> nodes;
  for (int i = 0; i < n + singles; ++i) nodes.push_back(g.addNode());
  lemon::ListGraph::EdgeMap<long long> w(g);
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) w[g.addEdge(nodes[a], nodes[b])] = weight_of(cost(merged(items[a], items[b])));
    const long long alone = weight_of(cost(items[a]));
    for (int d = n; d < n + singles; ++d) w[g.addEdge(nodes[a], nodes[d])] = alone;
  }
  lemon::MaxWeightedPerfectMatching<lemon::ListGraph, lemon::ListGraph::EdgeMap<long long>> m(g, w);
  m.run();  // always has a perfect matching: every dummy can take a distinct item (singles ≤ n)
  std::vector<std::vector<int>> out;
  for (int a = 0; a < n; ++a) {
    const int b = g.id(m.mate(nodes[a]));
    if (b >= n) {
      out.push_back(items[a]);
    } else if (b > a) {
      out.push_back(merged(items[a], items[b]));
    }
  }
  return out;
}

// Re-splits two groups into the best two of the same sizes (every choice of the first group's members).
bool improve_pair(std::vector<int>& a, std::vector<int>& b, const GroupCost& cost) {
  const std::vector<int> all = merged(a, b);
  const int n = static_cast<int>(all.size());
  const int k = static_cast<int>(a.size());
  double best = cost(a) + cost(b);
  bool improved = false;
  std::vector<char> pick(static_cast<std::size_t>(n), 0);
  std::fill(pick.begin(), pick.begin() + k, 1);
  do {
    std::vector<int> x;
    std::vector<int> y;
    for (int i = 0; i < n; ++i) (pick[static_cast<std::size_t>(i)] ? x : y).push_back(all[static_cast<std::size_t>(i)]);
    const double c = cost(x) + cost(y);
    if (c < best - 1e-9) {
      best = c;
      a = x;
      b = y;
      improved = true;
    }
  } while (std::prev_permutation(pick.begin(), pick.end()));
  return improved;
}

}  // namespace

std::vector<std::vector<int>> min_cost_groups(int n, const GroupingLimits& limits, const GroupCost& cost) {
  const int size = std::max(limits.group_size, 1);
  const int target = std::min(std::max(limits.groups, 1), n);
  n = std::min(n, target * size);
  std::vector<std::vector<int>> units;
  for (int i = 0; i < n; ++i) units.push_back({i});
  if (n == 0) return units;
  // Levels: each merges units of up to `reach` items into units of up to 2·reach, keeping as many units as
  // the levels still to come can merge down to `target`.
  for (int reach = 1; reach < size; reach *= 2) {
    const int u = static_cast<int>(units.size());
    const int still = size / (2 * reach);  // how many times the units of this level can still double
    const int want = std::max((u + 1) / 2, std::min(u, target * still));
    units = match_level(units, want, cost);
  }
  if (size > 2) {
    for (int pass = 0; pass < limits.local_passes; ++pass) {
      bool improved = false;
      for (std::size_t a = 0; a < units.size(); ++a) {
        for (std::size_t b = a + 1; b < units.size(); ++b) improved |= improve_pair(units[a], units[b], cost);
      }
      if (!improved) break;
    }
  }
  sort_units(units);
  return units;
}

}  // namespace cosched::policy
