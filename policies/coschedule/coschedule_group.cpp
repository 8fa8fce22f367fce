// Co-scheduling: grouping the selected jobs onto cores, and the decision (coschedule.hpp).
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "coschedule.hpp"
#include "matching.hpp"
#include "policies/job_list.hpp"

namespace cosched::policy {

namespace {

// `ids` in order, cut into `groups` consecutive groups as even as possible.
std::vector<std::vector<JobId>> consecutive(const std::vector<JobId>& ids, int groups) {
  std::vector<std::vector<JobId>> out;
  const int n = static_cast<int>(ids.size());
  groups = std::clamp(groups, 1, std::max(n, 1));
  std::size_t k = 0;
  for (int gi = 0; gi < groups; ++gi) {
    const int size = n / groups + (gi < n % groups ? 1 : 0);
    std::vector<JobId> g;
    for (int i = 0; i < size; ++i) g.push_back(ids[k++]);
    if (!g.empty()) out.push_back(std::move(g));
  }
  return out;
}

}  // namespace

std::vector<std::vector<JobId>> Coschedule::group(const std::vector<Candidate>& shared, const std::vector<JobId>& whole,
                                                  int whole_cores, const Geometry& g,
                                                  const std::vector<JobId>& forced) {
  std::vector<std::vector<JobId>> out;
  for (JobId id : whole) out.push_back({id});
  const int k = static_cast<int>(shared.size());
  if (k == 0) return out;
  // How many groups the shared jobs form: with SMT, as many cores as their widths leave room for (as few
  // sharing as possible); without SMT, pairs on adjacent cores.
  int size = g.threads_per_core;
  int groups = 0;
  if (size <= 1) {
    size = 2;
    groups = (k + 1) / 2;
  } else {
    int w_max = 1;
    for (const auto& c : shared) w_max = std::max(w_max, c.width);
    groups = std::clamp((g.cores - whole_cores) / w_max, (k + size - 1) / size, k);
  }
  std::vector<JobId> ids;
  for (const auto& c : shared) ids.push_back(c.id);
  const bool force = forced.size() == 2 && contains(ids, forced[0]) && contains(ids, forced[1]);

  std::vector<std::vector<JobId>> made;
  switch (pairing_) {
    case Pairing::blossom: {
      const GroupCost cost = [&](const std::vector<int>& members) {
        std::vector<JobId> m;
        for (int i : members) m.push_back(ids[static_cast<std::size_t>(i)]);
        double c = 0;
        for (JobId id : m) c += matrix_.predict_group(id, m);
        // Exploration: the forced pair's group costs less than any other choice can save.
        if (force && contains(m, forced[0]) && contains(m, forced[1])) c -= 1e3;
        return c;
      };
      for (const auto& gi : min_cost_groups(k, {size, groups, 2}, cost)) {
        std::vector<JobId> m;
        for (int i : gi) m.push_back(ids[static_cast<std::size_t>(i)]);
        made.push_back(std::move(m));
      }
      break;
    }
    case Pairing::extremes: {
      std::vector<Candidate> rest;
      for (const auto& c : shared) {
        if (!force || !contains(forced, c.id)) rest.push_back(c);
      }
      if (force) made.push_back(forced);
      for (auto& gr : pair_extremes(rest, groups - (force ? 1 : 0), size)) made.push_back(std::move(gr));
      break;
    }
    case Pairing::list:
    case Pairing::random: {
      std::vector<JobId> order;
      if (force) order = forced;
      for (JobId id : ids) {
        if (!contains(order, id)) order.push_back(id);
      }
      if (pairing_ == Pairing::random) {
        for (std::size_t i = order.size(); i > (force ? 3U : 1U); --i) {
          const std::size_t lo = force ? 2 : 0;
          std::swap(order[i - 1], order[lo + splitmix64(rng_) % (i - lo)]);
        }
      }
      made = consecutive(order, groups);
      break;
    }
  }
  for (auto& m : made) out.push_back(std::move(m));
  return out;
}

double Coschedule::predicted_cost(const std::vector<std::vector<JobId>>& groups) const {
  double c = 0;
  for (const auto& g : groups) {
    for (JobId id : g) c += matrix_.predict_group(id, g);
  }
  return c;
}

bool Coschedule::fits(const std::vector<std::vector<JobId>>& groups, const std::map<JobId, int>& width,
                      const Geometry& g) const {
  int cores = 0;
  for (const auto& gr : groups) {
    int need = 0;
    for (JobId id : gr) need = g.threads_per_core > 1 ? std::max(need, width.at(id)) : need + width.at(id);
    cores += need;
  }
  return cores <= g.cores;
}

std::string Coschedule::sample_text(JobId id) const {
  const auto* p = tracker_.find(id);
  if (p == nullptr || p->alone <= 0) return "no rate alone yet";
  return fmt::format("progress {:.2f}, rate alone {:.4g}/s ({}), {} quanta since", p->progress, p->alone, p->source,
                     p->since_estimate);
}

Decision Coschedule::build(const Snapshot& s, const Geometry& g) const {
  Decision d;
  bool waiting = false;
  auto group_of = [&](JobId id) -> const std::vector<JobId>* {
    for (const auto& gr : current_.groups) {
      if (contains(gr, id)) return &gr;
    }
    return nullptr;
  };
  for (const auto& j : s.jobs) {
    const bool runs = contains(current_.run, j.id);
    waiting |= !runs;
    const std::vector<JobId>* gr = runs ? group_of(j.id) : nullptr;
    std::string state = !runs ? "waiting"
                        : contains(current_.estimating, j.id) ? "estimating"
                        : gr != nullptr && gr->size() > 1     ? "co-run"
                                                              : "alone";
    Allocation a{j.id, std::clamp(j.request, 1, g.cores), runs, std::move(state), ""};
    if (fresh_plan_) {
      if (runs) {
        std::string partners;
        if (gr != nullptr) {
          for (JobId o : *gr) {
            if (o == j.id) continue;
            partners += fmt::format("{}{} (ŝ {:.3f})", partners.empty() ? "" : ", ", o, matrix_.predict(j.id, o));
          }
        }
        auto why = current_.why.find(j.id);
        a.reason = fmt::format("{}: {}; {}; {}", name(), why != current_.why.end() ? why->second : "selected",
                               partners.empty() ? std::string("alone in its group") : "with " + partners,
                               sample_text(j.id));
      } else {
        a.reason = fmt::format("{}: waits ({})", name(), sample_text(j.id));
      }
    }
    d.jobs.push_back(std::move(a));
  }
  d.co_schedule = current_.groups;
  if (waiting) d.wake_at = elected_at_ + current_.length + 0.25 * s.quantum;
  d.may_start = true;
  d.may_start_reason = "time sharing: every job gets quanta";
  return d;
}

Decision Coschedule::decide(const Snapshot& s) {
  Geometry g;
  g.contexts = std::max(s.machine.cpus, 1);
  g.cores = std::clamp(s.machine.cores, 1, g.contexts);
  g.threads_per_core = std::max(1, g.contexts / g.cores);

  // The list follows the snapshot: departed jobs leave it, new ones join its tail (admission order).
  auto gone = [&](JobId id) { return s.find(id) == nullptr; };
  list_.erase(std::remove_if(list_.begin(), list_.end(), gone), list_.end());
  const bool lost = std::any_of(current_.run.begin(), current_.run.end(), gone);
  for (const auto& j : s.jobs) {
    if (!contains(list_, j.id)) list_.push_back(j.id);
  }
  learn(s);

  int used = 0;
  for (JobId id : current_.run) {
    if (const JobView* j = s.find(id)) used += std::clamp(j->request, 1, g.cores);
  }
  const bool tick = s.event == Event::quantum || s.event == Event::timer;
  const bool due = tick && s.now - elected_at_ >= current_.length - 0.5 * s.quantum;
  fresh_plan_ = false;
  if (!s.jobs.empty()) {
    if (due || current_.run.empty()) {
      if (due) close_quantum();
      current_ = make_plan(s, g);
      elected_at_ = s.now;
      fresh_plan_ = true;
    } else if (lost || (s.event == Event::arrival && used < g.contexts) || s.event == Event::param_change) {
      // CPUs freed by a departure, or a newcomer that may fit: a new plan for the rest of this quantum.
      const double length = current_.length;
      current_ = make_plan(s, g);
      current_.length = length;
      fresh_plan_ = true;
    }
  } else {
    current_ = Plan{};
  }
  return build(s, g);
}

void Coschedule::forget(JobId id) {
  list_.erase(std::remove(list_.begin(), list_.end(), id), list_.end());
  tracker_.forget(id);
  matrix_.forget(id);
  cooldown_.erase(id);
  auto drop = [id](std::vector<JobId>& v) { v.erase(std::remove(v.begin(), v.end(), id), v.end()); };
  drop(current_.run);
  drop(current_.estimating);
  for (auto& gr : current_.groups) drop(gr);
  current_.groups.erase(std::remove_if(current_.groups.begin(), current_.groups.end(),
                                       [](const auto& gr) { return gr.empty(); }),
                        current_.groups.end());
}

}  // namespace cosched::policy
