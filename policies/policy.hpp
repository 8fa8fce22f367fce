// The policy interface: Snapshot in, Decision out (DESIGN "policies"; STYLE habits 2 and 3).
//
// A policy is a pure object. It keeps its own per-job memory (e.g. PDPA's states) as members, but it never
// reads a clock, touches a pid or a file, or uses globals: time arrives in Snapshot::now, and a policy that
// wants to be called later says so in Decision::wake_at. The daemon and cosched-sim call the very same
// objects. Nothing outside policies/registry.cpp names a concrete policy.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cosched/error.hpp"
#include "snapshot.hpp"

namespace cosched::policy {

// The policy's verdict for one job.
struct Allocation {
  JobId id = 0;
  int cpus = 1;              // >= 1 for every admitted job (run-to-completion space sharing)
  bool runnable = true;      // time-sharing policies clear it for jobs that sit out the next quantum
  std::string state;         // policy-specific label shown in status (e.g. "INC", "STABLE"), may be empty
  std::string reason;        // why, in words, when this allocation differs from the previous one
};

struct Decision {
  std::vector<Allocation> jobs;  // one entry per job of the snapshot, same order
  bool may_start = false;        // multiprogramming level: may the queuing system start a job now?
  std::string may_start_reason;
  std::optional<double> wake_at; // call me again (Event::timer) at this time, if nothing else happens
  // Groups of jobs that should share cores (SMT symbiosis); empty when the policy has no opinion.
  std::vector<std::vector<JobId>> co_schedule;

  [[nodiscard]] const Allocation* find(JobId id) const;
};

// The multiprogramming-level rule of the space-sharing policies that have none of their own (Equipartition,
// Equal_efficiency, DSS): a new job may start while it would get a CPU of its own, the jobs being started
// (Snapshot::starting) counted as running. Sets d.may_start and its reason.
void admit_while_a_cpu_is_unshared(const Snapshot& s, Decision& d);

// What a co-scheduling policy has learned (`cosched-ctl pairs`, `status --json`): its slowdown matrix, each
// job's progress and rate alone, and what exploring unseen pairs cost (docs/policies.md, "Co-scheduling").
struct PairEntry {
  JobId job = 0;            // i
  JobId with = 0;           // j
  double slowdown = 1;      // ŝ(i | j)
  int samples = 0;
  double at = 0;            // the latest sample (snapshot time base)
};
struct JobProgressEntry {
  JobId id = 0;
  double progress = 0;      // eq. 6.1, in base quanta of alone work
  double alone = 0;         // rate alone (per second, in `source`'s unit); 0: none yet
  std::string source;
  int since_estimate = 0;   // scheduled quanta since the rate alone was measured
  bool expired = true;
  double last_ratio = -1;   // the latest rate / rate alone; -1 none
};
struct PairsReport {
  std::string model;        // "learned pairs" (the counter-free matrix)
  std::vector<PairEntry> entries;
  std::vector<JobProgressEntry> jobs;
  std::uint64_t quanta = 0;         // quanta in which groups were chosen
  std::uint64_t explored = 0;       // of those, quanta that forced an unseen pair
  double exploration_cost = 0;      // Σ predicted extra slowdown of the explored quanta
  int explore_every = 0;            // exploration bound: at most one quantum in this many (0: off)
};

struct Param {
  std::string name;
  std::string value;
  std::string help;
  std::string accepts;  // the values set_param takes, in words ("[0, 10]", "0 or 1"); param_spec.hpp
};

class Policy {
 public:
  virtual ~Policy() = default;
  Policy() = default;
  Policy& operator=(const Policy&) = delete;

  [[nodiscard]] virtual std::string_view name() const = 0;

  // A copy with the same parameters and the same memory of jobs. The daemon changes parameters on a copy
  // and keeps it only when every change was accepted (set_params in registry.hpp): all or nothing.
  [[nodiscard]] virtual std::unique_ptr<Policy> clone() const = 0;

  // Called by the daemon's event loop (single-threaded) or the simulator's engine, on every Event.
  // Must return an allocation for every job in `s.jobs`, each >= 1 CPU.
  virtual Decision decide(const Snapshot& s) = 0;

  // Tunables. Default: none. set_param must reject unknown names and bad values with a clear Error and
  // leave the policy unchanged. Policies declare theirs in one table (param_spec.hpp), which gives both.
  [[nodiscard]] virtual std::vector<Param> params() const { return {}; }
  virtual Status set_param(std::string_view name, std::string_view value);

  // A job left. Default: nothing (policies that remember jobs override it to forget them).
  virtual void forget(JobId /*id*/) {}

  // The local phase of a cluster-wide policy (MemBUS's Algorithm 2): the jobs this node proposes for the next
  // quantum, for cosched-cluster's reduction (Snapshot::cluster brings the agreed order back). Must not change
  // the policy. Default: nullopt, the policy has no cluster phase (cosched-cluster then reports it).
  [[nodiscard]] virtual std::optional<std::vector<JobId>> cluster_candidates(const Snapshot& /*s*/) const {
    return std::nullopt;
  }

  // A co-scheduling policy's learned interference and progress (cosched-ctl pairs). Default: nullopt.
  [[nodiscard]] virtual std::optional<PairsReport> pairs() const { return std::nullopt; }

  // The policy's own scheduling quantum in seconds, where it has one longer than the RM's tick (the
  // bandwidth-aware policies: Antonopoulos et al.'s 200 ms, MemBUS's q). Caller: the daemon's status, which
  // states how many sensor samples each job gets per policy quantum. Default: nullopt, the policy acts on
  // the RM's quantum.
  [[nodiscard]] virtual std::optional<double> time_quantum_s() const { return std::nullopt; }

  // Whether decisions use measured speedups (Perf). Default: no. When no, jobs skip the SelfAnalyzer's
  // baseline phase (they would otherwise run below their allocation for a few iterations for nothing).
  [[nodiscard]] virtual bool uses_speedup() const { return false; }

  // Whether a decide(report) can change anything: an allocation, or the policy's own state. Default: yes.
  // A policy that says no reads no estimate (no Perf, history or analyzing flag) and decides on a report as
  // on the snapshot it had: cosched-sim then models no SelfAnalyzer or sampler for its jobs (docs/simulator.md,
  // "Estimates nothing reads"), and tests/unit/sim checks that the outcome is the same.
  [[nodiscard]] virtual bool reacts_to_reports() const { return true; }

  // cosched-sim's fast-forward of a steady rotation (docs/simulator.md, "Steady rotations"). A time-sharing
  // policy whose state, while no job comes, goes or reports, repeats up to a shift of its own clock appends
  // a key of that state with the shift left out (policies/rotation_key.hpp) and returns true: at two quantum
  // ticks with equal keys and equal snapshots it decides alike from then on. Default: false, never skipped.
  virtual bool rotation_key(std::string& key) const {
    (void)key;
    return false;
  }
  // The state after `quanta` more quantum ticks of such a rotation, with no other event: the clock-like
  // members moved on. Called only after the key recurred; `quanta` is a whole number of its turns.
  virtual void skip_rotation(std::uint64_t quanta) { (void)quanta; }

  // Caller: the daemon (and the simulator), whenever a job's estimate moves, under --baseline auto. Whether
  // the SelfAnalyzer's baseline measurement of job `j` could change a decision of this policy: it finds work
  // that grows with the CPUs, which the waiting-time efficiency cannot see (docs/selfanalyzer.md, "Two
  // estimates"). Default: uses_speedup(). A policy that knows a check cannot change its verdict says no, and
  // the job is not slowed for it.
  [[nodiscard]] virtual bool speedup_check_matters(const JobView& j) const {
    (void)j;
    return uses_speedup();
  }

 protected:
  Policy(const Policy&) = default;  // for clone() only: policies are never copied by value elsewhere
};

}  // namespace cosched::policy
