#include "membus_select.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace cosched::policy {

double membus_distance(const MembusDemand& d, int p_rem, double bwm_rem, double bwn_rem) {
  const double p = std::max(p_rem, 1);
  return std::hypot(d.mem_per_proc - bwm_rem / p, d.net_per_proc - bwn_rem / p);
}

std::vector<int> membus_select(const std::vector<MembusDemand>& list, int cpus, double mem_bw, double net_bw) {
  std::vector<int> s(list.size(), 0);  // lines 2-4
  if (list.empty() || cpus < 1) return s;
  auto procs = [&](std::size_t i) { return std::clamp(list[i].procs, 1, cpus); };
  // Lines 5-7: the first application always gets scheduled.
  s[0] = 1;
  int p_rem = cpus - procs(0);
  double bwm_rem = mem_bw - list[0].mem_per_proc * procs(0);
  double bwn_rem = net_bw - list[0].net_per_proc * procs(0);
  while (p_rem > 0) {  // line 8
    double best_d = std::numeric_limits<double>::infinity();
    std::ptrdiff_t best = -1;  // line 9
    for (std::size_t i = 0; i < list.size(); ++i) {  // lines 10-15
      if (s[i] != 0 || procs(i) > p_rem) continue;
      const double d = membus_distance(list[i], p_rem, bwm_rem, bwn_rem);
      if (d < best_d) {
        best_d = d;
        best = static_cast<std::ptrdiff_t>(i);
      }
    }
    if (best < 0) break;  // nothing fits: our addition
    const auto b = static_cast<std::size_t>(best);
    s[b] = 1;  // lines 16-18
    p_rem -= procs(b);
    bwm_rem -= list[b].mem_per_proc * procs(b);
    bwn_rem -= list[b].net_per_proc * procs(b);
  }
  return s;
}

std::vector<std::size_t> membus_reduce(const std::vector<std::vector<int>>& local, std::vector<int>* total) {
  std::size_t n = 0;
  for (const auto& l : local) n = std::max(n, l.size());
  std::vector<int> sum(n, 0);
  for (const auto& l : local) {
    for (std::size_t i = 0; i < l.size(); ++i) sum[i] += l[i];
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return sum[a] > sum[b]; });
  if (total != nullptr) *total = std::move(sum);
  return order;
}

std::vector<int> membus_allocate(const std::vector<std::size_t>& order, const std::vector<int>& procs, int cpus) {
  std::vector<int> run(procs.size(), 0);
  int p_rem = cpus;
  for (std::size_t i : order) {
    if (p_rem <= 0) break;
    if (i >= procs.size() || procs[i] <= 0) continue;
    const int p = std::min(procs[i], cpus);
    if (p > p_rem) continue;
    run[i] = 1;
    p_rem -= p;
  }
  return run;
}

}  // namespace cosched::policy
