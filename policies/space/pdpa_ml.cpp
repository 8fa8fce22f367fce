// PDPA's multiprogramming-level policy (Corbalan, Martorell, Labarta, TPDS 2005, §4.3; restated in the
// abstract and §6): "PDPA allows the execution of a new application when free processors are available and
// the allocation of all the running applications is stable, or if some applications show bad performance."
//
// Our reading (docs/policies.md, "PDPA multiprogramming level"):
//   may_start = free > 0 ∧ (every job is settled ∨ some job is in DEC)
// where free counts the CPUs left after this very decision (a DEC job has already given its step back), a job
// is settled when it cannot claim more CPUs (STABLE, DEC, or holding its whole request), and "bad
// performance" is the DEC state. The free-CPU condition is kept in the DEC branch too: starting a job with no
// CPU free would give it a shared CPU, which §4.1's space sharing and §4.2.1's min(request, free) exclude.
#include <algorithm>

#include <fmt/format.h>

#include "pdpa.hpp"

namespace cosched::policy {

namespace {

std::string free_text(int n) { return n == 1 ? std::string("1 free CPU") : fmt::format("{} free CPUs", n); }

bool may_claim_more(const PdpaRunningJob& j) {
  // An unmeasured job never blocks admission, nor does one at its equal share while jobs wait (no convoys).
  const int limit = j.cap > 0 ? std::min(j.request, j.cap) : j.request;
  if (j.cpus >= limit || j.unmeasured) return false;
  return j.state == PdpaState::no_ref || j.state == PdpaState::inc;
}

}  // namespace

MayStart pdpa_may_start(const std::vector<PdpaRunningJob>& jobs, int machine_cpus, const PdpaParams& p,
                        int starting, bool explain) {
  // A job being started takes at least one CPU when it registers (§4.2.1: min(request, free)), and no
  // report can have judged it: counted as settled on one free CPU (our choice: the least it will hold).
  starting = std::max(starting, 0);
  // The reason is formatted only for a reader (Snapshot::explain): cosched-sim asks millions of times.
  auto because = [explain](auto text) { return explain ? text() : std::string(); };
  const int running = static_cast<int>(jobs.size()) + starting;
  if (p.max_ml > 0 && running >= p.max_ml) {
    return {false, because([&] { return fmt::format("{} jobs running, max_ml is {}", running, p.max_ml); })};
  }
  if (running < p.min_ml && running < machine_cpus) {
    return {true, because([&] { return fmt::format("{} jobs running, below min_ml {}", running, p.min_ml); })};
  }
  int used = starting;
  for (const auto& j : jobs) used += j.cpus;
  const int free = machine_cpus - used;
  if (free <= 0) {
    if (starting > 0) {
      return {false, because([&] {
                return fmt::format("no free CPU ({} of {} allocated, counting one for each of the {} jobs being "
                                   "started)",
                                   used, machine_cpus, starting);
              })};
    }
    return {false, because([&] { return fmt::format("no free CPU ({} of {} allocated)", used, machine_cpus); })};
  }
  const PdpaRunningJob* claimant = nullptr;
  const PdpaRunningJob* bad = nullptr;
  for (const auto& j : jobs) {
    if (!claimant && may_claim_more(j)) claimant = &j;
    if (!bad && j.state == PdpaState::dec) bad = &j;
  }
  if (!claimant) {
    return {true, because([&] {
              return fmt::format("{} and every running job is settled (STABLE, DEC, UNMEASURED, or at its request "
                                 "or its equal share)",
                                 free_text(free));
            })};
  }
  if (bad) {
    return {true, because([&] {
              return fmt::format("{} and job {} shows bad performance (DEC)", free_text(free), bad->id);
            })};
  }
  return {false, because([&] {
            return fmt::format("{} but job {} is in {} and may still claim them", free_text(free), claimant->id,
                               to_string(claimant->state));
          })};
}

}  // namespace cosched::policy
