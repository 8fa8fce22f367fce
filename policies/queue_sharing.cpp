#include "queue_sharing.hpp"

#include <string>

#include <fmt/format.h>

#include "param_util.hpp"

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

Param QueueSharing::param() const {
  return {std::string(kName), std::to_string(jobs_per_cpu_),
          "while jobs wait and every CPU holds a job, admit until this many jobs per CPU, sharing CPUs rather "
          "than queueing (1: only onto a CPU no job holds, the papers' rule; our choice, docs/policies.md)"};
}

std::optional<Status> QueueSharing::set_param(std::string_view name, std::string_view value) {
  if (name != kName) return std::nullopt;
  long v = 0;
  if (auto st = parse_int_param(name, value, 1, 1024, v); !st) return st;
  jobs_per_cpu_ = static_cast<int>(v);
  return Status{};
}

}  // namespace cosched::policy
