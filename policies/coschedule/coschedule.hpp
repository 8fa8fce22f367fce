// Contention- and SMT-aware co-scheduling (Feliu, "Contention-Aware Scheduling for SMT Multicores", PhD
// thesis, Universitat Politècnica de València, 2017), applied to jobs as its §8.2 proposes: its processes
// become cosched jobs, its IPC becomes a progress rate where there is no PMU (progress.hpp). Four policies
// share this class; each quantum it selects the jobs that run (time sharing: the others are stopped) and
// groups them into co-runners (Decision::co_schedule: SMT siblings of one core, or adjacent cores without SMT;
// the daemon's placement puts each group there).
//
//   bas        Ch. 5: self-reliant selection (Algorithm 5: OATR, queue head always selected, bandwidth
//              fitness) and dynamic pairing on cores (Algorithm 6: highest with lowest); 200 ms quanta.
//   fair       Ch. 6, Algorithm 7: estimation quanta for expired rates alone; otherwise jobs more than 5 %
//              below the average progress get whole cores, then lowest progress first; Algorithm 6 pairing.
//   perf-fair  Algorithm 8: estimation quanta of 100 ms; otherwise the fittest (OATR) among the jobs whose
//              Progress + 1 < MaxP, then among all; 200 ms quanta; Algorithm 6 pairing.
//   symbiotic  Ch. 7: groups by minimum-weight perfect matching on predicted slowdowns (matching.hpp), the
//              prediction being the interference matrix learned online (interference.hpp), with bounded
//              exploration of unseen pairs; 100 ms quanta (§7.3).
//
// A job takes one context per core, on min(request, cores) cores (our choice: the thesis's unit is one
// thread per context, and a job with two threads on one core could share that core with nobody). Groups hold
// at most threads_per_core jobs; without SMT, pairs on adjacent cores (the mapping of "the same core").
// Every job is in the list; the jobs that ran move to its tail each quantum (Algorithm 2 line 3, which
// Algorithms 5-8 reuse). Every policy admits every job (time sharing, as gang).
// docs/policies.md, "Co-scheduling", lists the parameters and every choice the thesis leaves open.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "interference.hpp"
#include "policies/param_spec.hpp"
#include "policies/policy.hpp"
#include "progress.hpp"
#include "smt_select.hpp"

namespace cosched::policy {

class Coschedule final : public TabledPolicy<Coschedule> {
 public:
  enum class Mode { bas, fair, perf_fair, symbiotic };
  explicit Coschedule(Mode mode);

  [[nodiscard]] std::string_view name() const override;
  [[nodiscard]] std::unique_ptr<Policy> clone() const override { return std::make_unique<Coschedule>(*this); }
  Decision decide(const Snapshot& s) override;
  static const ParamTable<Coschedule>& param_table();
  void forget(JobId id) override;
  [[nodiscard]] std::optional<PairsReport> pairs() const override;
  [[nodiscard]] std::optional<double> time_quantum_s() const override { return quantum_s_; }

  // The thesis's heavy-sharing threshold on main memory (§6.1.2: 3.5 transactions/µs), per thread.
  static constexpr double kHeavyTrPerUs = 3.5;
  // Without bandwidth samples: a job whose partners are slowed by more than this on average is heavy-sharing
  // (our choice: Figure 6.3's "less than 5 %" is the no-interference class).
  static constexpr double kHeavyInflicted = 0.05;

 private:
  enum class Pairing { blossom, extremes, list, random };
  struct Geometry {
    int cores = 1;
    int threads_per_core = 1;
    int contexts = 1;
  };
  struct Plan {
    std::vector<JobId> run;                    // selected, in selection order
    std::vector<std::vector<JobId>> groups;    // co-runners (whole-core jobs alone)
    std::vector<JobId> estimating;             // jobs whose rate alone this quantum measures
    std::map<JobId, std::string> why;
    bool estimation = false;
    double length = 0.2;                       // this quantum's length, seconds
  };

  void learn(const Snapshot& s);
  void close_quantum();
  Plan make_plan(const Snapshot& s, const Geometry& g);
  std::vector<JobId> force_unseen_pair(const Snapshot& s, const std::vector<Candidate>& list, const Geometry& g,
                                       const std::map<JobId, int>& width, std::vector<Pick>& picks);
  [[nodiscard]] std::vector<Candidate> candidates(const Snapshot& s, const Geometry& g) const;
  std::vector<Pick> select(const Geometry& g, const std::vector<Candidate>& list, Plan& plan);
  std::vector<Pick> select_symbiotic(const std::vector<Candidate>& list, const Geometry& g,
                                     const std::vector<JobId>& alone);
  std::vector<std::vector<JobId>> group(const std::vector<Candidate>& shared, const std::vector<JobId>& whole,
                                        int whole_cores, const Geometry& g, const std::vector<JobId>& forced);
  [[nodiscard]] double predicted_cost(const std::vector<std::vector<JobId>>& groups) const;
  [[nodiscard]] bool fits(const std::vector<std::vector<JobId>>& groups, const std::map<JobId, int>& width,
                          const Geometry& g) const;
  [[nodiscard]] Decision build(const Snapshot& s, const Geometry& g) const;
  [[nodiscard]] std::string sample_text(JobId id) const;

  Mode mode_;
  double quantum_s_;
  double estimation_quantum_s_;
  double fair_gap_ = 0.05;
  Pairing pairing_;
  std::uint64_t seed_ = 1;
  std::uint64_t rng_ = 1;
  ProgressTracker tracker_;
  InterferenceMatrix matrix_;
  Explorer explorer_;
  std::vector<JobId> list_;   // the queue, head first
  Plan current_;
  bool last_was_estimation_ = false;  // the quantum before current_ was an estimation quantum
  bool fresh_plan_ = false;           // this decide() made current_ (reasons are given then only)
  double elected_at_ = -std::numeric_limits<double>::infinity();
  // Jobs whose estimation quantum gave no rate alone (no sample: iterations longer than the quantum, or no
  // rate source): not estimated again for this many of their scheduled quanta (our choice: close_quanta),
  // so that one unmeasurable job cannot hold every quantum.
  std::map<JobId, int> cooldown_;
};

}  // namespace cosched::policy
