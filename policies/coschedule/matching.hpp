// Co-runner groups by minimum-weight perfect matching (Feliu's thesis §7.2.2, after Jiang et al.): for two
// jobs per core the schedule with the least predicted slowdown is a minimum-weight perfect matching on the
// complete graph of the jobs, edge (i, j) weighing ŝ(i|j) + ŝ(j|i); Edmonds' blossom algorithm finds it in
// polynomial time. We use LEMON's MaxWeightedPerfectMatching (O(n·m·log n)) on the negated weights; Boost
// 1.74's maximum_weighted_matching (Debian 12) has known wrong results, crashes and endless loops on ties
// (boostorg/graph issues #199, #223, #399), and ties are the rule here before anything is learned.
//
// Fewer jobs than contexts: some jobs get a core to themselves. A dummy vertex per single (the thesis's
// "dummy vertex for odd counts", generalised) is joined to every job at the cost of that job alone, never to
// another dummy; a perfect matching then pairs exactly the number of jobs that must share.
//
// More than two contexts per core (SMT4): the thesis's hierarchical method — Blossom pairs the jobs, Blossom
// pairs the pairs (the weight of two pairs is the predicted cost of the four together), then a local search
// re-splits every two groups into the best two of the same sizes (§7.2.2: "a local optimization step
// rearranges applications in each pair of quadruples"), for at most `local_passes` passes (our bound, 2).
#pragma once

#include <functional>
#include <utility>
#include <vector>

namespace cosched::policy {

// Cost of a group of items (indices into the caller's list): the sum of its members' predicted slowdowns.
using GroupCost = std::function<double(const std::vector<int>& group)>;

struct GroupingLimits {
  int group_size = 2;    // contexts per core: at most this many items per group (a power of two)
  int groups = 1;        // how many groups (cores) there are; every item goes to one
  int local_passes = 2;  // local-search passes for group_size > 2 (0: none)
};

// Splits n items into at most `groups` groups of at most `group_size` items, as few sharing as possible,
// minimising Σ group costs: one matching for group_size 2 (optimal), hierarchical matchings plus local
// search above. cost({a}) is a job alone; the groups come back sorted, in order of their first item. The caller selects no more than groups × group_size items; any beyond that are left out.
std::vector<std::vector<int>> min_cost_groups(int n, const GroupingLimits& limits, const GroupCost& cost);

}  // namespace cosched::policy
