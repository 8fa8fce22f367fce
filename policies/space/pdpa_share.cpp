#include "pdpa_share.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "equipartition.hpp"

namespace cosched::policy {

int pdpa_reclaim_lent(const Snapshot& s, std::vector<PdpaWork>& w, int& used) {
  bool arrival = false;
  for (const auto& x : w) arrival = arrival || x.cpus == 0;
  if (!arrival) return 0;
  int reclaimed = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    PdpaJobMemory& m = *w[i].mem;
    const int back = std::min(m.lent, std::max(w[i].cpus - 1, 0));
    m.lent = 0;
    if (back <= 0) continue;
    w[i].cpus -= back;
    used -= back;
    reclaimed += back;
    if (m.state == PdpaState::stable) m.stable_efficiency = -1;  // re-anchored by the next report
    m.previous = {};
    m.added = 0;
    w[i].why = fmt::format("{}: gives back {} lent while the machine was idle (job arrived) → {}",
                           state_label(m), cpus_text(back), cpus_text(w[i].cpus));
  }
  (void)s;
  return reclaimed;
}

int pdpa_take_back_lent(std::vector<PdpaWork>& w, std::size_t claimant, int wanted, int& used) {
  int back = 0;
  std::vector<int> taken(w.size(), 0);
  while (back < wanted) {
    std::size_t lender = w.size();
    for (std::size_t k = 0; k < w.size(); ++k) {
      if (k == claimant || w[k].mem->lent <= 0 || w[k].cpus <= 1) continue;
      if (lender == w.size() || w[k].mem->lent > w[lender].mem->lent) lender = k;
    }
    if (lender == w.size()) break;
    --w[lender].cpus;
    --w[lender].mem->lent;
    --used;
    ++taken[lender];
    ++back;
  }
  for (std::size_t k = 0; k < w.size(); ++k) {
    if (taken[k] == 0) continue;
    PdpaJobMemory& m = *w[k].mem;
    if (m.state == PdpaState::stable) m.stable_efficiency = -1;  // re-anchored by the next report
    m.previous = {};
    m.added = 0;
    w[k].why = fmt::format("{}: gives back {} lent while nobody claimed them (an INC job does) → {}", state_label(m),
                           cpus_text(taken[k]), cpus_text(w[k].cpus));
  }
  return back;
}

int pdpa_waiting_within_ml(const Snapshot& s, int machine, const PdpaParams& p) {
  const int jobs = static_cast<int>(s.jobs.size());
  // A job being started is already admitted: it will ask for its share as soon as it registers. Space sharing
  // gives every job a CPU of its own, so no more of them count than the CPUs left.
  const int starting = std::clamp(s.starting, 0, std::max(machine - jobs, 0));
  if (p.strict != 0 || (s.queued <= 0 && starting == 0)) return 0;
  const int running = jobs + starting;
  int room = machine - running;
  if (p.max_ml > 0) room = std::min(room, p.max_ml - running);
  return starting + std::clamp(s.queued, 0, std::max(room, 0));
}

std::vector<int> pdpa_share_caps(const Snapshot& s, int waiting, int machine) {
  if (waiting <= 0) return {};
  std::vector<JobView> all;
  all.reserve(s.jobs.size() + static_cast<std::size_t>(waiting));
  for (const JobView& j : s.jobs) {
    JobView v;
    v.request = std::max(j.request, 1);
    v.allocation = j.allocation;
    v.arrival = j.arrival;
    all.push_back(v);
  }
  for (int k = 0; k < waiting; ++k) {
    JobView v;  // a waiting job: it may ask for anything, and it holds nothing yet
    v.request = machine;
    v.arrival = std::numeric_limits<double>::infinity();
    all.push_back(v);
  }
  std::vector<int> shares = equal_shares(all, machine);
  shares.resize(s.jobs.size());
  return shares;
}

void pdpa_hold_to_caps(std::vector<PdpaWork>& w, const std::vector<int>& caps, int waiting, int& used) {
  if (caps.empty()) return;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const int excess = w[i].cpus - std::max(caps[i], 1);
    if (excess <= 0) continue;
    PdpaJobMemory& m = *w[i].mem;
    w[i].cpus -= excess;
    used -= excess;
    m.lent = std::max(0, m.lent - excess);
    m.previous = {};
    m.added = 0;
    if (m.state == PdpaState::stable) m.stable_efficiency = -1;  // re-anchored by the next report
    w[i].why = fmt::format("{}: gives back {}: {} wait{}, and no running job holds more than its equal share → {}",
                           state_label(m), cpus_text(excess), waiting == 1 ? "1 job" : fmt::format("{} jobs", waiting),
                           waiting == 1 ? "s" : "", cpus_text(w[i].cpus));
  }
}

void pdpa_share_unmeasured_on_arrival(const Snapshot& s, std::vector<PdpaWork>& w, std::size_t arrived, int machine,
                                      int cap) {
  const int share = std::max(1, machine / static_cast<int>(w.size()));
  PdpaWork& x = w[arrived];
  int target = std::min(std::max(s.jobs[arrived].request, 1), share);
  if (cap > 0) target = std::min(target, cap);
  int got = 0;
  while (x.cpus + got < target) {
    std::size_t donor = w.size();
    for (std::size_t k = 0; k < w.size(); ++k) {
      if (k == arrived || w[k].mem->state != PdpaState::no_ref || w[k].cpus <= share) continue;
      if (donor == w.size() || w[k].cpus > w[donor].cpus) donor = k;
    }
    if (donor == w.size()) break;
    --w[donor].cpus;
    if (w[donor].mem->lent > 0) --w[donor].mem->lent;
    w[donor].why = fmt::format("{}: gives CPUs to arriving job {} (equal share {}) → {}", state_label(*w[donor].mem),
                               s.jobs[arrived].id, share, cpus_text(w[donor].cpus));
    ++got;
  }
  if (got == 0) return;
  x.cpus += got;  // the CPUs moved between jobs: the sum held is unchanged
  x.why = fmt::format("NO_REF: first allocation {} (an equal share, min(request {}, {} / {} jobs), {} of them from "
                      "jobs not measured yet)",
                      cpus_text(x.cpus), s.jobs[arrived].request, machine, w.size(), got);
}

namespace {

// Why a NO_REF job with no report counts as unmeasured now, or an empty string while its report may still
// come; `deadline` is set to when that wait ends if a clock can tell (-1 otherwise: the bound is counted in
// the job's own iterations, which a quantum tick looks at again).
std::string unmeasured_because(const Snapshot& s, const JobView& j, const PdpaParams& p, double& deadline) {
  deadline = -1;
  if (!j.analyzing) {
    if (s.now - j.arrival < p.unmeasured_after_s) {
      deadline = j.arrival + p.unmeasured_after_s;
      return {};
    }
    return fmt::format("no period found {:.1f} s after arrival (one long region, or nothing iterative)",
                       s.now - j.arrival);
  }
  // Its SelfAnalyzer found the period: a report normally comes within a baseline and a window.
  const double since = j.analyzing_since >= 0 ? j.analyzing_since : j.arrival;
  if (s.now - since < p.unmeasured_after_s) {
    deadline = since + p.unmeasured_after_s;
    return {};
  }
  if (j.analyzed_iterations < static_cast<std::uint64_t>(std::max(p.unmeasured_iterations, 1))) return {};
  return fmt::format("no report {} iterations after its period was found", j.analyzed_iterations);
}

}  // namespace

double pdpa_serve_unmeasured(const Snapshot& s, std::vector<PdpaWork>& w, int machine, int& used,
                             const PdpaParams& p, const std::vector<int>& caps) {
  const int n = static_cast<int>(w.size());
  double next_deadline = -1;
  if (n == 0) return next_deadline;
  const int share = std::max(1, machine / n);
  for (int i = 0; i < n; ++i) {
    const JobView& j = s.jobs[static_cast<std::size_t>(i)];
    PdpaJobMemory& m = *w[static_cast<std::size_t>(i)].mem;
    if (j.perf.valid || m.state != PdpaState::no_ref) {
      m.unmeasured = false;  // measured
      continue;
    }
    double at = -1;
    const std::string because = unmeasured_because(s, j, p, at);
    if (because.empty()) {
      m.unmeasured = false;  // its report may still come
      if (at >= 0 && (next_deadline < 0 || at < next_deadline)) next_deadline = at;
      continue;
    }
    const bool first_time = !m.unmeasured;
    m.unmeasured = true;
    PdpaWork& x = w[static_cast<std::size_t>(i)];
    int target = std::min(std::max(j.request, 1), share);
    if (!caps.empty()) target = std::min(target, std::max(caps[static_cast<std::size_t>(i)], 1));
    int got = 0;
    while (x.cpus + got < target && used < machine) {
      ++got;
      ++used;
    }
    while (x.cpus + got < target) {  // from the largest holder above the share
      std::size_t donor = w.size();
      for (std::size_t k = 0; k < w.size(); ++k) {
        if (static_cast<int>(k) != i && w[k].cpus > share && (donor == w.size() || w[k].cpus > w[donor].cpus)) donor = k;
      }
      if (donor == w.size()) break;
      --w[donor].cpus;
      PdpaJobMemory& dm = *w[donor].mem;
      if (dm.lent > 0) --dm.lent;
      dm.previous = {};
      dm.added = 0;
      if (dm.state == PdpaState::stable) dm.stable_efficiency = -1;
      w[donor].why = fmt::format("{}: gives 1 CPU to unmeasured job {} (equal share {}) → {}", state_label(dm), j.id,
                                 share, cpus_text(w[donor].cpus));
      ++got;
    }
    // Whatever it holds beyond the share it would keep if one more job came counts as lent: it never holds
    // back admission, and an arrival takes it back before the equal share is worked out again.
    const int share_next = std::max(1, machine / (n + 1));
    m.lent = std::max(m.lent + got, x.cpus + got - share_next);
    if (got > 0 || first_time) {
      x.cpus += got;
      x.why = fmt::format("UNMEASURED: {}; settled at no less than an equal share ({}) → {}", because,
                          cpus_text(target), cpus_text(x.cpus));
    }
  }
  return next_deadline;
}

namespace {

// Hands out idle CPUs one at a time, in turn, to the jobs `to` still below their request; counts them in
// `lent`.
void lend_round_robin(const Snapshot& s, std::vector<PdpaWork>& w, const std::vector<std::size_t>& to,
                      std::vector<int>& lent, int machine, int& used) {
  // One CPU to each job of `to` below its request, in that order, pass after pass, until the machine is full
  // or every job holds its request. Worked out in closed form rather than a CPU at a time (1,024 CPUs made
  // this a tenth of cosched-sim's time): k full passes give job i min(k, deficit_i) for the largest k whose
  // total fits, then one more each, in order, to the jobs still short, while CPUs are left. Same result.
  const int left = machine - used;
  if (left <= 0 || to.empty()) return;
  auto deficit = [&](std::size_t i) { return std::max(std::max(s.jobs[i].request, 1) - w[i].cpus, 0); };
  auto given_after = [&](int k) {
    std::int64_t total = 0;
    for (std::size_t i : to) total += std::min(k, deficit(i));
    return total;
  };
  int most = 0;
  for (std::size_t i : to) most = std::max(most, deficit(i));
  int lo = 0;  // the largest k with given_after(k) <= left
  for (int hi = most; lo < hi;) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (given_after(mid) <= left) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  int rest = left - static_cast<int>(given_after(lo));
  for (std::size_t i : to) {
    const int d = deficit(i);
    int give = std::min(lo, d);
    if (d > lo && rest > 0) {  // the partial pass
      ++give;
      --rest;
    }
    w[i].cpus += give;
    lent[i] += give;
    used += give;
  }
}

// What is still idle after every loan goes to the jobs in DEC, when nothing else could use it before an
// arrival: no job waits in the queue, and every job not in DEC holds its request. A DEC step would only idle
// the CPUs it frees, and cost the job a team resize and a measurement at the smaller allocation. Seen on 16
// CPUs (docs/performance.md, "A job alone under PDPA"): a lone BT.A measured at 0.66-0.69 efficiency (target
// 0.7) stepped down from 16 CPUs to 7 in 3.4 s, one CPU per report, with the others idle. The job stays in
// DEC and holds the CPUs as a loan, which an arrival or an INC claim takes back; from then on its reports
// step it down again, as §4.2.3 has it, for the jobs that can use the CPUs.
void lend_to_dec_jobs_nobody_else_needs(const Snapshot& s, std::vector<PdpaWork>& w, int machine, int& used) {
  if (used >= machine) return;
  std::vector<std::size_t> dec;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const int request = std::max(s.jobs[i].request, 1);
    if (w[i].mem->state != PdpaState::dec) {
      if (w[i].cpus < request) return;  // a job that may still take CPUs (measuring, claiming)
    } else if (w[i].cpus < request && gains_from_more(*w[i].mem, w[i].cpus, s.jobs[i].perf)) {
      dec.push_back(i);
    }
  }
  std::vector<int> lent(w.size(), 0);
  lend_round_robin(s, w, dec, lent, machine, used);
  for (std::size_t i : dec) {
    if (lent[i] == 0) continue;
    w[i].mem->lent += lent[i];
    w[i].why += fmt::format("{}{} idle that nobody else can use: lent (taken back when a job arrives or claims) → {}",
                            w[i].why.empty() ? "DEC: " : "; ", cpus_text(lent[i]), cpus_text(w[i].cpus));
  }
}

}  // namespace

void pdpa_lend_free(const Snapshot& s, std::vector<PdpaWork>& w, int machine, int& used, const PdpaParams& p,
                    int waiting) {
  if (p.strict != 0 || used >= machine || waiting > 0) return;
  // Order: unmeasured first, then by measured efficiency, highest first.
  // Never to a job known to waste them: in DEC, measured below target_eff now, or with a larger allocation
  // below target_eff in its history.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const PdpaJobMemory& m = *w[i].mem;
    const Perf& perf = s.jobs[i].perf;
    // Only to jobs whose state machine is at rest (STABLE) or that cannot be measured (unmeasured): an INC
    // job grows through its own transitions, and a NO_REF one is about to be judged at what it holds.
    if (w[i].cpus >= std::max(s.jobs[i].request, 1)) continue;
    if (!(m.state == PdpaState::stable || m.unmeasured)) continue;
    if (perf.valid && perf.efficiency < p.target_eff) continue;
    if (held_back_by_history(m, w[i].cpus, p) != nullptr) continue;
    order.push_back(i);
  }
  auto rank = [&](std::size_t i) {
    const PdpaJobMemory& m = *w[i].mem;
    if (m.unmeasured || !s.jobs[i].perf.valid) return 2.0;
    return std::min(s.jobs[i].perf.efficiency, 1.0);
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rank(a) > rank(b); });
  std::vector<int> lent(w.size(), 0);
  lend_round_robin(s, w, order, lent, machine, used);
  // A job at its request takes no loan (lend_round_robin): the dearer tests below are not asked of it.
  auto at_request = [&](std::size_t i) { return w[i].cpus >= std::max(s.jobs[i].request, 1); };
  // What nobody above can take goes to the jobs at rest (STABLE) that were measured to waste CPUs: a CPU
  // used at a poor efficiency still does more than an idle one, and an arrival takes it back. Seen on 16
  // CPUs (docs/performance.md, "A burst on 16 CPUs"): an MG job measured at 0.46 efficiency on 3 CPUs while
  // eight jobs shared the memory bus ran on 1 CPU for 9 s with the other 15 idle. A job in DEC is still
  // being judged at what it holds: it waits for its next report.
  if (used < machine) {
    std::vector<std::size_t> rest;
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (!(w[i].mem->state == PdpaState::stable || w[i].mem->unmeasured) || at_request(i)) continue;
      if (gains_from_more(*w[i].mem, w[i].cpus, s.jobs[i].perf)) rest.push_back(i);  // else a CPU would buy nothing
    }
    lend_round_robin(s, w, rest, lent, machine, used);
  }
  // Work conservation in every state: what is still idle goes to the jobs still being measured (NO_REF) or
  // claiming (INC), which are then judged at what they hold. Seen on 2 CPUs: a job with one long region
  // (never measured) stayed on 1 CPU for the 4.3 s it ran after its neighbour left, the other CPU idle.
  if (used < machine) {
    std::vector<std::size_t> measuring;
    for (std::size_t i = 0; i < w.size(); ++i) {
      const PdpaState st = w[i].mem->state;
      if (!(st == PdpaState::no_ref || st == PdpaState::inc) || at_request(i)) continue;
      if (gains_from_more(*w[i].mem, w[i].cpus, s.jobs[i].perf)) measuring.push_back(i);
    }
    lend_round_robin(s, w, measuring, lent, machine, used);
  }
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (lent[i] == 0) continue;
    PdpaJobMemory& m = *w[i].mem;
    m.lent += lent[i];
    if (m.state == PdpaState::stable) m.stable_efficiency = -1;  // judged afresh at the larger allocation
    m.previous = {};
    m.added = 0;
    w[i].why = fmt::format("{}: {} idle, lent (work conservation; taken back when a job arrives) → {}",
                           state_label(m), cpus_text(lent[i]), cpus_text(w[i].cpus));
  }
  lend_to_dec_jobs_nobody_else_needs(s, w, machine, used);
}

}  // namespace cosched::policy
