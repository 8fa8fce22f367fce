// The parts of PDPA's decision that the paper leaves to "the system" (docs/policies.md, "PDPA: departures
// from the paper"): jobs that never report, and CPUs that nobody holds. Pure functions over the working
// copy pdpa.cpp builds; no clock (the snapshot's `now` is an argument), no I/O.
#pragma once

#include <string>
#include <vector>

#include "pdpa_state.hpp"
#include "snapshot.hpp"

namespace cosched::policy {

// One job during a PDPA decision.
struct PdpaWork {
  PdpaJobMemory* mem = nullptr;
  PdpaState state_before = PdpaState::no_ref;
  int cpus = 0;
  int grow = 0;
  std::string why;
};

// Arrivals: lent CPUs come back before a new job gets its first allocation. Returns the CPUs reclaimed.
int pdpa_reclaim_lent(const Snapshot& s, std::vector<PdpaWork>& w, int& used);

// Marks NO_REF jobs past their deadline whose SelfAnalyzer has found no period (JobView::analyzing) as
// unmeasured and gives each at least min(request, machine / jobs), from free CPUs first, then from the
// largest holders above that share. Returns the earliest deadline still ahead (a timer), or a negative value.
double pdpa_serve_unmeasured(const Snapshot& s, std::vector<PdpaWork>& w, int machine, int& used,
                           const PdpaParams& p);

// Work conservation: lends every free CPU, one at a time, to STABLE or unmeasured jobs below their request
// (unmeasured first, then by measured efficiency, highest first), never to one known to waste them
// (efficiency below target_eff, or a larger allocation below it in its history). Nothing when p.strict.
void pdpa_lend_free(const Snapshot& s, std::vector<PdpaWork>& w, int machine, int& used, const PdpaParams& p);

}  // namespace cosched::policy
