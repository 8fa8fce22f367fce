#include "placement.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <functional>
#include <tuple>

namespace cosched::rm {

namespace {

struct Slots {
  std::vector<int> load;  // threads on each position of `order` (a job's weight each)
  int cap = 1;            // most threads any CPU may carry
};

// The threads a request puts on each of its CPUs.
int weight_of(const PlaceRequest& r, int want) { return r.threads > want ? (r.threads + want - 1) / want : 1; }

// For a job with nothing kept: the first run of `need` consecutive positions it may take (`barred` false) at
// the lowest load among those, so a new job lands on a compact block instead of filling holes one by one.
int first_block(const Slots& s, int need, const std::vector<char>& barred) {
  const int n = static_cast<int>(s.load.size());
  int min_load = INT_MAX;
  for (int p = 0; p < n; ++p) {
    if (!barred[static_cast<std::size_t>(p)]) min_load = std::min(min_load, s.load[static_cast<std::size_t>(p)]);
  }
  int run = 0;
  for (int p = 0; p < n; ++p) {
    const bool free = !barred[static_cast<std::size_t>(p)] && s.load[static_cast<std::size_t>(p)] == min_load;
    run = free ? run + 1 : 0;
    if (run == need) return p - need + 1;
  }
  return -1;
}

// The positions a growing job takes, one at a time: the lowest load first (taking one changes no other
// position's load, so a load level is used up before the next), then the nearest to its kept positions, then
// the lowest. Within a level, the kept positions cut the candidates into gaps; the nearest candidate of a gap is
// its first or its last, so each gap's candidates stay one run of `cand` that shrinks from its ends, and a heap
// holds each gap's best. A pick costs O(log gaps) instead of a scan of the machine. One picker serves a whole
// placement, so its storage is allocated once.
class LevelPicker {
 public:
  // The candidates of load `level`: positions not in `mine` (kept or barred) at that load, and their gaps.
  void reset(const Slots& s, int level, const std::vector<char>& mine, const std::vector<char>& is_kept) {
    cand_.clear();
    gaps_.clear();
    heap_.clear();
    const int n = static_cast<int>(s.load.size());
    Gap g;
    for (int p = 0; p < n; ++p) {
      const auto i = static_cast<std::size_t>(p);
      if (is_kept[i]) {
        g.right = p;
        close(g);
        g = Gap{};
        g.left = p;
        g.first = static_cast<int>(cand_.size());
      } else if (!mine[i] && s.load[i] == level) {
        cand_.push_back(p);
      }
    }
    close(g);
  }
  // The position to take, or -1 when the level is used up.
  int take() {
    if (heap_.empty()) return -1;
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
    const auto [dist, p, gi] = heap_.back();
    heap_.pop_back();
    Gap& g = gaps_[static_cast<std::size_t>(gi)];
    if (p == cand_[static_cast<std::size_t>(g.first)]) {
      g.left = p;
      ++g.first;
    } else {
      g.right = p;
      --g.last;
    }
    push(gi);
    return p;
  }

 private:
  struct Gap {
    int left = -1;   // the kept position before it; -1: none
    int right = -1;  // the kept position after it; -1: none
    int first = 0;   // its candidates: cand_[first..last]
    int last = -1;
  };
  void close(Gap& g) {
    g.last = static_cast<int>(cand_.size()) - 1;
    gaps_.push_back(g);
    push(static_cast<int>(gaps_.size()) - 1);
  }
  // The gap's best candidate (distance, position) into the heap; none when it has no candidates left.
  void push(int gi) {
    const Gap& g = gaps_[static_cast<std::size_t>(gi)];
    if (g.first > g.last) return;
    const int lo = cand_[static_cast<std::size_t>(g.first)];
    const int hi = cand_[static_cast<std::size_t>(g.last)];
    if (g.left < 0 && g.right < 0) {
      heap_.emplace_back(0, lo, gi);  // nothing kept: every position is at distance 0, the lowest wins
    } else if (g.left < 0) {
      heap_.emplace_back(g.right - hi, hi, gi);
    } else if (g.right < 0 || lo - g.left <= g.right - hi) {
      heap_.emplace_back(lo - g.left, lo, gi);  // a tie goes to the lower position
    } else {
      heap_.emplace_back(g.right - hi, hi, gi);
    }
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>{});
  }
  using Entry = std::tuple<int, int, int>;  // distance, position, gap
  std::vector<int> cand_;
  std::vector<Gap> gaps_;
  std::vector<Entry> heap_;  // a min-heap
};

// The lowest load among positions not in `mine`; INT_MAX when there are none.
int lowest_load(const Slots& s, const std::vector<char>& mine) {
  int lowest = INT_MAX;
  for (std::size_t p = 0; p < s.load.size(); ++p) {
    if (!mine[p]) lowest = std::min(lowest, s.load[p]);
  }
  return lowest;
}

// Pass 2 for one request: from what it kept, take more positions until it has `want` (a compact block for a
// job that kept nothing, else the nearest at the lowest load), raising the sharing cap when rounding leaves
// none. `mine`, `is_kept` and `picker` are scratch space.
void grow(Slots& s, int want, int w, const std::vector<char>& barred, std::vector<int>& kept,
          std::vector<char>& mine, std::vector<char>& is_kept, LevelPicker& picker) {
  if (static_cast<int>(kept.size()) >= want) return;
  mine = barred;  // a position it may not take counts as taken
  std::fill(is_kept.begin(), is_kept.end(), 0);
  for (int p : kept) mine[static_cast<std::size_t>(p)] = is_kept[static_cast<std::size_t>(p)] = 1;
  if (kept.empty()) {
    int start = first_block(s, want, barred);
    if (start >= 0) {
      for (int p = start; p < start + want; ++p) {
        kept.push_back(p);
        mine[static_cast<std::size_t>(p)] = is_kept[static_cast<std::size_t>(p)] = 1;
        s.load[static_cast<std::size_t>(p)] += w;
      }
    }
  }
  while (static_cast<int>(kept.size()) < want) {
    const int level = lowest_load(s, mine);
    if (level == INT_MAX) return;  // unreachable: want never exceeds the positions it may take
    // Every position is at the cap (rounding): allow one more job on the least loaded CPUs we lack.
    if (level + w > s.cap) s.cap = level + w;
    picker.reset(s, level, mine, is_kept);
    for (int p = picker.take(); p >= 0 && static_cast<int>(kept.size()) < want; p = picker.take()) {
      kept.push_back(p);
      mine[static_cast<std::size_t>(p)] = is_kept[static_cast<std::size_t>(p)] = 1;
      s.load[static_cast<std::size_t>(p)] += w;
    }
  }
}

// What each request may take: its positions barred (outside its `allowed`; a set naming none of ours restricts
// nothing), whether any is, and the CPUs it wants within what it may take. Requests that may go anywhere
// (most) share one set that bars nothing.
struct Restrictions {
  std::vector<char> bars_nothing;
  std::vector<std::vector<char>> own_bars;        // reserved up front: `barred` points into it
  std::vector<const std::vector<char>*> barred;
  std::vector<char> is_restricted;                // some position barred
  std::vector<int> wants;
};

void restrict_requests(const std::vector<int>& order, const std::vector<PlaceRequest>& requests, Restrictions& r) {
  const int n = static_cast<int>(order.size());
  r.bars_nothing.assign(static_cast<std::size_t>(n), 0);
  r.own_bars.reserve(requests.size());
  r.barred.assign(requests.size(), &r.bars_nothing);
  r.is_restricted.assign(requests.size(), 0);
  r.wants.resize(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    int may = n;
    if (!requests[i].allowed.empty()) {
      int inside = 0;
      for (int p = 0; p < n; ++p) inside += requests[i].allowed.test(order[static_cast<std::size_t>(p)]) ? 1 : 0;
      if (inside > 0) {
        auto& bars = r.own_bars.emplace_back(static_cast<std::size_t>(n), 0);
        for (int p = 0; p < n; ++p) {
          bars[static_cast<std::size_t>(p)] = requests[i].allowed.test(order[static_cast<std::size_t>(p)]) ? 0 : 1;
        }
        r.barred[i] = &bars;
        r.is_restricted[i] = inside < n ? 1 : 0;
        may = inside;
      }
    }
    r.wants[i] = std::min(std::clamp(requests[i].count, 1, n), may);
  }
}

// Pass 1 of a group: keep current CPUs, lowest positions first, up to the new count and the sharing cap. The
// running jobs keep theirs before the jobs that resume (PlaceRequest::resuming); within each, a job of more
// threads per CPU first (a fixed team: it cannot share a CPU without a barrier waiting on it), the others in
// admission order.
void keep_current(const std::vector<std::size_t>& group, const std::vector<PlaceRequest>& requests,
                  const std::vector<int>& pos_of_cpu, const std::vector<int>& weights, const Restrictions& r,
                  Slots& s, std::vector<std::vector<int>>& kept) {
  std::vector<std::size_t> keeping = group;
  std::stable_sort(keeping.begin(), keeping.end(), [&](std::size_t a, std::size_t b) {
    if (requests[a].resuming != requests[b].resuming) return !requests[a].resuming;
    return weights[a] > weights[b];
  });
  for (std::size_t i : keeping) {
    const CpuSet& current = requests[i].current;
    for (int c = current.first(); c >= 0; c = current.next(c)) {
      if (static_cast<int>(kept[i].size()) >= r.wants[i]) break;
      if (c >= static_cast<int>(pos_of_cpu.size()) || pos_of_cpu[static_cast<std::size_t>(c)] < 0) continue;
      int p = pos_of_cpu[static_cast<std::size_t>(c)];
      const bool full = s.load[static_cast<std::size_t>(p)] + weights[i] > s.cap;
      if ((*r.barred[i])[static_cast<std::size_t>(p)] || full) continue;
      kept[i].push_back(p);
      s.load[static_cast<std::size_t>(p)] += weights[i];
    }
  }
}

}  // namespace

std::map<policy::JobId, CpuSet> place(const std::vector<int>& order, const std::vector<PlaceRequest>& requests) {
  std::map<policy::JobId, CpuSet> out;
  const int n = static_cast<int>(order.size());
  if (n == 0) return out;
  std::vector<int> pos_of_cpu(static_cast<std::size_t>(*std::max_element(order.begin(), order.end()) + 1), -1);
  for (int p = 0; p < n; ++p) pos_of_cpu[static_cast<std::size_t>(order[static_cast<std::size_t>(p)])] = p;
  Restrictions r;
  restrict_requests(order, requests, r);
  std::vector<int> weights(requests.size());
  long total = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    weights[i] = weight_of(requests[i], r.wants[i]);
    total += static_cast<long>(r.wants[i]) * weights[i];
  }
  Slots s;
  s.load.assign(static_cast<std::size_t>(n), 0);
  s.cap = static_cast<int>(std::max<long>(1, (total + n - 1) / n));

  // Requests restricted to some CPUs (a Slurm job's allocation) are placed first, both passes, then the others:
  // an unrestricted job can go anywhere, so it yields a contested CPU even one it held.
  std::vector<std::vector<int>> kept(requests.size());
  std::vector<std::size_t> restricted_first(requests.size());
  for (std::size_t i = 0; i < restricted_first.size(); ++i) restricted_first[i] = i;
  auto restricted = [&](std::size_t i) { return r.is_restricted[i] != 0; };
  const auto split = std::stable_partition(restricted_first.begin(), restricted_first.end(), restricted);
  std::vector<char> mine(static_cast<std::size_t>(n), 0);
  std::vector<char> is_kept(static_cast<std::size_t>(n), 0);
  LevelPicker picker;
  for (const auto& group : {std::vector<std::size_t>(restricted_first.begin(), split),
                            std::vector<std::size_t>(split, restricted_first.end())}) {
    keep_current(group, requests, pos_of_cpu, weights, r, s, kept);
    // Pass 2: grow. Jobs needing most go first (they need the largest compact blocks); ties keep admission
    // order.
    std::vector<std::size_t> idx = group;
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
      auto need = [&](std::size_t i) { return r.wants[i] - static_cast<int>(kept[i].size()); };
      return need(a) > need(b);
    });
    for (std::size_t i : idx) grow(s, r.wants[i], weights[i], *r.barred[i], kept[i], mine, is_kept, picker);
  }
  for (std::size_t i = 0; i < requests.size(); ++i) {
    CpuSet set;
    for (int p : kept[i]) set.set(order[static_cast<std::size_t>(p)]);
    out[requests[i].id] = set;
  }
  return out;
}

}  // namespace cosched::rm
