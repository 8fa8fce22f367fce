#include "queue_sharing.hpp"

#include <string>

#include <fmt/format.h>

namespace cosched::policy {

void QueueSharing::admit(const Snapshot& s, Decision& d, int cap) const {
  if (d.may_start || jobs_per_cpu_ <= 1 || s.queued <= 0) return;
  const int jobs = s.jobs_and_starting();
  if (jobs < s.machine.cpus) return;  // a CPU no job holds: the policy's own rule decides
  const long limit = static_cast<long>(jobs_per_cpu_) * s.machine.cpus;
  if (jobs >= limit || (cap > 0 && jobs >= cap)) return;
  d.may_start = true;
  d.may_start_reason = fmt::format("{} job{} wait{} and every CPU holds a job: jobs share CPUs rather than queue "
                                   "({} running of at most {}, jobs_per_cpu={})",
                                   s.queued, s.queued == 1 ? "" : "s", s.queued == 1 ? "s" : "", jobs, limit,
                                   jobs_per_cpu_);
}

}  // namespace cosched::policy
