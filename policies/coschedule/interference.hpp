// The pairwise interference matrix, learned online: ŝ(i | j) is the slowdown of job i when it shares its
// co-schedule group with job j (SMT siblings of one core; adjacent cores where there is no SMT), measured as
// its rate alone over its rate in that company (ProgressTracker::slowdown). This is the counter-free stand-in
// for the thesis's CPI-stack model (Feliu, Ch. 7, eqs. 7.1-7.3), which predicts the same quantity from cycle
// stacks where a PMU provides them (cpi_model.hpp); both answer SlowdownModel::predict.
//
// Our choices (the thesis learns nothing online; its model is trained offline by regression):
//   - an entry is the exponentially weighted mean of its samples, weight `alpha` = 0.3 for the newest: it
//     follows phase changes within a few quanta and smooths a noisy 100 ms rate;
//   - a sample taken with several group partners (SMT4) shares the excess s − 1 among them in proportion to
//     what the matrix predicts each one inflicts (equally at first): the inverse of the additive composition
//     predict_group uses, and pairs seen in different company separate over time;
//   - an entry not refreshed for `stale_s` seconds (8 s: the thesis's 40 quanta of 200 ms, after which its
//     alone rates expire too) counts as unseen again, so exploration revisits it;
//   - an unseen pair is predicted from what is known of its two jobs: 1 + the mean of (the mean excess job i
//     suffers from anyone, the mean excess job j inflicts on anyone), each 0 when nothing is known (optimistic);
//     the mean, not the sum, so that an unseen pair of a sensitive and an aggressive job does not look worse
//     than the pair that taught us either.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "policies/snapshot.hpp"

namespace cosched::policy {

// What a scheduler asks of any slowdown predictor: the learned matrix here, the CPI-stack model with a PMU.
class SlowdownModel {
 public:
  virtual ~SlowdownModel() = default;
  // Predicted slowdown of job i when it shares its group with job j (≥ 1 in practice).
  [[nodiscard]] virtual double predict(JobId i, JobId j) const = 0;
  // Predicted slowdown of job i next to all of `others` in one group.
  [[nodiscard]] double predict_group(JobId i, const std::vector<JobId>& others) const;
};

struct InterferenceSettings {
  double alpha = 0.3;     // weight of the newest sample in an entry's mean
  double stale_s = 8.0;   // an entry older than this is unseen again
};

class InterferenceMatrix final : public SlowdownModel {
 public:
  explicit InterferenceMatrix(InterferenceSettings settings = {}) : settings_(settings) {}

  struct Entry {
    double slowdown = 1;  // ŝ(i | j)
    int samples = 0;
    double at = 0;        // when the latest sample was taken
  };

  // Job i ran at slowdown `s` with `partners` in its group during an interval that ended at `at`.
  void add(JobId i, const std::vector<JobId>& partners, double s, double at);
  [[nodiscard]] const Entry* find(JobId i, JobId j) const;
  // Seen both ways (ŝ(i|j) and ŝ(j|i)), neither stale at `now`.
  [[nodiscard]] bool seen(JobId i, JobId j, double now) const;
  [[nodiscard]] double predict(JobId i, JobId j) const override;
  // ŝ(i|j) + ŝ(j|i): the cost of running i and j together, the matching's edge weight.
  [[nodiscard]] double pair_cost(JobId i, JobId j) const { return predict(i, j) + predict(j, i); }
  // The mean excess slowdown (ŝ − 1) job `id` suffers from its partners / inflicts on them, over its fresh
  // entries; 0 when it has none.
  [[nodiscard]] double suffers(JobId id) const { return mean_excess(id, true); }
  [[nodiscard]] double inflicts(JobId id) const { return mean_excess(id, false); }
  void forget(JobId id);
  [[nodiscard]] const std::map<std::pair<JobId, JobId>, Entry>& entries() const { return entries_; }
  void set_now(double now) {
    if (now != now_) means_.clear();
    now_ = now;
  }

 private:
  [[nodiscard]] double mean_excess(JobId id, bool as_victim) const;
  InterferenceSettings settings_;
  std::map<std::pair<JobId, JobId>, Entry> entries_;  // (i, j) → ŝ(i | j)
  double now_ = 0;
  // Each job's mean excess as victim and as culprit over the fresh entries, computed in one pass when first
  // asked after a change: a matching over n jobs asks for n² predictions.
  struct Means {
    double suffers = 0;
    double inflicts = 0;
  };
  mutable std::map<JobId, Means> means_;
};

// Bounded pairing exploration: every `every` quanta at most one pair never seen (or stale) is forced into the
// schedule, the one the model predicts cheapest; its cost is what the model predicted it would lose against
// the schedule it would have chosen, in units of summed slowdown. `every` = 4 by default (our choice): at
// most a quarter of the quanta explore, and with n jobs the n(n−1)/2 pairs are all seen within 2n(n−1)
// quanta. 0 turns exploration off.
struct ExplorationStats {
  std::uint64_t quanta = 0;     // quanta in which pairs were chosen
  std::uint64_t explored = 0;   // quanta that forced an unseen pair
  double predicted_cost = 0;    // Σ over explored quanta of (forced schedule's cost − best schedule's cost)
};

class Explorer {
 public:
  explicit Explorer(int every = 4) : every_(every) {}
  // Whether this quantum may explore (counts the quantum).
  bool due();
  void record(double extra_cost);
  [[nodiscard]] const ExplorationStats& stats() const { return stats_; }
  [[nodiscard]] int every() const { return every_; }
  void set_every(int every) { every_ = every; }

 private:
  int every_;
  int since_ = 0;
  ExplorationStats stats_;
};

// The unseen pair (i < j by position in `ids`) with the lowest predicted cost, if any.
std::optional<std::pair<JobId, JobId>> cheapest_unseen(const std::vector<JobId>& ids, const InterferenceMatrix& m,
                                                       double now);

}  // namespace cosched::policy
