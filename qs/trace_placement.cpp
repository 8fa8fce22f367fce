#include "qs/trace_placement.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <tuple>

namespace cosched::results {

namespace {

// A bound on trace rows, so that a corrupt CPU number or request cannot exhaust memory; pieces beyond it
// are dropped (far past any machine cosched targets).
constexpr int kMaxRows = 65536;

// The busy intervals of one row, kept disjoint and ordered by start so that a query costs O(log n).
class RowTimeline {
 public:
  [[nodiscard]] bool free_over(double t0, double t1) const {
    auto next = busy_.lower_bound(t0);  // first interval starting at or after t0
    if (next != busy_.end() && next->first < t1) return false;
    if (next == busy_.begin()) return true;
    return std::prev(next)->second <= t0;  // the one starting before t0 must end by then
  }
  void take(double t0, double t1) { busy_[t0] = t1; }

 private:
  std::map<double, double> busy_;
};

struct Request {
  std::size_t job_index;
  std::size_t segment_index;
  const CpuSegment* segment;
};

bool drawable(const CpuSegment& s) { return std::isfinite(s.t0) && std::isfinite(s.t1) && s.t1 > s.t0; }

class Placer {
 public:
  explicit Placer(int machine_rows) : rows_(static_cast<std::size_t>(machine_rows)), machine_(machine_rows) {}

  // Rule 1, falling back to rule 3 when the named row is taken.
  void place_named(std::size_t job, const CpuSegment& s) {
    for (int cpu : s.cpu_list) {
      if (cpu < 0 || cpu >= kMaxRows) continue;
      auto& row = rows_[static_cast<std::size_t>(cpu)];
      if (row.free_over(s.t0, s.t1)) {
        put(job, cpu, s);
      } else {
        put(job, first_free(machine_, s), s);
      }
    }
  }

  // Rule 2, falling back to rule 3 for the CPUs the machine has no room for. One pass over the rows (machine
  // rows, then existing oversubscribed ones), then new rows: linear even for an absurd request.
  void place_first_fit(std::size_t job, const CpuSegment& s) {
    int wanted = s.cpus;
    for (std::size_t r = 0; r < rows_.size() && wanted > 0; ++r) {
      if (rows_[r].free_over(s.t0, s.t1)) {
        put(job, static_cast<int>(r), s);
        --wanted;
      }
    }
    for (; wanted > 0 && rows_.size() < static_cast<std::size_t>(kMaxRows); --wanted) {
      rows_.emplace_back();
      put(job, static_cast<int>(rows_.size() - 1), s);
    }
  }

  Placement finish() && {
    Placement p;
    p.machine_rows = machine_;
    p.rows = static_cast<int>(rows_.size());
    p.pieces = std::move(pieces_);
    std::stable_sort(p.pieces.begin(), p.pieces.end(), [](const PlacedPiece& a, const PlacedPiece& b) {
      return std::tie(a.t0, a.row) < std::tie(b.t0, b.row);
    });
    return p;
  }

 private:
  // The lowest row >= from that is free over the segment, adding an oversubscribed row when none is.
  int first_free(int from, const CpuSegment& s) {
    for (std::size_t r = static_cast<std::size_t>(from); r < rows_.size(); ++r) {
      if (rows_[r].free_over(s.t0, s.t1)) return static_cast<int>(r);
    }
    if (rows_.size() >= static_cast<std::size_t>(kMaxRows)) return -1;
    rows_.emplace_back();
    return static_cast<int>(rows_.size() - 1);
  }

  void put(std::size_t job, int row, const CpuSegment& s) {
    if (row < 0) return;
    rows_[static_cast<std::size_t>(row)].take(s.t0, s.t1);
    pieces_.push_back({job, row, s.t0, s.t1});
  }

  std::vector<RowTimeline> rows_;
  int machine_;
  std::vector<PlacedPiece> pieces_;
};

}  // namespace

Placement place_on_cpus(const Run& run) {
  int machine_rows = std::clamp(run.machine_cpus, 1, kMaxRows);
  std::vector<Request> named;
  std::vector<Request> unnamed;
  for (std::size_t j = 0; j < run.jobs.size(); ++j) {
    const auto& segments = run.jobs[j].allocation;
    for (std::size_t k = 0; k < segments.size(); ++k) {
      const CpuSegment& s = segments[k];
      if (!drawable(s)) continue;
      if (!s.cpu_list.empty()) {
        for (int cpu : s.cpu_list) {
          if (cpu < kMaxRows) machine_rows = std::max(machine_rows, cpu + 1);
        }
        named.push_back({j, k, &s});
      } else if (s.cpus > 0) {
        unnamed.push_back({j, k, &s});
      }
    }
  }
  auto by_time = [](const Request& a, const Request& b) {
    return std::tie(a.segment->t0, a.job_index, a.segment_index) <
           std::tie(b.segment->t0, b.job_index, b.segment_index);
  };
  std::stable_sort(named.begin(), named.end(), by_time);
  std::stable_sort(unnamed.begin(), unnamed.end(), by_time);

  Placer placer(machine_rows);
  for (const auto& r : named) placer.place_named(r.job_index, *r.segment);
  for (const auto& r : unnamed) placer.place_first_fit(r.job_index, *r.segment);
  return std::move(placer).finish();
}

std::size_t trace_pieces(const Run& run) {
  std::size_t pieces = 0;
  for (const JobRecord& j : run.jobs) {
    for (const CpuSegment& s : j.allocation) {
      if (!drawable(s)) continue;
      pieces += !s.cpu_list.empty() ? s.cpu_list.size() : static_cast<std::size_t>(std::max(s.cpus, 0));
    }
  }
  return pieces;
}

}  // namespace cosched::results
