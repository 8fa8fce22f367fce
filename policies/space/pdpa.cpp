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

// One decision's working state, shared by its steps below.
struct Pdpa::Round {
  Round(const Snapshot& snapshot, const PdpaParams& params, std::vector<Work>& work, std::vector<bool>& reports)
      : s(snapshot), p(params), w(work), reported(reports) {}
  const Snapshot& s;
  PdpaParams p;  // the parameters in force
  int machine = 1;
  std::size_t n = 0;
  std::vector<Work>& w;
  int used = 0;
  int waiting_jobs = 0;
  std::vector<int> caps;
  std::vector<bool>& reported;
  // A job's limit: its request, and while jobs wait no more than its equal share.
  [[nodiscard]] int limit_of(std::size_t i) const {
    const int request = std::max(s.jobs[i].request, 1);
    return caps.empty() ? request : std::min(request, std::max(caps[i], 1));
  }
};

Decision Pdpa::decide(const Snapshot& s) {
  Round r(s, params_in_force(s), work_, reported_);
  drop_departed(s);
  r.machine = std::max(s.machine.cpus, 1);
  r.n = s.jobs.size();
  r.w.assign(r.n, Work{});
  r.reported.assign(r.n, false);
  for (std::size_t i = 0; i < r.n; ++i) {
    r.w[i].mem = &memory_[s.jobs[i].id];  // a job never seen before starts in NO_REF
    r.w[i].state_before = r.w[i].mem->state;
    r.w[i].cpus = std::max(s.jobs[i].allocation, 0);
    r.used += r.w[i].cpus;
  }

  pdpa_reclaim_lent(s, r.w, r.used);  // an arrival takes back what idle CPUs were lent

  // No convoys (beyond the paper; docs/policies.md): while jobs wait that the multiprogramming level would
  // let in, no running job holds more than its equal share of the running and waiting jobs.
  r.waiting_jobs = pdpa_waiting_within_ml(s, r.machine, r.p);
  r.caps = pdpa_share_caps(s, r.waiting_jobs, r.machine);

  first_allocations(r);
  if (is_active(s.event) || thresholds_changed_) {
    judge_reports(r);
    grow_inc(r);
  }
  fit_machine(r);

  // Beyond the paper: no running job above its equal share while jobs wait, jobs that never report get an
  // equal share, and idle CPUs are lent (pdpa_share.hpp).
  double deadline = -1;
  if (s.event != Event::query) {
    pdpa_hold_to_caps(r.w, r.caps, r.waiting_jobs, r.used);
    deadline = pdpa_serve_unmeasured(s, r.w, r.machine, r.used, r.p, r.caps);
    pdpa_lend_free(s, r.w, r.machine, r.used, r.p, r.waiting_jobs);
  }
  return build_decision(r, deadline);
}

// The parameters in force: the operator's, with target_eff following the load when load_target is on.
PdpaParams Pdpa::params_in_force(const Snapshot& s) {
  PdpaParams p = p_;
  p.target_eff = effective_target_eff(p_, s.queued, static_cast<int>(s.jobs.size()));
  if (p.target_eff != effective_target_) {
    // A moved target re-evaluates every job, as an operator's change does (§4.2.4).
    if (effective_target_ >= 0) thresholds_changed_ = true;
    effective_target_ = p.target_eff;
  }
  return p;
}

// Jobs that left without a forget() call are dropped here, so memory stays bounded by the running set.
void Pdpa::drop_departed(const Snapshot& s) {
  if (memory_.size() <= s.jobs.size() && s.event != Event::departure) return;
  std::unordered_map<JobId, PdpaJobMemory> kept;
  kept.reserve(s.jobs.size());
  for (const auto& j : s.jobs) {
    if (auto it = memory_.find(j.id); it != memory_.end()) kept.emplace(j.id, it->second);
  }
  memory_.swap(kept);
}

// §4.2.1: a job holding no CPUs gets min(request, free), at least one (run-to-completion, §4.1); while
// jobs wait, no more than its equal share.
void Pdpa::first_allocations(Round& r) {
  for (std::size_t i = 0; i < r.n; ++i) {
    if (r.w[i].cpus > 0) continue;
    const auto& j = r.s.jobs[i];
    const int free = r.machine - r.used;
    r.w[i].cpus = std::max(0, std::min(r.limit_of(i), free));
    r.used += r.w[i].cpus;
    r.w[i].why = r.caps.empty() ? fmt::format("NO_REF: first allocation min(request {}, free {}) → {}", j.request,
                                          std::max(free, 0), cpus_text(std::max(r.w[i].cpus, 1)))
                            : fmt::format("NO_REF: first allocation min(request {}, free {}, equal share {} with {} "
                                          "waiting) → {}",
                                          j.request, std::max(free, 0), r.caps[i], r.waiting_jobs,
                                          cpus_text(std::max(r.w[i].cpus, 1)));
    if (r.p.strict == 0) pdpa_share_unmeasured_on_arrival(r.s, r.w, i, r.machine, r.caps.empty() ? 0 : r.caps[i]);
    if (r.w[i].cpus == 0) {
      r.w[i].cpus = 1;  // the sum is brought back within the machine below
      ++r.used;
    }
  }
}

// §4.2: each new report moves its job's state machine; a changed threshold re-judges every other job.
void Pdpa::judge_reports(Round& r) {
  auto apply = [&](Work& x, PdpaStep st) {
    *x.mem = std::move(st.next);
    r.used += st.cpus - x.cpus;
    if (st.cpus < x.cpus) x.mem->lent = std::max(0, x.mem->lent - (x.cpus - st.cpus));  // lent CPUs go first
    x.cpus = st.cpus;
    x.grow = st.grow;
    if (!st.reason.empty()) x.why = std::move(st.reason);
  };
  for (std::size_t i = 0; i < r.n; ++i) {
    const auto& j = r.s.jobs[i];
    if (!j.perf.valid || j.perf.seq == r.w[i].mem->last_seq) continue;  // never act twice on one report
    if (j.perf.spread > r.p.max_spread && r.w[i].mem->noisy_in_a_row < kMaxNoisySkips) {
      // Not confident enough: wait for the next report (each report counted once), and say so.
      if (r.w[i].mem->noisy_seq != j.perf.seq) {
        r.w[i].mem->noisy_seq = j.perf.seq;
        ++r.w[i].mem->noisy_in_a_row;
        r.w[i].why = fmt::format("{}: report ignored: spread {:.2f} > max_spread {:.2f} ({} in a row; the {}th is used)",
                               state_label(*r.w[i].mem), j.perf.spread, r.p.max_spread, r.w[i].mem->noisy_in_a_row,
                               kMaxNoisySkips + 1);
      }
      continue;
    }
    r.w[i].mem->noisy_in_a_row = 0;
    r.reported[i] = true;
    apply(r.w[i], pdpa_on_report(*r.w[i].mem, r.w[i].cpus, std::max(j.request, 1), j.perf, r.p));
  }
  if (thresholds_changed_) {
    for (std::size_t i = 0; i < r.n; ++i) {
      if (r.reported[i]) continue;  // already judged with the new thresholds
      const auto& j = r.s.jobs[i];
      apply(r.w[i], pdpa_on_param_change(*r.w[i].mem, r.w[i].cpus, std::max(j.request, 1), j.perf, r.p));
    }
    thresholds_changed_ = false;
  }
}

void Pdpa::grow_inc(Round& r) {
  // INC wants step more CPUs, "the minimum between step and the number of free processors" (§4.2.1); a
  // job that found none free keeps waiting in INC and is served here when CPUs free up. Admission order.
  for (std::size_t i = 0; i < r.n; ++i) {
    const int request = std::max(r.s.jobs[i].request, 1);
    PdpaJobMemory& m = *r.w[i].mem;
    const bool waiting = r.w[i].grow == 0 && m.state == PdpaState::inc && m.added == 0 && !r.reported[i];
    const int want = waiting ? r.p.step : r.w[i].grow;
    if (want <= 0 || r.w[i].cpus >= request) continue;
    const int limit = r.limit_of(i);
    if (r.w[i].cpus >= limit) {  // at its equal share while jobs wait: the rest is theirs
      if (!waiting) r.w[i].why += fmt::format("; at its equal share ({}) while {} wait{}", limit, r.waiting_jobs,
                                            r.waiting_jobs == 1 ? "s" : "");
      continue;
    }
    const int wanted = std::min(want, limit - r.w[i].cpus);
    if (r.machine - r.used < wanted) pdpa_take_back_lent(r.w, i, wanted - std::max(r.machine - r.used, 0), r.used);
    const int granted = std::min({want, r.machine - r.used, limit - r.w[i].cpus});
    if (granted <= 0) {
      if (!waiting) r.w[i].why += "; no free CPU, waits in INC";
      continue;
    }
    m.added = granted;
    r.w[i].cpus += granted;
    r.used += granted;
    r.w[i].why = waiting ? fmt::format("INC: {} freed → {}", cpus_text(granted), cpus_text(r.w[i].cpus))
                       : r.w[i].why + fmt::format(" → {}", cpus_text(r.w[i].cpus));
  }
}

void Pdpa::fit_machine(Round& r) {
  // The sum stays within the machine: only arrivals the multiprogramming level did not admit (or more jobs
  // than CPUs) can overflow it. Take CPUs one at a time from the largest holder (youngest on ties); with
  // more jobs than CPUs this ends at one CPU each.
  if (r.used > r.machine) {
    std::priority_queue<std::pair<int, std::size_t>> largest;
    for (std::size_t i = 0; i < r.n; ++i) {
      if (r.w[i].cpus > 1) largest.emplace(r.w[i].cpus, i);
    }
    std::vector<int> taken(r.n, 0);
    while (r.used > r.machine && !largest.empty()) {
      auto [c, i] = largest.top();
      largest.pop();
      --r.w[i].cpus;
      ++taken[i];
      --r.used;
      if (r.w[i].mem->lent > 0) --r.w[i].mem->lent;
      if (r.w[i].cpus > 1) largest.emplace(r.w[i].cpus, i);
    }
    for (std::size_t i = 0; i < r.n; ++i) {
      if (taken[i] == 0) continue;
      // The measurement base is gone: the next report is judged by efficiency alone (INC) or re-anchors
      // STABLE.
      PdpaJobMemory& m = *r.w[i].mem;
      m.previous = {};
      m.added = 0;
      if (m.state == PdpaState::stable) m.stable_efficiency = -1;
      r.w[i].why = fmt::format("{}: gives {} so the jobs fit in {} → {}", to_string(m.state), cpus_text(taken[i]),
                             cpus_text(r.machine), cpus_text(r.w[i].cpus));
    }
  }
}

Decision Pdpa::build_decision(Round& r, double deadline) {
  Decision d;
  if (deadline >= 0) d.wake_at = deadline;  // the next job that would become unmeasured
  d.jobs.reserve(r.n);
  std::vector<PdpaRunningJob>& running = running_;
  running.clear();
  for (std::size_t i = 0; i < r.n; ++i) {
    const auto& j = r.s.jobs[i];
    const PdpaState st = r.w[i].mem->state;
    // Built in place (no temporary to move), the label constructed rather than assigned (a far shorter path).
    Allocation& a = d.jobs.emplace_back();
    a.id = j.id;
    a.cpus = r.w[i].cpus;
    a.state = std::string(state_label(*r.w[i].mem));
    a.reason = std::move(r.w[i].why);
    // Lent CPUs count as free for admission: an arrival takes them back.
    running.push_back(PdpaRunningJob{j.id, std::max(j.request, 1), r.w[i].cpus - r.w[i].mem->lent, st,
                                     r.w[i].mem->unmeasured, r.caps.empty() ? 0 : r.caps[i]});
  }
  MayStart ms = pdpa_may_start(running, r.machine, r.p, r.s.starting, r.s.explain);
  d.may_start = ms.ok;
  d.may_start_reason = std::move(ms.reason);
  if (!p_.strict) sharing_.admit(r.s, d, p_.max_ml);
  return d;
}

bool Pdpa::speedup_check_matters(const JobView& j) const {
  const Perf& p = j.perf;
  const double target = effective_target_ >= 0 ? effective_target_ : p_.target_eff;
  return !(p.valid && p.kind == EstimateKind::waiting_time && p.cpus == j.allocation && p.efficiency < target);
}

}  // namespace cosched::policy
