#include "dss.hpp"

#include <algorithm>
#include <numeric>
#include <queue>
#include <utility>

#include <fmt/format.h>


namespace cosched::policy {

DssTerms dss_terms(const std::vector<int>& requests, int cpus) {
  DssTerms t;
  for (int rho : requests) t.workload += std::max(rho, 1);  // eq. 1
  t.r.reserve(requests.size());
  t.x.reserve(requests.size());
  for (int rho : requests) {
    // eq. 2 in 64-bit: ρ_i · P overflows int on big machines with big requests.
    const auto r = static_cast<int>(static_cast<std::int64_t>(std::max(rho, 1)) * cpus / t.workload);
    t.r.push_back(r);
    t.x.push_back(r + (r < 1 ? 1 : 0));  // eq. 3, δ_i
  }
  return t;
}

std::vector<int> dss_partition(const std::vector<int>& requests, int cpus, bool fill_remainder) {
  const std::size_t n = requests.size();
  if (n == 0) return {};
  const DssTerms t = dss_terms(requests, cpus);
  std::vector<int> alloc(n);
  for (std::size_t i = 0; i < n; ++i) alloc[i] = std::min(t.x[i], std::max(requests[i], 1));  // §3.1 min(x, ρ)
  long sum = std::accumulate(alloc.begin(), alloc.end(), 0L);

  // Σ x_i > P happens only through δ. Space sharing cannot run more CPUs than exist, so the excess comes back
  // from the largest holders (youngest first on ties), which lose proportionally least.
  if (sum > cpus) {
    std::priority_queue<std::pair<int, std::size_t>> largest;
    for (std::size_t i = 0; i < n; ++i) {
      if (alloc[i] > 1) largest.emplace(alloc[i], i);
    }
    while (sum > cpus && !largest.empty()) {
      auto [a, i] = largest.top();
      largest.pop();
      --alloc[i];
      --sum;
      if (alloc[i] > 1) largest.emplace(alloc[i], i);
    }
  }

  if (fill_remainder && sum < cpus) {
    // Largest remainder of ρ_i P / W first: the same W for all, so compare ρ_i P - R_i W directly.
    // (−remainder, i) sorted: the largest remainder first, the first job on ties (a stable sort's order,
    // without its buffer: cosched-sim partitions a window at every quantum).
    std::vector<std::pair<std::int64_t, std::size_t>> order(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t remainder = static_cast<std::int64_t>(std::max(requests[i], 1)) * cpus -
                                     static_cast<std::int64_t>(t.r[i]) * t.workload;
      order[i] = {-remainder, i};
    }
    std::sort(order.begin(), order.end());
    bool progress = true;
    while (sum < cpus && progress) {
      progress = false;
      for (const auto& [negative_remainder, i] : order) {
        if (sum >= cpus) break;
        if (alloc[i] < std::max(requests[i], 1)) {
          ++alloc[i];
          ++sum;
          progress = true;
        }
      }
    }
  }
  return alloc;
}

Decision Dss::decide(const Snapshot& s) {
  std::vector<int> requests;
  requests.reserve(s.jobs.size());
  for (const auto& j : s.jobs) requests.push_back(j.request);
  const auto alloc = dss_partition(requests, s.machine.cpus, fill_remainder_);
  const DssTerms t = alloc.empty() ? DssTerms{} : dss_terms(requests, s.machine.cpus);

  Decision d;
  d.jobs.reserve(s.jobs.size());
  for (std::size_t i = 0; i < s.jobs.size(); ++i) {
    const auto& j = s.jobs[i];
    Allocation a{j.id, alloc[i], true, "", ""};
    if (alloc[i] != j.allocation) {
      a.reason = fmt::format("DSS: ρ={} W={} P={}: R=⌊ρP/W⌋={}, δ={}, min(x, ρ)={}", j.request, t.workload,
                             s.machine.cpus, t.r[i], t.x[i] - t.r[i], std::min(t.x[i], std::max(j.request, 1)));
      const int bound = std::min(t.x[i], std::max(j.request, 1));
      if (alloc[i] < bound) a.reason += fmt::format(", trimmed by {} so Σ fits P", bound - alloc[i]);
      if (alloc[i] > bound) a.reason += fmt::format(", +{} of the floor remainder", alloc[i] - bound);
      a.reason += alloc[i] == 1 ? std::string(" → 1 CPU") : fmt::format(" → {} CPUs", alloc[i]);
    }
    d.jobs.push_back(std::move(a));
  }
  // DSS has no multiprogramming-level rule of its own: start a job while it would get a CPU of its own.
  admit_while_a_cpu_is_unshared(s, d);
  sharing_.admit(s, d);
  return d;
}

const ParamTable<Dss>& Dss::param_table() {
  static const ParamTable<Dss> t = {
      flag_param<Dss>("fill_remainder",
                      "1: hand CPUs left idle by the floor of eq. 2 to the largest remainders; 0: leave them idle "
                      "(paper)",
                      member<Dss, long>([](auto& p) -> auto& { return p.fill_remainder_; })),
      jobs_per_cpu_param(&Dss::sharing_),
  };
  return t;
}

}  // namespace cosched::policy
