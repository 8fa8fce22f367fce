#include "coschedule.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "matching.hpp"
#include "policies/job_list.hpp"

namespace cosched::policy {

namespace {

constexpr double kBytesPerTransaction = 64;  // the thesis's transactions (one 64-byte line)

std::string ids_text(const std::vector<JobId>& ids) {
  std::string t;
  for (JobId id : ids) t += (t.empty() ? "" : "+") + std::to_string(id);
  return t;
}

}  // namespace

// The defaults of bas and perf-fair; fair's and symbiotic's own values are their presets (registry.cpp).
Coschedule::Coschedule(Mode mode)
    : mode_(mode),
      quantum_s_(0.2),             // §5.3, §6.5: 200 ms
      estimation_quantum_s_(0.1),  // §6.3.1: Perf&Fair's estimation quanta, 100 ms
      pairing_(Pairing::extremes), // Algorithm 6: highest with lowest
      explorer_(0) {}

std::string_view Coschedule::name() const {
  switch (mode_) {
    case Mode::bas: return "bas";
    case Mode::fair: return "fair";
    case Mode::perf_fair: return "perf-fair";
    case Mode::symbiotic: return "symbiotic";
  }
  return "?";
}

void Coschedule::learn(const Snapshot& s) {
  matrix_.set_now(s.now);
  for (const auto& j : s.jobs) {
    const auto use = tracker_.feed(j.id, j.rate);
    if (use != ProgressTracker::Use::progress || j.rate.latest.with.empty()) continue;
    if (auto sd = tracker_.slowdown(j.id, j.rate.latest)) matrix_.add(j.id, j.rate.latest.with, *sd, j.rate.latest.at);
  }
}

void Coschedule::close_quantum() {
  for (JobId id : current_.run) {
    if (!contains(current_.estimating, id)) tracker_.scheduled(id);
  }
  for (auto it = cooldown_.begin(); it != cooldown_.end();) {
    it = contains(current_.run, it->first) && --it->second <= 0 ? cooldown_.erase(it) : std::next(it);
  }
  for (JobId id : current_.estimating) {
    const auto* p = tracker_.find(id);
    if (p == nullptr || p->round_samples == 0) cooldown_[id] = tracker_.settings().close_quanta;
    tracker_.end_estimate(id);
  }
  last_was_estimation_ = current_.estimation;
  // Algorithm 2 line 3 (reused by Algorithms 5-8): the jobs that ran move to the tail, in their order.
  std::stable_partition(list_.begin(), list_.end(), [&](JobId id) { return !contains(current_.run, id); });
}

std::vector<Candidate> Coschedule::candidates(const Snapshot& s, const Geometry& g) const {
  std::vector<Candidate> out;
  bool all_bw = true;
  for (JobId id : list_) {
    const JobView* j = s.find(id);
    Candidate c;
    c.id = id;
    c.width = std::clamp(j->request, 1, g.cores);
    if (j->bandwidth.valid()) c.bw = j->bandwidth.mean_per_thread(Bandwidth::kWindow) / (kBytesPerTransaction * 1e6);
    all_bw = all_bw && c.bw >= 0;
    c.progress = tracker_.progress(id);
    c.close = tracker_.close_to_expire(id);
    // §6.1.2: heavy-sharing above 3.5 main-memory transactions/µs; without a sample, what the job is seen
    // to do to its partners (unknown: light, the optimistic guess that gets it measured).
    c.light = !(c.bw > kHeavyTrPerUs) && !(matrix_.inflicts(id) > kHeavyInflicted);
    out.push_back(c);
  }
  // Algorithm 6 sorts by L1 bandwidth, which no counter-free sensor measures. Stand-in (our choice): the
  // memory bandwidth per thread when every job has a sample, else how much a job slows its partners.
  for (auto& c : out) c.intensity = all_bw ? c.bw : matrix_.inflicts(c.id);
  return out;
}

std::vector<Pick> Coschedule::select_symbiotic(const std::vector<Candidate>& list, const Geometry& g,
                                               const std::vector<JobId>& alone) {
  // The thesis selects nothing (n ≤ contexts, §7.2). With more jobs than contexts, our choice: the queue
  // head runs by default (no job starves: the jobs that ran go to the tail), then, context by context, the
  // job the model predicts cheapest next to those already chosen. Jobs measuring their rate alone get a core
  // (cores) of their own first; the rest of the machine runs on: the thesis's symbiotic scheduler takes the
  // interference between cores as independent of the schedule (§7.2.2), so only the core must be quiet.
  std::vector<Pick> picks;
  int free = g.contexts;
  auto chosen = [&](JobId id) { return std::any_of(picks.begin(), picks.end(), [&](const Pick& p) { return p.id == id; }); };
  auto take = [&](const Candidate& c, std::string why) {
    picks.push_back({c.id, false, std::move(why)});
    free -= c.width;
  };
  if (list.empty()) return picks;
  for (JobId id : alone) {
    for (const auto& c : list) {
      if (c.id != id || c.width * g.threads_per_core > free) continue;
      picks.push_back({id, true, "estimation quantum: its rate alone, on a core of its own; the others run on"});
      free -= c.width * g.threads_per_core;
    }
  }
  if (!chosen(list.front().id) && list.front().width <= free) take(list.front(), "head of the queue, selected by default");
  // Each candidate's summed pair cost with the shared picks so far, kept up to date pick by pick: O(n²).
  std::vector<double> sum(list.size(), 0.0);
  std::vector<char> taken(list.size(), 0);
  for (std::size_t k = 0; k < list.size(); ++k) taken[k] = chosen(list[k].id) ? 1 : 0;
  int shared = 0;
  auto add_pick = [&](JobId id) {
    ++shared;
    for (std::size_t k = 0; k < list.size(); ++k) {
      if (!taken[k]) sum[k] += matrix_.pair_cost(list[k].id, id);
    }
  };
  for (const auto& p : picks) {
    if (!p.whole_core) add_pick(p.id);
  }
  while (free > 0) {
    std::size_t best = list.size();
    for (std::size_t k = 0; k < list.size(); ++k) {
      if (taken[k] || list[k].width > free) continue;
      if (best == list.size() || sum[k] < sum[best] - 1e-12) best = k;
    }
    if (best == list.size()) break;
    const double mean = shared > 0 ? sum[best] / shared : 0.0;
    take(list[best], fmt::format("cheapest partner for the jobs chosen so far: predicted pair cost {:.3f}", mean));
    taken[best] = 1;
    add_pick(list[best].id);
  }
  return picks;
}

std::vector<Pick> Coschedule::select(const Geometry& g, const std::vector<Candidate>& list, Plan& plan) {
  // An estimation quantum (Algorithms 7 and 8, lines 2-9) when a rate alone expired, never two in a row
  // (our choice: the heavy-sharing jobs they leave out would otherwise starve when many jobs expire).
  if (mode_ != Mode::bas && !last_was_estimation_) {
    const Candidate* target = nullptr;
    for (const auto& c : list) {
      if (!tracker_.expired(c.id) || cooldown_.count(c.id) != 0) continue;
      if (target == nullptr || c.progress < target->progress) target = &c;
    }
    if (target != nullptr && mode_ == Mode::symbiotic && g.threads_per_core > 1) {
      // With SMT: the target and the jobs close to expire, lowest progress first, at most a quarter of the
      // cores (our bound: each costs its core's other contexts for one quantum), and the rest runs on.
      // Without SMT a group is adjacent cores, so the interference the matrix learns is the one between cores
      // and §7.2.2's assumption does not hold: symbiotic then takes Algorithm 7's low-contention schedule
      // below (our choice; a "rate alone" measured next to a streaming job on the other core would read the
      // very slowdown the matrix is meant to find as no slowdown at all).
      plan.estimation = true;
      plan.length = estimation_quantum_s_;
      plan.estimating.push_back(target->id);
      std::vector<const Candidate*> close;
      for (const auto& c : list) {
        if (c.id != target->id && c.close && cooldown_.count(c.id) == 0) close.push_back(&c);
      }
      std::stable_sort(close.begin(), close.end(), [](auto* a, auto* b) { return a->progress < b->progress; });
      for (const Candidate* c : close) {
        if (static_cast<int>(plan.estimating.size()) >= std::max(1, g.cores / 4)) break;
        plan.estimating.push_back(c->id);
      }
      return select_symbiotic(list, g, plan.estimating);
    }
    if (target != nullptr) {
      plan.estimation = true;
      plan.length = estimation_quantum_s_;
      auto picks = select_for_estimation(list, target->id, g.cores, g.threads_per_core);
      for (const auto& p : picks) {
        if (p.whole_core) plan.estimating.push_back(p.id);
      }
      return picks;
    }
  }
  switch (mode_) {
    case Mode::bas: {
      // Algorithm 5: OATR as the target, the queue head selected by default, then the fittest.
      return select_by_fitness(list, g.contexts, oatr(list, g.contexts), {list.front().id}, {});
    }
    case Mode::fair:
      return select_for_fairness(list, g.cores, g.threads_per_core, fair_gap_);
    case Mode::perf_fair: {
      // Algorithm 8 lines 11-25: the fittest among the jobs whose Progress + 1 < MaxP while any fits.
      double max_p = 0;
      for (const auto& c : list) max_p = std::max(max_p, c.progress);
      std::vector<char> behind;
      for (const auto& c : list) behind.push_back(c.progress + 1 < max_p ? 1 : 0);
      return select_by_fitness(list, g.contexts, oatr(list, g.contexts), {}, behind);
    }
    case Mode::symbiotic:
      return select_symbiotic(list, g, {});
  }
  return {};
}

// The unseen pair to explore this quantum, when one is due and fits: put first into `picks`, followed by the
// selection's own picks while they fit the contexts. Empty (and `picks` unchanged) otherwise.
std::vector<JobId> Coschedule::force_unseen_pair(const Snapshot& s, const std::vector<Candidate>& list,
                                                 const Geometry& g, const std::map<JobId, int>& width,
                                                 std::vector<Pick>& picks) {
  std::vector<JobId> forced;
  if (!explorer_.due()) return forced;
  std::vector<JobId> ids;
  for (const auto& c : list) ids.push_back(c.id);
  if (auto pair = cheapest_unseen(ids, matrix_, s.now)) forced = {pair->first, pair->second};
  if (forced.empty()) return forced;
  std::vector<Pick> with_pair;
  int used = 0;
  for (JobId f : forced) {
    with_pair.push_back({f, false, "exploring an unseen pair"});
    used += width.at(f);
  }
  if (used > g.contexts) return {};
  for (const auto& p : picks) {
    const int need = width.at(p.id) * (p.whole_core ? g.threads_per_core : 1);
    if (contains(forced, p.id) || used + need > g.contexts) continue;
    with_pair.push_back(p);
    used += need;
  }
  picks = std::move(with_pair);
  return forced;
}

Coschedule::Plan Coschedule::make_plan(const Snapshot& s, const Geometry& g) {
  Plan plan;
  plan.length = quantum_s_;
  const std::vector<Candidate> list = candidates(s, g);
  if (list.empty()) return plan;
  std::vector<Pick> picks = select(g, list, plan);

  std::map<JobId, int> width;
  for (const auto& c : list) width[c.id] = c.width;
  const std::vector<Pick> chosen_freely = picks;
  // Bounded exploration (interference.hpp): in an ordinary quantum, at most one unseen pair, forced into the
  // selection (in place of the latest picks) and into one group.
  std::vector<JobId> forced = plan.estimation ? std::vector<JobId>{} : force_unseen_pair(s, list, g, width, picks);
  // Groups; drop the latest picks until the groups fit the cores (jobs of unequal widths).
  auto grouped = [&](const std::vector<Pick>& from, const std::vector<JobId>& force) {
    std::vector<Candidate> shared;
    std::vector<JobId> whole;
    int whole_cores = 0;
    for (const auto& p : from) {
      if (p.whole_core) {
        whole.push_back(p.id);
        whole_cores += width[p.id];
        continue;
      }
      for (const auto& c : list) {
        if (c.id == p.id) shared.push_back(c);
      }
    }
    return group(shared, whole, whole_cores, g, force);
  };
  for (;;) {
    plan.groups = grouped(picks, forced);
    if (fits(plan.groups, width, g) || picks.size() <= 1) break;
    picks.pop_back();
  }
  if (!forced.empty()) {
    // What exploring costs: the forced schedule's predicted slowdowns over those of the one the policy would
    // have chosen (its own selection, grouped freely), per job selected.
    const auto free_groups = grouped(chosen_freely, {});
    auto per_job = [&](const std::vector<std::vector<JobId>>& gs) {
      std::size_t n = 0;
      for (const auto& gr : gs) n += gr.size();
      return n > 0 ? predicted_cost(gs) / static_cast<double>(n) : 0.0;
    };
    explorer_.record(per_job(plan.groups) - per_job(free_groups));
    plan.why[forced[0]] = plan.why[forced[1]] =
        fmt::format("exploring the unseen pair {}: run together once (at most one quantum in {})", ids_text(forced),
                    explorer_.every());
  }
  for (const auto& p : picks) {
    plan.run.push_back(p.id);
    if (plan.why.count(p.id) == 0) plan.why[p.id] = p.why;
  }
  // Only the jobs that got their cores alone measure a rate alone.
  plan.estimating.erase(std::remove_if(plan.estimating.begin(), plan.estimating.end(),
                                       [&](JobId id) {
                                         return std::none_of(picks.begin(), picks.end(), [&](const Pick& p) {
                                           return p.id == id && p.whole_core;
                                         });
                                       }),
                        plan.estimating.end());
  for (JobId id : plan.estimating) tracker_.begin_estimate(id);
  return plan;
}

}  // namespace cosched::policy
