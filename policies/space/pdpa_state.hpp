// PDPA's per-job state machine (Corbalan, Martorell, Labarta, TPDS 2005, §4.2): what PDPA remembers about one
// job and the pure transition taken when that job reports its performance. Kept apart from pdpa.cpp (which
// orders jobs, hands out free CPUs and answers the multiprogramming-level question) so that every transition
// can be tested on its own.
#pragma once

#include <cstdint>
#include <string>

#include "policies/snapshot.hpp"

namespace cosched::policy {

// §4.2, Fig. 2. The names are the ones shown in status and in the decision log.
enum class PdpaState { no_ref, inc, dec, stable };
const char* to_string(PdpaState s) noexcept;

// "1 CPU", "3 CPUs": how the decision log writes an allocation.
std::string cpus_text(int n);

// The tunables of §4.2 plus our answers to what the paper leaves open (docs/policies.md, "PDPA").
struct PdpaParams {
  double target_eff = 0.7;    // below it the allocation shrinks (§4.2.1, §4.2.3)
  double high_eff = 0.9;      // above it the allocation may grow (§4.2.1, §4.2.2)
  int step = 1;               // CPUs added/removed per transition; scaled to the machine by default_step()
  // §4.2.4 leaves ping-pong control to "the system". Ours: a STABLE job leaves STABLE on its own measurements
  // only when its efficiency moved more than `stable_band` away from the value it was stable at, and at most
  // `max_stable_exits` times in its life. Parameter changes by the operator are not limited.
  double stable_band = 0.1;
  int max_stable_exits = 3;
  // §4.3 and §5: the multiprogramming level is decided by PDPA; §5 runs it over a "default multiprogramming
  // level" of four. min_ml = that floor (0: the pure §4.3 rule), max_ml = a hard cap (0: none).
  int min_ml = 0;
  int max_ml = 0;
  // Not in the paper (docs/policies.md, "PDPA: departures from the paper"). A job that has not reported
  // within a short, bounded time counts as settled at an equal share: it is "unmeasured", never holds back
  // admission and, while jobs wait, holds no more than its equal share. The bound: unmeasured_after_s after
  // its arrival while its SelfAnalyzer has found no period (one long region, measurement off), else
  // unmeasured_iterations of its own iterations after the period was found (and at least unmeasured_after_s).
  // 1 s and 10 iterations, our choice: a baseline and a first report take 6-8 iterations on the codes
  // measured here, and 1 s of a job's life is what a queue can afford to wait on an unknown.
  double unmeasured_after_s = 1;
  int unmeasured_iterations = 10;
  // Work conservation: CPUs nobody holds are lent to running jobs below their request (unmeasured ones
  // first, then by measured efficiency) and taken back when a job arrives. 1 = the paper's strict PDPA,
  // which keeps free CPUs idle until a new job or an INC transition takes them.
  int strict = 0;
  // Not in the paper, which assumes exact measurements: a report whose iteration times spread more than this
  // (Perf::spread, (max − min) / median of the window) is not acted upon; PDPA waits for the next one. On a
  // shared machine a single perturbed window otherwise sends a scalable job to DEC for good.
  double max_spread = 0.3;
  // §4.2: target_eff is set by the administrator, or "alternatively, it is dynamically set depending on the
  // load of the system"; the paper gives no rule. Ours, with load_target = 1: the target rises with the
  // share of waiting jobs, queued / running (Snapshot::queued, as the queuing system reports it), at most
  // halfway to high_eff, so a STABLE band remains:
  //   target = target_eff + (high_eff - target_eff) / 2 * min(1, queued / running)
  // With jobs waiting, a CPU a running job uses inefficiently is worth more to them; with none waiting, the
  // administrator's target applies. 0 (default): the fixed target of the paper's experiments (§5).
  int load_target = 0;
};

// The target efficiency in force (load_target above); `p.target_eff` when load_target is 0.
double effective_target_eff(const PdpaParams& p, int queued, int running) noexcept;

// The default step. §4.2 makes step a parameter without giving a value; our choice scales it with the
// machine, max(1, round(cpus / 15)), so a 2-CPU box moves one CPU at a time and a 60-CPU machine four.
int default_step(int cpus) noexcept;

// One measurement point: the allocation a report was taken with and what the job achieved.
struct PdpaPoint {
  int cpus = 0;  // 0 = no point
  double speedup = 0;
  double efficiency = 0;
  double iteration_s = 0;  // 0 = not measured
};

// §4.1: "It remembers the last processor allocations different from the current one and the efficiency
// achieved with them."
struct PdpaJobMemory {
  PdpaState state = PdpaState::no_ref;
  std::uint64_t last_seq = 0;     // Perf::seq of the last report acted on (or skipped as stale)
  PdpaPoint previous;             // the measurement taken before the last allocation change
  int added = 0;                  // CPUs granted by the last INC transition; 0 = INC still waiting for CPUs
  double stable_efficiency = -1;  // efficiency the job was STABLE at; -1 = take it from the next report
  int stable_exits = 0;           // STABLE→INC/DEC moves caused by the job's own measurements
  std::uint64_t noisy_seq = 0;    // the last report skipped for its spread (PdpaParams::max_spread)
  int noisy_in_a_row = 0;         // consecutive reports skipped so; at kMaxNoisySkips the next is used anyway
  // §4.1 "the last processor allocations ... and the efficiency achieved with them": the latest point per
  // allocation, several of them (cpus 0 = empty). Used to keep a job from claiming again an allocation it
  // was already measured to waste (pdpa_state.cpp, held_back_by_history).
  PdpaPoint seen[4];
  bool unmeasured = false;        // no report within its bound (unmeasured_after_s, unmeasured_iterations)
  int lent = 0;                   // CPUs of its allocation lent by work conservation (reclaimed on arrivals)
};

// A remembered allocation larger than `cpus` at which the job's efficiency was below target_eff (it would
// waste more CPUs), or nullptr. Holds back INC claims and work-conserving loans (pdpa_state.cpp).
const PdpaPoint* held_back_by_history(const PdpaJobMemory& m, int cpus, const PdpaParams& p);

// Whether a job holding `cpus` would run faster with more (work conservation lends only to jobs that do,
// pdpa_share.cpp): false when its speedup at a larger allocation, the report `perf` or a remembered point, is
// at most kLoanGain above its speedup at `cpus` (1 at one CPU, by definition; else the report or a remembered
// point at `cpus`). True when either side is unknown. Beyond the paper: a job that slows down with more
// threads (tasks too fine to scale) holds a lent CPU only to waste it, and was lent its DEC step straight back.
bool gains_from_more(const PdpaJobMemory& m, int cpus, const Perf& perf) noexcept;
// Our choice: a gain within measurement noise (the spread PDPA accepts, max_spread 0.3, is a range; 5 % is
// what a quiet machine shows between windows) is no gain.
inline constexpr double kLoanGain = 0.05;

// The label status and the decision log show: the state, or UNMEASURED for a NO_REF job past its deadline.
const char* state_label(const PdpaJobMemory& m) noexcept;

// A job whose every report is noisy (a noisy baseline stays in every report's spread) is still judged: after
// this many skipped reports in a row, PDPA acts on the next one whatever its spread.
inline constexpr int kMaxNoisySkips = 5;

// What a report (or a parameter change) does to one job.
struct PdpaStep {
  PdpaJobMemory next;  // memory after the transition (next.added is fixed by the caller once CPUs are granted)
  int cpus = 1;        // allocation after any decrease
  int grow = 0;        // extra CPUs wanted (INC); the caller grants min(grow, free, request - cpus)
  std::string reason;  // empty when nothing changes
};

// §4.2.1–§4.2.4: the transition for a new report `perf` of a job holding `cpus` CPUs out of `request`.
PdpaStep pdpa_on_report(const PdpaJobMemory& m, int cpus, int request, const Perf& perf, const PdpaParams& p);

// §4.2.4: "If the policy parameters are dynamically changed, PDPA could change the state of an application
// from STABLE to either INC or DEC". Re-classifies a STABLE job by its latest efficiency under the new
// thresholds; any other state is returned unchanged (its next report sees the new values anyway).
PdpaStep pdpa_on_param_change(const PdpaJobMemory& m, int cpus, int request, const Perf& perf,
                              const PdpaParams& p);

}  // namespace cosched::policy
