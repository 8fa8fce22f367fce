#include "window.hpp"

#include <algorithm>
#include <cstdint>

namespace cosched::policy {

std::vector<std::size_t> gang_from(const std::vector<int>& requests, std::size_t start, int cpus,
                                   const WindowLimits& limits) {
  std::vector<std::size_t> gang;
  gang_from(requests, start, cpus, limits, gang);
  return gang;
}

void gang_from(const std::vector<int>& requests, std::size_t start, int cpus, const WindowLimits& limits,
               std::vector<std::size_t>& gang) {
  gang.clear();
  const std::size_t n = requests.size();
  if (n == 0) return;
  const double bound = limits.request_factor * cpus;  // Inequality 5: w ≤ 3P
  const std::size_t max_jobs = static_cast<std::size_t>(limits.max_jobs > 0 ? limits.max_jobs : std::max(cpus, 1));
  double sum = 0;
  for (std::size_t k = 0; k < n && gang.size() < max_jobs; ++k) {
    const std::size_t i = (start + k) % n;
    const double rho = std::max(requests[i], 1);
    if (!gang.empty() && sum + rho > bound) break;  // eq. 4: consecutive jobs only, so stop at the first misfit
    sum += rho;
    gang.push_back(i);
  }
}

std::size_t position_at_or_after(const std::vector<JobView>& jobs, JobId id) {
  auto it = std::lower_bound(jobs.begin(), jobs.end(), id, [](const JobView& v, JobId x) { return v.id < x; });
  return it == jobs.end() ? 0 : static_cast<std::size_t>(it - jobs.begin());
}

}  // namespace cosched::policy
