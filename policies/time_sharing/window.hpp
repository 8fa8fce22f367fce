// Gangs of the DSS time-sharing policies (Polychronopoulos et al. §3.2.1): a window of the ready queue
// (admission order, read as a ring) holding as many consecutive jobs as Inequality 5 allows, Σρ ≤ 3P.
// Shared by sw-dss, ssw-dss and vtq-dss; pure functions over plain values.
#pragma once

#include <cstddef>
#include <vector>

#include "policies/param_spec.hpp"
#include "policies/snapshot.hpp"

namespace cosched::policy {

struct WindowLimits {
  double request_factor = 3;  // §3.2.1: Σρ of a gang ≤ 3P (Inequality 5)
  // At most this many jobs per gang (0: P). Our choice, not the paper's: with more jobs than CPUs in one
  // gang, DSS's δ (eq. 3) puts two jobs on one CPU, and the kernel then time-shares that CPU at its own
  // rhythm inside the gang — what the gangs exist to replace. On the paper's 64 CPUs with requests of 16 a
  // 3P gang holds 12 jobs, far below P, so the bound never binds there.
  int max_jobs = 0;
};

// The parameters of WindowLimits, for the tables of the policies that cut gangs (sw-dss, ssw-dss, vtq-dss).
template <class P>
ParamSpec<P> window_factor_param(Field<P, double> request_factor) {
  return real_param<P>("window_factor", 1, 64,
                       "a gang's requests sum to at most this many times P (§3.2.1, Inequality 5: 3)",
                       std::move(request_factor));
}
template <class P>
ParamSpec<P> window_jobs_param(Field<P, long> max_jobs) {
  return int_param<P>("window_jobs", 0, 1 << 20, "at most this many jobs per gang, 0: P (our choice)",
                      std::move(max_jobs));
}

// Indices into `requests` of the gang that starts at index `start` and goes on round the ring: jobs are
// added while Σρ ≤ factor·P and the count bound holds; the first job always belongs (a job asking more than
// 3P still runs, alone). No job twice. Empty only when `requests` is.
std::vector<std::size_t> gang_from(const std::vector<int>& requests, std::size_t start, int cpus,
                                   const WindowLimits& limits);
// The same into `gang` (its storage kept: a time-sharing policy cuts gangs at every quantum).
void gang_from(const std::vector<int>& requests, std::size_t start, int cpus, const WindowLimits& limits,
               std::vector<std::size_t>& gang);

// The position of job `id` in `jobs` (admission order), or of the first job admitted after it (the job
// itself left), wrapping to 0.
std::size_t position_at_or_after(const std::vector<JobView>& jobs, JobId id);

}  // namespace cosched::policy
