// The parts of PDPA's decision that the paper leaves to "the system" (docs/policies.md, "PDPA: departures
// from the paper"): jobs started together against the multiprogramming level, jobs that never report, and
// CPUs that nobody holds. Pure functions over the working copy pdpa.cpp builds; no clock (the snapshot's
// `now` is an argument), no I/O.
#pragma once

#include <string>
#include <vector>

#include "pdpa_state.hpp"
#include "policies/snapshot.hpp"

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

// An INC job's claim (§4.2.2, "the minimum between step and the number of free processors"): CPUs lent by
// work conservation count as free for it, as they do for an arrival. Takes back up to `wanted` of them,
// one at a time from the job holding the most lent, never from `claimant`. Returns how many.
int pdpa_take_back_lent(std::vector<PdpaWork>& w, std::size_t claimant, int wanted, int& used);

// No convoys (not in the paper; docs/policies.md, "PDPA: departures from the paper"). The jobs waiting in the
// queuing system that the multiprogramming level would still let in: min(queued, machine - running,
// max_ml - running when max_ml is set), at least 0, plus the jobs being started (Snapshot::starting: admitted,
// not registered yet; at most machine - running), which count as running in that room. 0 when p.strict (the
// paper's §4.3 rule) or nobody waits.
int pdpa_waiting_within_ml(const Snapshot& s, int machine, const PdpaParams& p);

// While `waiting` > 0, each running job's equal share of the machine among the running jobs and the waiting
// ones (Equipartition's water filling, the waiting jobs counted as asking for the whole machine, and losing
// ties to the running jobs): the most a running job may hold. Empty when `waiting` is 0: no cap.
std::vector<int> pdpa_share_caps(const Snapshot& s, int waiting, int machine);

// Every job above its cap gives the excess back, whatever its state or efficiency (CPUs lent to it first).
// The measurement base of a job cut so is gone, as after any change of its allocation made by others.
void pdpa_hold_to_caps(std::vector<PdpaWork>& w, const std::vector<int>& caps, int waiting, int& used);

// A job admitted with fewer free CPUs than an equal share (started against the multiprogramming level: by a
// QS with its own, or by hand) takes CPUs, one at a time from the largest, from NO_REF jobs holding more than
// min(request, CPUs / jobs): an allocation no report has judged yet is no reason to keep the newcomer on
// the one CPU that happened to be free. Measured jobs keep theirs (§4.2). The sum held does not change.
// `cap` bounds the share (pdpa_share_caps; 0: none).
void pdpa_share_unmeasured_on_arrival(const Snapshot& s, std::vector<PdpaWork>& w, std::size_t arrived, int machine,
                                      int cap);

// Marks NO_REF jobs past their bound (PdpaParams::unmeasured_after_s while their SelfAnalyzer has found no
// period, unmeasured_iterations of their own iterations once it has) as unmeasured and gives each at least
// min(request, machine / jobs, its cap), from free CPUs first, then from the largest holders above that
// share. `caps` as pdpa_share_caps (empty: none). Returns the earliest deadline still ahead (a timer), or a
// negative value.
double pdpa_serve_unmeasured(const Snapshot& s, std::vector<PdpaWork>& w, int machine, int& used,
                             const PdpaParams& p, const std::vector<int>& caps);

// Work conservation: lends every free CPU, one at a time, to STABLE or unmeasured jobs below their request
// (unmeasured first, then by measured efficiency, highest first), first to the jobs not known to waste them
// (efficiency below target_eff, or a larger allocation below it in its history), then what is left to STABLE
// jobs whatever their efficiency, then to the jobs still measuring or claiming (NO_REF, INC): no CPU stays
// idle while a job is below its request. What is still idle goes to the jobs in DEC: they do not step down
// into CPUs nobody can take. Nothing while `waiting` > 0 (the free CPUs are for the jobs the queuing system
// starts next) or when p.strict.
void pdpa_lend_free(const Snapshot& s, std::vector<PdpaWork>& w, int machine, int& used, const PdpaParams& p,
                    int waiting);

}  // namespace cosched::policy
