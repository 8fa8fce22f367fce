// Placement of co-scheduled groups on SMT siblings or adjacent cores (placement.hpp). Pure: topology in,
// CPU sets out.
#include <algorithm>
#include <set>

#include "placement.hpp"

namespace cosched::rm {

namespace {

struct Core {
  std::vector<int> cpus;  // its PUs (OS numbers), in topology order
  bool taken = false;
};

// Cores a group needs: its widest member with SMT (one PU of each core per member: the members are siblings),
// the sum of widths without.
int cores_needed(const GroupRequest& g, int threads_per_core) {
  int need = 0;
  for (const auto& m : g.members) {
    const int w = std::max(m.count, 1);
    need = threads_per_core > 1 ? std::max(need, w) : need + w;
  }
  return need;
}

// The lowest run of `need` adjacent free cores, else the lowest `need` free cores; empty when too few.
std::vector<std::size_t> free_cores(const std::vector<Core>& cores, int need) {
  std::size_t run = 0;
  for (std::size_t c = 0; c < cores.size(); ++c) {
    run = cores[c].taken ? 0 : run + 1;
    if (static_cast<int>(run) == need) {
      std::vector<std::size_t> v;
      for (std::size_t k = c + 1 - run; k <= c; ++k) v.push_back(k);
      return v;
    }
  }
  std::vector<std::size_t> v;
  for (std::size_t c = 0; c < cores.size() && static_cast<int>(v.size()) < need; ++c) {
    if (!cores[c].taken) v.push_back(c);
  }
  return static_cast<int>(v.size()) == need ? v : std::vector<std::size_t>{};
}

}  // namespace

GroupPlacement place_groups(const std::vector<int>& order, const std::vector<int>& core_of,
                            const std::vector<GroupRequest>& groups) {
  GroupPlacement out;
  std::vector<Core> cores;
  std::vector<int> core_index(order.size());
  // A core per run of equal core_of values (every CPU its own core when core_of is missing).
  auto core_at = [&](std::size_t p) { return p < core_of.size() ? core_of[p] : static_cast<int>(p); };
  for (std::size_t p = 0; p < order.size(); ++p) {
    if (p == 0 || core_at(p) != core_at(p - 1)) cores.push_back({});
    cores.back().cpus.push_back(order[p]);
    core_index[p] = static_cast<int>(cores.size()) - 1;
  }
  int threads_per_core = 1;
  for (const auto& c : cores) threads_per_core = std::max(threads_per_core, static_cast<int>(c.cpus.size()));
  auto core_of_cpu = [&](int cpu) -> int {
    for (std::size_t p = 0; p < order.size(); ++p) {
      if (order[p] == cpu) return core_index[p];
    }
    return -1;
  };

  std::vector<std::vector<std::size_t>> chosen(groups.size());
  // Pass 1: a group whose members hold exactly the cores it needs, all free, keeps them.
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const int need = cores_needed(groups[g], threads_per_core);
    std::set<int> held;
    for (const auto& m : groups[g].members) {
      for (int cpu : m.current.to_vector()) {
        if (int c = core_of_cpu(cpu); c >= 0) held.insert(c);
      }
    }
    if (static_cast<int>(held.size()) != need) continue;
    if (std::any_of(held.begin(), held.end(), [&](int c) { return cores[static_cast<std::size_t>(c)].taken; })) continue;
    for (int c : held) {
      cores[static_cast<std::size_t>(c)].taken = true;
      chosen[g].push_back(static_cast<std::size_t>(c));
    }
  }
  // Pass 2: the others, in order, on the lowest free adjacent cores.
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (!chosen[g].empty()) continue;
    const int need = cores_needed(groups[g], threads_per_core);
    chosen[g] = free_cores(cores, need);
    if (chosen[g].empty()) {
      ++out.unplaced_groups;
      continue;
    }
    for (std::size_t c : chosen[g]) cores[c].taken = true;
  }
  // Members: siblings with SMT (member k on PU k of each core), consecutive blocks without.
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (chosen[g].empty()) continue;
    std::size_t next = 0;
    for (std::size_t k = 0; k < groups[g].members.size(); ++k) {
      const auto& m = groups[g].members[k];
      CpuSet set;
      const int w = std::max(m.count, 1);
      if (threads_per_core > 1) {
        // One PU of each core: the k-th, so that the members of a group are siblings.
        const std::size_t n = chosen[g].size();
        for (int i = 0; i < w; ++i) {
          const Core& core = cores[chosen[g][static_cast<std::size_t>(i) % n]];
          set.set(core.cpus[(k + static_cast<std::size_t>(i) / n) % core.cpus.size()]);
        }
      } else {
        for (int i = 0; i < w && next < chosen[g].size(); ++i) set.set(cores[chosen[g][next++]].cpus.front());
      }
      out.cpus[m.id] = set;
    }
  }
  for (std::size_t p = 0; p < order.size(); ++p) {
    if (!cores[static_cast<std::size_t>(core_index[p])].taken) out.free_order.push_back(order[p]);
  }
  return out;
}

}  // namespace cosched::rm

namespace cosched::rm {

std::map<policy::JobId, CpuSet> place_with_groups(const std::vector<int>& order, const std::vector<int>& core_of,
                                                  const std::vector<PlaceRequest>& requests,
                                                  const std::vector<std::vector<policy::JobId>>& groups) {
  if (groups.empty()) return place(order, requests);
  std::vector<GroupRequest> grs;
  std::set<policy::JobId> grouped;
  for (const auto& g : groups) {
    GroupRequest gr;
    for (policy::JobId id : g) {
      auto r = std::find_if(requests.begin(), requests.end(), [id](const PlaceRequest& q) { return q.id == id; });
      if (r == requests.end() || grouped.count(id) != 0) continue;  // not running, or named twice
      gr.members.push_back(*r);
      grouped.insert(id);
    }
    if (!gr.members.empty()) grs.push_back(std::move(gr));
  }
  GroupPlacement gp = place_groups(order, core_of, grs);
  if (gp.unplaced_groups > 0) return place(order, requests);  // groups that do not fit: no groups at all
  std::vector<PlaceRequest> rest;
  for (const auto& r : requests) {
    if (grouped.count(r.id) == 0) rest.push_back(r);
  }
  if (!rest.empty()) {
    // The jobs outside every group share what the groups left (all CPUs, oversubscribed, if they left none).
    auto more = place(gp.free_order.empty() ? order : gp.free_order, rest);
    gp.cpus.insert(more.begin(), more.end());
  }
  return gp.cpus;
}

}  // namespace cosched::rm
