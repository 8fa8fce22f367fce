// PDPA decide(): orders the per-job transitions of pdpa_state.cpp, hands out free CPUs and keeps the machine
// within its CPUs (Corbalan, Martorell, Labarta, TPDS 2005, §4.1–§4.2).
#include "pdpa.hpp"

#include <algorithm>
#include <queue>
#include <utility>

#include <fmt/format.h>

#include "pdpa_share.hpp"

namespace cosched::policy {

namespace {

bool is_active(Event e) {
  // §4.1: arrival, finish and performance reports activate PDPA; an operator's change re-evaluates STABLE
  // jobs (§4.2.4). Ticks and may-start queries leave allocations as they are.
  return e == Event::arrival || e == Event::departure || e == Event::report || e == Event::param_change;
}

using Work = PdpaWork;

}  // namespace

Pdpa::Pdpa(const Machine& machine) { p_.step = default_step(machine.cpus); }

const PdpaJobMemory* Pdpa::memory_of(JobId id) const {
  auto it = memory_.find(id);
  return it == memory_.end() ? nullptr : &it->second;
}

Decision Pdpa::decide(const Snapshot& s) {
  // The parameters in force: the operator's, with target_eff following the load when load_target is on.
  PdpaParams p = p_;
  p.target_eff = effective_target_eff(p_, s.queued, static_cast<int>(s.jobs.size()));
  if (p.target_eff != effective_target_) {
    // A moved target re-evaluates every job, as an operator's change does (§4.2.4).
    if (effective_target_ >= 0) thresholds_changed_ = true;
    effective_target_ = p.target_eff;
  }
  // Jobs that left without a forget() call are dropped here, so memory stays bounded by the running set.
  if (memory_.size() > s.jobs.size() || s.event == Event::departure) {
    std::unordered_map<JobId, PdpaJobMemory> kept;
    kept.reserve(s.jobs.size());
    for (const auto& j : s.jobs) {
      if (auto it = memory_.find(j.id); it != memory_.end()) kept.emplace(j.id, it->second);
    }
    memory_.swap(kept);
  }

  const int machine = std::max(s.machine.cpus, 1);
  const std::size_t n = s.jobs.size();
  std::vector<Work> w(n);
  int used = 0;
  for (std::size_t i = 0; i < n; ++i) {
    w[i].mem = &memory_[s.jobs[i].id];  // a job never seen before starts in NO_REF
    w[i].state_before = w[i].mem->state;
    w[i].cpus = std::max(s.jobs[i].allocation, 0);
    used += w[i].cpus;
  }

  pdpa_reclaim_lent(s, w, used);  // an arrival takes back what idle CPUs were lent

  // No convoys (beyond the paper; docs/policies.md): while jobs wait that the multiprogramming level would
  // let in, no running job holds more than its equal share of the running and waiting jobs.
  const int waiting_jobs = pdpa_waiting_within_ml(s, machine, p);
  const std::vector<int> caps = pdpa_share_caps(s, waiting_jobs, machine);
  auto limit_of = [&](std::size_t i) {
    const int request = std::max(s.jobs[i].request, 1);
    return caps.empty() ? request : std::min(request, std::max(caps[i], 1));
  };

  // §4.2.1: a job holding no CPUs gets min(request, free), at least one (run-to-completion, §4.1); while
  // jobs wait, no more than its equal share.
  for (std::size_t i = 0; i < n; ++i) {
    if (w[i].cpus > 0) continue;
    const auto& j = s.jobs[i];
    const int free = machine - used;
    w[i].cpus = std::max(0, std::min(limit_of(i), free));
    used += w[i].cpus;
    w[i].why = caps.empty() ? fmt::format("NO_REF: first allocation min(request {}, free {}) → {}", j.request,
                                          std::max(free, 0), cpus_text(std::max(w[i].cpus, 1)))
                            : fmt::format("NO_REF: first allocation min(request {}, free {}, equal share {} with {} "
                                          "waiting) → {}",
                                          j.request, std::max(free, 0), caps[i], waiting_jobs,
                                          cpus_text(std::max(w[i].cpus, 1)));
    if (p.strict == 0) pdpa_share_unmeasured_on_arrival(s, w, i, machine, caps.empty() ? 0 : caps[i]);
    if (w[i].cpus == 0) {
      w[i].cpus = 1;  // the sum is brought back within the machine below
      ++used;
    }
  }

  if (is_active(s.event) || thresholds_changed_) {
    auto apply = [&](Work& x, PdpaStep st) {
      *x.mem = std::move(st.next);
      used += st.cpus - x.cpus;
      if (st.cpus < x.cpus) x.mem->lent = std::max(0, x.mem->lent - (x.cpus - st.cpus));  // lent CPUs go first
      x.cpus = st.cpus;
      x.grow = st.grow;
      if (!st.reason.empty()) x.why = std::move(st.reason);
    };
    std::vector<bool> reported(n, false);
    for (std::size_t i = 0; i < n; ++i) {
      const auto& j = s.jobs[i];
      if (!j.perf.valid || j.perf.seq == w[i].mem->last_seq) continue;  // never act twice on one report
      if (j.perf.spread > p.max_spread && w[i].mem->noisy_in_a_row < kMaxNoisySkips) {
        // Not confident enough: wait for the next report (each report counted once), and say so.
        if (w[i].mem->noisy_seq != j.perf.seq) {
          w[i].mem->noisy_seq = j.perf.seq;
          ++w[i].mem->noisy_in_a_row;
          w[i].why = fmt::format("{}: report ignored: spread {:.2f} > max_spread {:.2f} ({} in a row; the {}th is used)",
                                 state_label(*w[i].mem), j.perf.spread, p.max_spread, w[i].mem->noisy_in_a_row,
                                 kMaxNoisySkips + 1);
        }
        continue;
      }
      w[i].mem->noisy_in_a_row = 0;
      reported[i] = true;
      apply(w[i], pdpa_on_report(*w[i].mem, w[i].cpus, std::max(j.request, 1), j.perf, p));
    }
    if (thresholds_changed_) {
      for (std::size_t i = 0; i < n; ++i) {
        if (reported[i]) continue;  // already judged with the new thresholds
        const auto& j = s.jobs[i];
        apply(w[i], pdpa_on_param_change(*w[i].mem, w[i].cpus, std::max(j.request, 1), j.perf, p));
      }
      thresholds_changed_ = false;
    }
    // INC wants step more CPUs, "the minimum between step and the number of free processors" (§4.2.1); a
    // job that found none free keeps waiting in INC and is served here when CPUs free up. Admission order.
    for (std::size_t i = 0; i < n; ++i) {
      const int request = std::max(s.jobs[i].request, 1);
      PdpaJobMemory& m = *w[i].mem;
      const bool waiting = w[i].grow == 0 && m.state == PdpaState::inc && m.added == 0 && !reported[i];
      const int want = waiting ? p.step : w[i].grow;
      if (want <= 0 || w[i].cpus >= request) continue;
      const int limit = limit_of(i);
      if (w[i].cpus >= limit) {  // at its equal share while jobs wait: the rest is theirs
        if (!waiting) w[i].why += fmt::format("; at its equal share ({}) while {} wait{}", limit, waiting_jobs,
                                              waiting_jobs == 1 ? "s" : "");
        continue;
      }
      const int wanted = std::min(want, limit - w[i].cpus);
      if (machine - used < wanted) pdpa_take_back_lent(w, i, wanted - std::max(machine - used, 0), used);
      const int granted = std::min({want, machine - used, limit - w[i].cpus});
      if (granted <= 0) {
        if (!waiting) w[i].why += "; no free CPU, waits in INC";
        continue;
      }
      m.added = granted;
      w[i].cpus += granted;
      used += granted;
      w[i].why = waiting ? fmt::format("INC: {} freed → {}", cpus_text(granted), cpus_text(w[i].cpus))
                         : w[i].why + fmt::format(" → {}", cpus_text(w[i].cpus));
    }
  }

  // The sum stays within the machine: only arrivals the multiprogramming level did not admit (or more jobs
  // than CPUs) can overflow it. Take CPUs one at a time from the largest holder (youngest on ties); with
  // more jobs than CPUs this ends at one CPU each.
  if (used > machine) {
    std::priority_queue<std::pair<int, std::size_t>> largest;
    for (std::size_t i = 0; i < n; ++i) {
      if (w[i].cpus > 1) largest.emplace(w[i].cpus, i);
    }
    std::vector<int> taken(n, 0);
    while (used > machine && !largest.empty()) {
      auto [c, i] = largest.top();
      largest.pop();
      --w[i].cpus;
      ++taken[i];
      --used;
      if (w[i].mem->lent > 0) --w[i].mem->lent;
      if (w[i].cpus > 1) largest.emplace(w[i].cpus, i);
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (taken[i] == 0) continue;
      // The measurement base is gone: the next report is judged by efficiency alone (INC) or re-anchors
      // STABLE.
      PdpaJobMemory& m = *w[i].mem;
      m.previous = {};
      m.added = 0;
      if (m.state == PdpaState::stable) m.stable_efficiency = -1;
      w[i].why = fmt::format("{}: gives {} so the jobs fit in {} → {}", to_string(m.state), cpus_text(taken[i]),
                             cpus_text(machine), cpus_text(w[i].cpus));
    }
  }

  // Beyond the paper: no running job above its equal share while jobs wait, jobs that never report get an
  // equal share, and idle CPUs are lent (pdpa_share.hpp).
  double deadline = -1;
  if (s.event != Event::query) {
    pdpa_hold_to_caps(w, caps, waiting_jobs, used);
    deadline = pdpa_serve_unmeasured(s, w, machine, used, p, caps);
    pdpa_lend_free(s, w, machine, used, p, waiting_jobs);
  }

  Decision d;
  if (deadline >= 0) d.wake_at = deadline;  // the next job that would become unmeasured
  d.jobs.reserve(n);
  std::vector<PdpaRunningJob> running;
  running.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& j = s.jobs[i];
    const PdpaState st = w[i].mem->state;
    d.jobs.push_back(Allocation{j.id, w[i].cpus, true, state_label(*w[i].mem), std::move(w[i].why)});
    // Lent CPUs count as free for admission: an arrival takes them back.
    running.push_back(PdpaRunningJob{j.id, std::max(j.request, 1), w[i].cpus - w[i].mem->lent, st,
                                     w[i].mem->unmeasured, caps.empty() ? 0 : caps[i]});
  }
  MayStart ms = pdpa_may_start(running, machine, p, s.starting);
  d.may_start = ms.ok;
  d.may_start_reason = std::move(ms.reason);
  if (!p_.strict) sharing_.admit(s, d, p_.max_ml);
  return d;
}

bool Pdpa::speedup_check_matters(const JobView& j) const {
  const Perf& p = j.perf;
  const double target = effective_target_ >= 0 ? effective_target_ : p_.target_eff;
  return !(p.valid && p.kind == EstimateKind::waiting_time && p.cpus == j.allocation && p.efficiency < target);
}

}  // namespace cosched::policy
