#include "equipartition.hpp"

#include <algorithm>
#include <numeric>
#include <string>

namespace cosched::policy {

std::vector<int> equal_shares(const std::vector<JobView>& jobs, int cpus) {
  const std::size_t n = jobs.size();
  std::vector<int> alloc(n, 0);
  if (n == 0) return alloc;
  int remaining = cpus;
  // Water filling: hand out floor(remaining / unsatisfied) to every unsatisfied job until either the CPUs
  // or the demand run out.
  while (remaining > 0) {
    std::vector<std::size_t> hungry;
    for (std::size_t i = 0; i < n; ++i) {
      if (alloc[i] < std::max(jobs[i].request, 1)) hungry.push_back(i);
    }
    if (hungry.empty()) break;
    int share = remaining / static_cast<int>(hungry.size());
    if (share == 0) {
      // Fewer CPUs left than hungry jobs: one each, by (current holding desc, arrival asc).
      std::stable_sort(hungry.begin(), hungry.end(), [&](std::size_t a, std::size_t b) {
        if (jobs[a].allocation != jobs[b].allocation) return jobs[a].allocation > jobs[b].allocation;
        return jobs[a].arrival < jobs[b].arrival;
      });
      for (std::size_t k = 0; k < hungry.size() && remaining > 0; ++k, --remaining) ++alloc[hungry[k]];
      break;
    }
    for (auto i : hungry) {
      int give = std::min(share, std::max(jobs[i].request, 1) - alloc[i]);
      alloc[i] += give;
      remaining -= give;
    }
  }
  // Run-to-completion: more jobs than CPUs still leaves every job one (shared) CPU.
  for (auto& a : alloc) a = std::max(a, 1);
  return alloc;
}

Decision Equipartition::decide(const Snapshot& s) {
  Decision d;
  auto shares = equal_shares(s.jobs, s.machine.cpus);
  for (std::size_t i = 0; i < s.jobs.size(); ++i) {
    const auto& j = s.jobs[i];
    Allocation a{j.id, shares[i], true, "", ""};
    if (shares[i] != j.allocation) {
      a.reason = "equal share of " + std::to_string(s.machine.cpus) + " CPUs among " +
                 std::to_string(s.jobs.size()) + " jobs (request " + std::to_string(j.request) + ") → " +
                 std::to_string(shares[i]) + " CPUs";
    }
    d.jobs.push_back(std::move(a));
  }
  // Equipartition has no multiprogramming-level policy of its own (the QS applies a fixed ML): a new job
  // can start whenever it would get a CPU of its own.
  admit_while_a_cpu_is_unshared(s, d);
  sharing_.admit(s, d);
  return d;
}

const ParamTable<Equipartition>& Equipartition::param_table() {
  static const ParamTable<Equipartition> t = {jobs_per_cpu_param(&Equipartition::sharing_)};
  return t;
}

}  // namespace cosched::policy
