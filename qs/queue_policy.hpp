// Which queued job starts next, and whether one may start now: the queuing-system rules shared by qsubmit
// (real runs) and cosched-sim (simulated runs), so both replay a workload the same way.
//
// Selection (PDPA paper §3.2: the QS decides *which* job): FCFS by default, or shortest-request-first.
// Admission (§4.3: the RM decides *when*): either the RM's dynamic multiprogramming level (Decision::may_start)
// or a fixed level (--ml N) for policies that have none, as in the paper's evaluation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cosched::qs {

enum class Selection { fcfs, shortest_request };

inline std::optional<Selection> parse_selection(std::string_view s) {
  if (s == "fcfs") return Selection::fcfs;
  if (s == "sjf" || s == "shortest-request") return Selection::shortest_request;
  return std::nullopt;
}

struct QueuedJob {
  std::int64_t id = 0;
  double submit = 0;
  int request = 1;
};

// Index into `queue` (in submit order) of the job to start next; -1 when empty. Ties: earlier submit,
// then lower id.
inline int select_next(const std::vector<QueuedJob>& queue, Selection sel) {
  int best = -1;
  for (int i = 0; i < static_cast<int>(queue.size()); ++i) {
    if (best < 0) {
      best = i;
      continue;
    }
    const auto& a = queue[static_cast<std::size_t>(i)];
    const auto& b = queue[static_cast<std::size_t>(best)];
    bool better = sel == Selection::shortest_request
                      ? (a.request < b.request || (a.request == b.request && (a.submit < b.submit || (a.submit == b.submit && a.id < b.id))))
                      : (a.submit < b.submit || (a.submit == b.submit && a.id < b.id));
    if (better) best = i;
  }
  return best;
}

// The admission rule. fixed_ml > 0: start while fewer than fixed_ml jobs run. fixed_ml == 0: ask the RM
// (rm_may_start), except that an empty machine always accepts a job (nothing to wait for).
inline bool may_start(int running, int fixed_ml, bool rm_may_start) {
  if (fixed_ml > 0) return running < fixed_ml;
  return running == 0 || rm_may_start;
}

}  // namespace cosched::qs
