// PDPA, the Performance-Driven Processor Allocation policy (Corbalan, Martorell, Labarta, IEEE TPDS 16(7),
// 2005, §4): a per-job search for the largest allocation that keeps the measured efficiency above
// target_eff (§4.1–§4.2, state machine in pdpa_state.hpp), coordinated with a multiprogramming-level policy
// that tells the queuing system when a new job may start (§4.3, pdpa_ml.cpp).
//
// When it acts (§4.1 "activated each time a new application arrives, finishes, or informs about its
// performance"): arrival, departure, report and param_change events evaluate every job whose Perf::seq is
// new (each seq at most once); quantum, timer and query events keep every allocation and only answer
// may_start. Interpretation choices are listed in docs/policies.md, "PDPA".
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "pdpa_share.hpp"
#include "pdpa_state.hpp"
#include "policies/policy.hpp"
#include "policies/queue_sharing.hpp"

namespace cosched::policy {

// §4.3 input: one running job after this decision.
struct PdpaRunningJob {
  JobId id = 0;
  int request = 1;
  int cpus = 1;
  PdpaState state = PdpaState::no_ref;
  bool unmeasured = false;  // past its reporting deadline: never holds back admission
  int cap = 0;              // its equal share while jobs wait (pdpa_share_caps); 0: none
};

class Pdpa final : public TabledPolicy<Pdpa> {
 public:
  // The machine only scales the default step (default_step()).
  explicit Pdpa(const Machine& machine);

  [[nodiscard]] std::string_view name() const override { return "pdpa"; }
  [[nodiscard]] std::unique_ptr<Policy> clone() const override { return std::make_unique<Pdpa>(*this); }
  [[nodiscard]] bool uses_speedup() const override { return true; }  // §4.2: efficiency drives every state
  // No check for a job whose waiting-time efficiency at its CPUs is below target_eff: its true efficiency is no
  // higher (work inflation only lowers it), so PDPA decreases it whatever the check would find.
  [[nodiscard]] bool speedup_check_matters(const JobView& j) const override;
  Decision decide(const Snapshot& s) override;
  static const ParamTable<Pdpa>& param_table();  // pdpa_params.cpp
  void forget(JobId id) override { memory_.erase(id); }

  [[nodiscard]] const PdpaParams& parameters() const { return p_; }
  // What PDPA remembers about a job, or nullptr if it never saw it (for status and tests).
  [[nodiscard]] const PdpaJobMemory* memory_of(JobId id) const;

 private:
  // decide()'s steps, in order (pdpa.cpp); a Round is one decision's working state.
  struct Round;
  PdpaParams params_in_force(const Snapshot& s);
  void drop_departed(const Snapshot& s);
  static void first_allocations(Round& r);
  void judge_reports(Round& r);
  static void grow_inc(Round& r);
  static void fit_machine(Round& r);
  Decision build_decision(Round& r, double deadline);

  PdpaParams p_;
  QueueSharing sharing_;  // off under strict=1 (the paper's PDPA)
  std::unordered_map<JobId, PdpaJobMemory> memory_;
  bool thresholds_changed_ = false;  // target_eff/high_eff changed since the last active event (§4.2.4)
  double effective_target_ = -1;     // the target_eff the last decision used (load_target moves it)
  // A Round's vectors, kept from one decision to the next: cosched-sim makes millions of decisions.
  std::vector<PdpaWork> work_;
  std::vector<bool> reported_;
  std::vector<PdpaRunningJob> running_;
};

struct MayStart {
  bool ok = false;
  std::string reason;
};

// §4.3 multiprogramming level: a new job may start when CPUs are free and no running job may still claim
// them (all STABLE, DEC, or at their request or their equal share while jobs wait), or when some running job
// shows bad performance (DEC). `starting` jobs, started by the queuing system but not registered yet
// (Snapshot::starting), count as running, settled, and holding one of the free CPUs each. Without `explain`
// (Snapshot::explain) the reason is left empty.
MayStart pdpa_may_start(const std::vector<PdpaRunningJob>& jobs, int machine_cpus, const PdpaParams& p,
                        int starting = 0, bool explain = true);

}  // namespace cosched::policy
