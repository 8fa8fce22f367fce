#include "smt_select.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

namespace cosched::policy {

namespace {

bool contains(const std::vector<Pick>& picks, JobId id) {
  return std::any_of(picks.begin(), picks.end(), [id](const Pick& p) { return p.id == id; });
}

// `list` indices ordered by progress, lowest first (ties: list order).
std::vector<std::size_t> by_progress(const std::vector<Candidate>& list) {
  std::vector<std::size_t> order(list.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return list[a].progress < list[b].progress; });
  return order;
}

}  // namespace

double oatr(const std::vector<Candidate>& jobs, int contexts) {
  double sum = 0;
  int n = 0;
  for (const auto& j : jobs) {
    if (j.bw < 0) continue;
    sum += j.bw;
    ++n;
  }
  return n > 0 ? sum / n * contexts : 0.0;
}

double fitness(double bw_remain_per_context, double bw) {
  const double gap = std::fabs(bw_remain_per_context - bw);
  return gap > 0 ? 1.0 / gap : std::numeric_limits<double>::infinity();
}

std::vector<Pick> select_by_fitness(const std::vector<Candidate>& list, int contexts, double target,
                                    const std::vector<JobId>& first, const std::vector<char>& preferred) {
  std::vector<Pick> picks;
  double remain = target;
  int free = contexts;
  const double share = contexts > 0 ? target / contexts : 0;
  auto bw_of = [&](const Candidate& c) { return c.bw >= 0 ? c.bw : share; };
  for (JobId id : first) {
    for (const auto& c : list) {
      if (c.id != id || c.width > free || contains(picks, id)) continue;
      picks.push_back({id, false, fmt::format("selected by default ({} context(s))", c.width)});
      remain -= bw_of(c) * c.width;
      free -= c.width;
    }
  }
  while (free > 0) {
    const Candidate* best = nullptr;
    double best_f = -1;
    const double per = remain / free;
    bool any_preferred = false;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Candidate& c = list[i];
      if (c.width <= free && !contains(picks, c.id) && i < preferred.size() && preferred[i]) any_preferred = true;
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Candidate& c = list[i];
      if (c.width > free || contains(picks, c.id)) continue;
      if (any_preferred && !(i < preferred.size() && preferred[i])) continue;
      const double f = fitness(per, bw_of(c));
      if (f > best_f) {
        best_f = f;
        best = &c;
      }
    }
    if (best == nullptr) break;
    picks.push_back({best->id, false,
                     fmt::format("fittest{}: BW_Remain/CPU_Remain {:.3f} tr/µs, its {:.3f} tr/µs{}",
                                 any_preferred ? " of those more than 1 below the highest progress" : "", per,
                                 bw_of(*best), best->bw < 0 ? " (no sample: the mean)" : "")});
    remain -= bw_of(*best) * best->width;
    free -= best->width;
  }
  return picks;
}

std::vector<Pick> select_for_estimation(const std::vector<Candidate>& list, JobId target, int cores,
                                        int threads_per_core) {
  std::vector<Pick> picks;
  const int T = std::max(threads_per_core, 1);
  int free_cores = cores;
  const Candidate* p = nullptr;
  for (const auto& c : list) {
    if (c.id == target) p = &c;
  }
  if (p == nullptr) return picks;
  picks.push_back({p->id, true, "estimation quantum: its rate alone expired; a core (cores) of its own"});
  free_cores -= p->width;
  const std::vector<std::size_t> order = by_progress(list);
  if (p->light) {
    for (std::size_t i : order) {
      const Candidate& c = list[i];
      if (!c.light || !c.close || contains(picks, c.id) || c.width > free_cores) continue;
      picks.push_back({c.id, true, "estimation quantum: light-sharing, its rate alone close to expire; a core of its own"});
      free_cores -= c.width;
    }
  }
  int free = free_cores * T;
  for (std::size_t i : order) {
    const Candidate& c = list[i];
    if (!c.light || contains(picks, c.id) || c.width > free) continue;
    picks.push_back({c.id, false, fmt::format("estimation quantum: light-sharing, progress {:.2f}", c.progress)});
    free -= c.width;
  }
  return picks;
}

std::vector<Pick> select_for_fairness(const std::vector<Candidate>& list, int cores, int threads_per_core,
                                      double gap) {
  std::vector<Pick> picks;
  if (list.empty()) return picks;
  const int T = std::max(threads_per_core, 1);
  double avg = 0;
  for (const auto& c : list) avg += c.progress;
  avg /= static_cast<double>(list.size());
  int free_cores = cores;
  const std::vector<std::size_t> order = by_progress(list);
  for (std::size_t i : order) {
    const Candidate& c = list[i];
    if (!(c.progress < avg * (1 - gap)) || c.width > free_cores) continue;
    picks.push_back({c.id, true,
                     fmt::format("progress {:.2f} more than {:.0f} % below the average {:.2f}: a core of its own",
                                 c.progress, gap * 100, avg)});
    free_cores -= c.width;
  }
  int free = free_cores * T;
  for (std::size_t i : order) {
    const Candidate& c = list[i];
    if (contains(picks, c.id) || c.width > free) continue;
    picks.push_back({c.id, false, fmt::format("lowest progress first: {:.2f} (average {:.2f})", c.progress, avg)});
    free -= c.width;
  }
  return picks;
}

std::vector<std::vector<JobId>> pair_extremes(const std::vector<Candidate>& jobs, int groups, int group_size) {
  std::vector<const Candidate*> sorted;
  for (const auto& c : jobs) sorted.push_back(&c);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Candidate* a, const Candidate* b) { return a->intensity < b->intensity; });
  const int n = static_cast<int>(sorted.size());
  const int size = std::max(group_size, 1);
  groups = std::clamp(groups, (n + size - 1) / size, std::max(n, 1));
  std::vector<std::vector<JobId>> out;
  // Fewer jobs than contexts: the most intense take groups of their own, as many as leave the rest enough
  // groups: the largest s with s + ceil((n − s) / size) ≤ groups.
  int singles = n;
  while (singles > 0 && singles + (n - singles + size - 1) / size > groups) --singles;
  int shared = n - singles;
  for (int k = n - 1; k >= shared; --k) out.push_back({sorted[static_cast<std::size_t>(k)]->id});
  // The rest: highest with lowest (Algorithm 6), alternating ends for larger groups.
  int lo = 0;
  int hi = shared - 1;
  while (lo <= hi) {
    std::vector<JobId> g;
    bool take_high = true;
    while (static_cast<int>(g.size()) < size && lo <= hi) {
      g.push_back(take_high ? sorted[static_cast<std::size_t>(hi--)]->id : sorted[static_cast<std::size_t>(lo++)]->id);
      take_high = !take_high;
    }
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace cosched::policy
