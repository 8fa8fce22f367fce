// Progress without counters: each job's rate alone and its accumulated progress (Feliu, "Contention-Aware
// Scheduling for SMT Multicores", PhD thesis 2017, §6.1-6.2), with a progress rate (work per second:
// iterations, regions or app-reported work; IPC where a PMU gives it) in place of IPC.
//
//   Progress = Σ_quanta rate_co-run / rate_alone                                   (eq. 6.1)
//
// rate_alone is sampled in a low-contention quantum the policy arranges (the job alone in its group, the
// other groups light-sharing: §6.1.2) and is valid for 40 scheduled quanta; it is "close to expire" at 20
// (§6.2.4: "fourty 200 ms quanta (n = 40)" and "half the maximum number of quanta between estimates").
// A saturating counter per job counts the quanta in which it was scheduled (§6.2).
//
// Our choices, where the thesis has fixed 200 ms quanta and single-threaded processes:
//   - progress is counted in base quanta of alone work: a sample of `seconds` adds
//     min(rate / alone, 1) × seconds / base_quantum, so that a whole base quantum (200 ms) alone adds 1, as
//     Algorithm 8's "Progress(P_i) + 1 < MaxP" assumes, whatever the RM's sampling interval (100 ms);
//   - the ratio is capped at 1 (the most a quantum can add, §6.3.2), so a noisy alone rate cannot make a job
//     look ahead of the others;
//   - the alone rate is the mean of the alone samples taken during one estimation (a quantum gives two RM
//     samples); an estimate taken with another source, or at another thread count, is no estimate.
// Pure: no clock; the policy passes every sample and says which jobs it scheduled.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "policies/snapshot.hpp"

namespace cosched::policy {

struct ProgressSettings {
  int expire_quanta = 40;      // §6.2.4: n = 40 scheduled quanta
  int close_quanta = 20;       // §6.2.4: "close to expire" at half of n
  double base_quantum_s = 0.2; // one unit of progress: a base quantum of alone work (§6.5: 200 ms quanta)
};

class ProgressTracker {
 public:
  explicit ProgressTracker(ProgressSettings settings = {}) : settings_(settings) {}

  struct JobProgress {
    double alone = 0;            // rate alone (per second, in `source`'s unit); 0: none yet
    std::string source;          // the source of `alone`
    int threads = 0;             // the thread count of `alone`
    int alone_samples = 0;       // samples behind `alone`
    int since_estimate = 0;      // scheduled quanta since `alone` was measured (saturates at expire_quanta)
    double progress = 0;         // eq. 6.1, in base quanta of alone work
    double last_ratio = -1;      // the latest rate / alone, -1 none
    std::uint64_t seq = 0;       // the latest sample consumed
    bool estimating = false;     // the policy arranged a low-contention quantum for it (begin_estimate)
    int round_samples = 0;       // alone samples taken in the current estimation
  };

  enum class Use {
    stale,           // already seen (same seq)
    alone_estimate,  // taken as (part of) the job's rate alone
    progress,        // turned into progress against a valid rate alone
    no_estimate,     // no valid rate alone to compare with: progress as if alone (ratio 1)
  };

  // One sample of job `id`. A sample taken alone in its group during an estimation becomes its rate alone;
  // any other adds progress. Returns what it was used for.
  Use feed(JobId id, const Rate& rate);
  // The policy arranges a low-contention quantum for the job: its next alone samples are its rate alone.
  void begin_estimate(JobId id);
  // The estimation quantum is over (the policy rotated): later alone samples are ordinary progress.
  void end_estimate(JobId id);
  // The job was scheduled for one more quantum (the saturating counter of §6.2).
  void scheduled(JobId id);

  // No rate alone yet, or one measured expire_quanta or more scheduled quanta ago.
  [[nodiscard]] bool expired(JobId id) const;
  [[nodiscard]] bool close_to_expire(JobId id) const;
  [[nodiscard]] double progress(JobId id) const;
  // rate alone / this rate: the job's slowdown in this sample, when both are known in the same source.
  [[nodiscard]] std::optional<double> slowdown(JobId id, const RateSample& s) const;
  [[nodiscard]] const JobProgress* find(JobId id) const;

  void forget(JobId id) { jobs_.erase(id); }
  [[nodiscard]] const ProgressSettings& settings() const { return settings_; }
  void set_settings(const ProgressSettings& s) { settings_ = s; }
  [[nodiscard]] const std::map<JobId, JobProgress>& jobs() const { return jobs_; }

 private:
  ProgressSettings settings_;
  std::map<JobId, JobProgress> jobs_;
};

}  // namespace cosched::policy
