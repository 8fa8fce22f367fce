#include "interference.hpp"

#include <algorithm>
#include <limits>

namespace cosched::policy {

double SlowdownModel::predict_group(JobId i, const std::vector<JobId>& others) const {
  // Our choice: excesses add (1 + Σ (ŝ(i|j) − 1)), the inverse of how InterferenceMatrix::add shares a
  // group sample among its partners.
  double s = 1;
  for (JobId j : others) {
    if (j != i) s += predict(i, j) - 1;
  }
  return s;
}

void InterferenceMatrix::add(JobId i, const std::vector<JobId>& partners, double s, double at) {
  if (partners.empty() || !(s > 0)) return;
  // Several partners (SMT4): the excess is shared in proportion to what the matrix predicts each partner
  // inflicts on i (equally while it predicts the same for all), so that the pairs seen in different company
  // separate over time.
  std::vector<double> weight(partners.size(), 1.0);
  double total = static_cast<double>(partners.size());
  if (partners.size() > 1) {
    total = 0;
    for (std::size_t k = 0; k < partners.size(); ++k) {
      weight[k] = std::max(predict(i, partners[k]) - 1, 0.0) + 1e-3;
      total += weight[k];
    }
  }
  for (std::size_t k = 0; k < partners.size(); ++k) {
    const JobId j = partners[k];
    if (j == i) continue;
    const double share = 1 + (s - 1) * weight[k] / total;
    Entry& e = entries_[{i, j}];
    const bool fresh = e.samples == 0 || at - e.at > settings_.stale_s;
    e.slowdown = fresh ? share : settings_.alpha * share + (1 - settings_.alpha) * e.slowdown;
    e.samples = fresh ? 1 : e.samples + 1;
    e.at = at;
  }
  now_ = std::max(now_, at);
  means_.clear();
}

const InterferenceMatrix::Entry* InterferenceMatrix::find(JobId i, JobId j) const {
  auto it = entries_.find({i, j});
  return it == entries_.end() ? nullptr : &it->second;
}

bool InterferenceMatrix::seen(JobId i, JobId j, double now) const {
  const Entry* a = find(i, j);
  const Entry* b = find(j, i);
  return a != nullptr && b != nullptr && now - a->at <= settings_.stale_s && now - b->at <= settings_.stale_s;
}

double InterferenceMatrix::mean_excess(JobId id, bool as_victim) const {
  if (means_.empty() && !entries_.empty()) {
    std::map<JobId, std::pair<double, int>> victim;
    std::map<JobId, std::pair<double, int>> culprit;
    for (const auto& [key, e] : entries_) {
      if (now_ - e.at > settings_.stale_s) continue;
      auto& v = victim[key.first];
      v.first += e.slowdown - 1;
      ++v.second;
      auto& c = culprit[key.second];
      c.first += e.slowdown - 1;
      ++c.second;
    }
    for (const auto& [k, v] : victim) means_[k].suffers = v.first / v.second;
    for (const auto& [k, c] : culprit) means_[k].inflicts = c.first / c.second;
    means_[std::numeric_limits<JobId>::min()];  // computed, even when every entry is stale
  }
  auto it = means_.find(id);
  if (it == means_.end()) return 0.0;
  return as_victim ? it->second.suffers : it->second.inflicts;
}

double InterferenceMatrix::predict(JobId i, JobId j) const {
  const Entry* e = find(i, j);
  if (e != nullptr && now_ - e->at <= settings_.stale_s) return e->slowdown;
  return 1 + (mean_excess(i, true) + mean_excess(j, false)) / 2;
}

void InterferenceMatrix::forget(JobId id) {
  means_.clear();
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = it->first.first == id || it->first.second == id ? entries_.erase(it) : std::next(it);
  }
}

bool Explorer::due() {
  ++stats_.quanta;
  if (every_ <= 0) return false;
  if (++since_ < every_) return false;
  since_ = 0;
  return true;
}

void Explorer::record(double extra_cost) {
  ++stats_.explored;
  stats_.predicted_cost += std::max(extra_cost, 0.0);
}

std::optional<std::pair<JobId, JobId>> cheapest_unseen(const std::vector<JobId>& ids, const InterferenceMatrix& m,
                                                       double now) {
  std::optional<std::pair<JobId, JobId>> best;
  double best_cost = std::numeric_limits<double>::infinity();
  for (std::size_t a = 0; a < ids.size(); ++a) {
    for (std::size_t b = a + 1; b < ids.size(); ++b) {
      if (m.seen(ids[a], ids[b], now)) continue;
      const double c = m.pair_cost(ids[a], ids[b]);
      if (c < best_cost) {
        best_cost = c;
        best = std::pair{ids[a], ids[b]};
      }
    }
  }
  return best;
}

}  // namespace cosched::policy
