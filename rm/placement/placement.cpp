#include "placement.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>

namespace cosched::rm {

namespace {

struct Slots {
  std::vector<int> load;  // threads on each position of `order` (a job's weight each)
  int cap = 1;            // most threads any CPU may carry
};

// The threads a request puts on each of its CPUs.
int weight_of(const PlaceRequest& r, int want) { return r.threads > want ? (r.threads + want - 1) / want : 1; }

// Position a job of weight `w` may still take: lowest load, then nearest to its kept CPUs (dist[p]: distance
// from p to the nearest kept position; 0 everywhere when nothing is kept), then lowest position.
int pick_near(const Slots& s, int w, const std::vector<char>& mine, const std::vector<int>& dist) {
  int best = -1;
  int best_load = INT_MAX;
  int best_dist = INT_MAX;
  const int n = static_cast<int>(s.load.size());
  for (int p = 0; p < n; ++p) {
    if (mine[static_cast<std::size_t>(p)] || s.load[static_cast<std::size_t>(p)] + w > s.cap) continue;
    int load = s.load[static_cast<std::size_t>(p)];
    int d = dist[static_cast<std::size_t>(p)];
    if (load < best_load || (load == best_load && d < best_dist)) {
      best = p;
      best_load = load;
      best_dist = d;
    }
  }
  return best;
}

// dist[q] = min(dist[q], |q - p|) after p became kept: only the positions nearer to p than to any earlier
// kept position change, and they form one run on each side of p.
void keep_position(std::vector<int>& dist, int p) {
  const int n = static_cast<int>(dist.size());
  dist[static_cast<std::size_t>(p)] = 0;
  for (int q = p - 1; q >= 0 && dist[static_cast<std::size_t>(q)] > p - q; --q) dist[static_cast<std::size_t>(q)] = p - q;
  for (int q = p + 1; q < n && dist[static_cast<std::size_t>(q)] > q - p; ++q) dist[static_cast<std::size_t>(q)] = q - p;
}

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

// Pass 2 for one request: from what it kept, take more positions until it has `want` (a compact block for a
// job that kept nothing, else the nearest at the lowest load), raising the sharing cap when rounding leaves
// none. `mine` and `dist` are scratch space.
void grow(Slots& s, int want, int w, const std::vector<char>& barred, std::vector<int>& kept,
          std::vector<char>& mine, std::vector<int>& dist) {
  if (static_cast<int>(kept.size()) >= want) return;
  mine = barred;  // a position it may not take counts as taken
  for (int p : kept) mine[static_cast<std::size_t>(p)] = 1;
  if (kept.empty()) {
    int start = first_block(s, want, barred);
    if (start >= 0) {
      for (int p = start; p < start + want; ++p) {
        kept.push_back(p);
        mine[static_cast<std::size_t>(p)] = 1;
        s.load[static_cast<std::size_t>(p)] += w;
      }
    }
  }
  // Nothing kept: every position is at distance 0 (the lowest-load, lowest position wins).
  std::fill(dist.begin(), dist.end(), kept.empty() ? 0 : INT_MAX);
  for (int p : kept) keep_position(dist, p);
  const bool started_empty = kept.empty();
  while (static_cast<int>(kept.size()) < want) {
    int p = pick_near(s, w, mine, dist);
    if (p < 0) {
      // Every position is at the cap (rounding): allow one more job on the least loaded CPU we lack.
      ++s.cap;
      continue;
    }
    kept.push_back(p);
    mine[static_cast<std::size_t>(p)] = 1;
    s.load[static_cast<std::size_t>(p)] += w;
    if (started_empty && kept.size() == 1) std::fill(dist.begin(), dist.end(), INT_MAX);
    keep_position(dist, p);
  }
}

}  // namespace

std::map<policy::JobId, CpuSet> place(const std::vector<int>& order, const std::vector<PlaceRequest>& requests) {
  std::map<policy::JobId, CpuSet> out;
  const int n = static_cast<int>(order.size());
  if (n == 0) return out;
  std::vector<int> pos_of_cpu(static_cast<std::size_t>(*std::max_element(order.begin(), order.end()) + 1), -1);
  for (int p = 0; p < n; ++p) pos_of_cpu[static_cast<std::size_t>(order[static_cast<std::size_t>(p)])] = p;

  // Positions each request may not take (outside its `allowed`); a set naming none of ours restricts nothing.
  std::vector<std::vector<char>> barred(requests.size(), std::vector<char>(static_cast<std::size_t>(n), 0));
  std::vector<int> wants(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    int may = n;
    if (!requests[i].allowed.empty()) {
      int inside = 0;
      for (int p = 0; p < n; ++p) inside += requests[i].allowed.test(order[static_cast<std::size_t>(p)]) ? 1 : 0;
      if (inside > 0) {
        for (int p = 0; p < n; ++p) {
          barred[i][static_cast<std::size_t>(p)] = requests[i].allowed.test(order[static_cast<std::size_t>(p)]) ? 0 : 1;
        }
        may = inside;
      }
    }
    wants[i] = std::min(std::clamp(requests[i].count, 1, n), may);
  }
  std::vector<int> weights(requests.size());
  long total = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    weights[i] = weight_of(requests[i], wants[i]);
    total += static_cast<long>(wants[i]) * weights[i];
  }
  Slots s;
  s.load.assign(static_cast<std::size_t>(n), 0);
  s.cap = static_cast<int>(std::max<long>(1, (total + n - 1) / n));

  // Requests restricted to some CPUs (a Slurm job's allocation) are placed first, both passes, then the others:
  // an unrestricted job can go anywhere, so it yields a contested CPU even one it held.
  std::vector<std::vector<int>> kept(requests.size());
  std::vector<std::size_t> restricted_first(requests.size());
  for (std::size_t i = 0; i < restricted_first.size(); ++i) restricted_first[i] = i;
  auto restricted = [&](std::size_t i) { return std::find(barred[i].begin(), barred[i].end(), 1) != barred[i].end(); };
  const auto split = std::stable_partition(restricted_first.begin(), restricted_first.end(), restricted);
  std::vector<char> mine(static_cast<std::size_t>(n), 0);
  std::vector<int> dist(static_cast<std::size_t>(n), 0);
  for (const auto& group : {std::vector<std::size_t>(restricted_first.begin(), split),
                            std::vector<std::size_t>(split, restricted_first.end())}) {
    // Pass 1: keep current CPUs, lowest positions first, up to the new count and the sharing cap; a job of
    // more threads per CPU first (a fixed team: it cannot share a CPU without a barrier waiting on it), the
    // others in admission order.
    std::vector<std::size_t> keeping = group;
    std::stable_sort(keeping.begin(), keeping.end(),
                     [&](std::size_t a, std::size_t b) { return weights[a] > weights[b]; });
    for (std::size_t i : keeping) {
      const CpuSet& current = requests[i].current;
      for (int c = current.first(); c >= 0; c = current.next(c)) {
        if (static_cast<int>(kept[i].size()) >= wants[i]) break;
        if (c >= static_cast<int>(pos_of_cpu.size()) || pos_of_cpu[static_cast<std::size_t>(c)] < 0) continue;
        int p = pos_of_cpu[static_cast<std::size_t>(c)];
        const bool full = s.load[static_cast<std::size_t>(p)] + weights[i] > s.cap;
        if (barred[i][static_cast<std::size_t>(p)] || full) continue;
        kept[i].push_back(p);
        s.load[static_cast<std::size_t>(p)] += weights[i];
      }
    }
    // Pass 2: grow. Jobs needing most go first (they need the largest compact blocks); ties keep admission
    // order.
    std::vector<std::size_t> idx = group;
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
      auto need = [&](std::size_t i) { return wants[i] - static_cast<int>(kept[i].size()); };
      return need(a) > need(b);
    });
    for (std::size_t i : idx) grow(s, wants[i], weights[i], barred[i], kept[i], mine, dist);
  }
  for (std::size_t i = 0; i < requests.size(); ++i) {
    CpuSet set;
    for (int p : kept[i]) set.set(order[static_cast<std::size_t>(p)]);
    out[requests[i].id] = set;
  }
  return out;
}

}  // namespace cosched::rm
