// PDPA transitions, one function per state of §4.2 (Corbalan, Martorell, Labarta, TPDS 2005).
#include "pdpa_state.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace cosched::policy {

const char* to_string(PdpaState s) noexcept {
  switch (s) {
    case PdpaState::no_ref: return "NO_REF";
    case PdpaState::inc: return "INC";
    case PdpaState::dec: return "DEC";
    case PdpaState::stable: return "STABLE";
  }
  return "?";
}

std::string cpus_text(int n) { return n == 1 ? std::string("1 CPU") : fmt::format("{} CPUs", n); }

const char* state_label(const PdpaJobMemory& m) noexcept {
  return m.state == PdpaState::no_ref && m.unmeasured ? "UNMEASURED" : to_string(m.state);
}

int default_step(int cpus) noexcept {
  // The paper names step as a parameter (§4.2) but gives it no value. Our choice: one CPU per 15 managed
  // CPUs (4 on a 60-CPU machine like the paper's), at least 1.
  return std::max(1, static_cast<int>(std::lround(static_cast<double>(cpus) / 15.0)));
}

double effective_target_eff(const PdpaParams& p, int queued, int running) noexcept {
  if (p.load_target == 0 || queued <= 0 || running <= 0) return p.target_eff;
  const double pressure = std::min(1.0, static_cast<double>(queued) / static_cast<double>(running));
  return p.target_eff + (p.high_eff - p.target_eff) / 2 * pressure;
}

namespace {

PdpaPoint point_at(int cpus, const Perf& perf) {
  return PdpaPoint{cpus, perf.speedup, perf.efficiency, perf.iteration_s};
}

// A job at P whose efficiency exceeds high_eff would claim CPUs (INC). At one CPU every job measures
// E = 1 against a one-CPU baseline, so a fully serial job would claim a second CPU, waste it (E = 0.5), be
// cut back, and claim again for ever. Not in the paper (its jobs start large and only shrink to one CPU at
// the end); our rule: a remembered point at more CPUs with an efficiency below target_eff holds the job back,
// until its measured behaviour changes (then the memory is cleared: remember_point).
}  // namespace

const PdpaPoint* held_back_by_history(const PdpaJobMemory& m, int cpus, const PdpaParams& p) {
  for (const PdpaPoint& q : m.seen) {
    if (q.cpus > cpus && q.efficiency < p.target_eff) return &q;
  }
  return nullptr;
}

bool gains_from_more(const PdpaJobMemory& m, int cpus, const Perf& perf) noexcept {
  // At one CPU the speedup over one CPU is 1 whatever a report says (a waiting-time efficiency below 1 there
  // is time no thread worked, not a slower CPU).
  double here = cpus == 1 ? 1.0 : -1.0;
  if (cpus != 1 && perf.valid && perf.cpus == cpus) here = perf.speedup;
  for (const PdpaPoint& q : m.seen) {
    if (here < 0 && q.cpus == cpus) here = q.speedup;
  }
  if (here <= 0) return true;
  auto buys_nothing = [here](int at, double speedup) { return at > 0 && speedup > 0 && speedup <= here * (1 + kLoanGain); };
  for (const PdpaPoint& q : m.seen) {
    if (q.cpus > cpus && buys_nothing(q.cpus, q.speedup)) return false;
  }
  return !(perf.valid && perf.cpus > cpus && buys_nothing(perf.cpus, perf.speedup));
}

namespace {

PdpaStep held_back(const PdpaJobMemory& m, const PdpaPoint& now, const PdpaPoint& bad, const PdpaParams& p) {
  PdpaStep st{m, now.cpus, 0,
              fmt::format("STABLE: efficiency {:.2f} > high_eff {:.2f} at {}, but its history has {:.2f} < target_eff "
                          "{:.2f} at {}: no new claim until its behaviour changes",
                          now.efficiency, p.high_eff, cpus_text(now.cpus), bad.efficiency, p.target_eff,
                          cpus_text(bad.cpus))};
  st.next.state = PdpaState::stable;
  st.next.stable_efficiency = now.efficiency;
  st.next.added = 0;
  return st;
}

// Keeps the latest point per allocation. A point at an allocation already remembered whose efficiency moved
// by more than stable_band, or whose iteration time moved by more than twice that (relative), means the job's
// behaviour changed: everything else remembered is forgotten.
void remember_point(PdpaJobMemory& m, const PdpaPoint& now, const PdpaParams& p) {
  PdpaPoint* slot = nullptr;
  for (PdpaPoint& q : m.seen) {
    if (q.cpus == now.cpus) slot = &q;
  }
  const bool time_moved = slot != nullptr && slot->iteration_s > 0 && now.iteration_s > 0 &&
                          std::fabs(now.iteration_s / slot->iteration_s - 1.0) > 2 * p.stable_band;
  // At one CPU the speedup is 1 by definition: an efficiency that moves there (a waiting-time estimate reads
  // 0.85-1.0 at one CPU, where a team of 2 shares it) says nothing of the job's behaviour.
  const bool eff_moved = now.cpus > 1 && slot != nullptr && std::fabs(slot->efficiency - now.efficiency) > p.stable_band;
  if (slot != nullptr && (eff_moved || time_moved)) {
    for (PdpaPoint& q : m.seen) q = PdpaPoint{};
    slot = &m.seen[0];
  }
  if (slot == nullptr) {
    for (PdpaPoint& q : m.seen) {
      if (q.cpus == 0) {
        slot = &q;
        break;
      }
    }
  }
  if (slot == nullptr) {  // full: drop the oldest (the first), keep the order of arrival
    for (std::size_t i = 1; i < std::size(m.seen); ++i) m.seen[i - 1] = m.seen[i];
    slot = &m.seen[std::size(m.seen) - 1];
  }
  *slot = now;
}

// Growth is granted by the caller (it depends on the free CPUs); the step records what is wanted.
PdpaStep to_inc(const PdpaJobMemory& m, const PdpaPoint& now, const PdpaParams& p, std::string reason) {
  PdpaStep st{m, now.cpus, p.step, std::move(reason)};
  st.next.state = PdpaState::inc;
  st.next.previous = now;  // INC compares the next report with this one (§4.2.2)
  st.next.added = 0;
  return st;
}

// §4.2.1/§4.2.3: "the application will receive the maximum between (P-step) and one processor".
PdpaStep to_dec(const PdpaJobMemory& m, const PdpaPoint& now, const PdpaParams& p, const std::string& why) {
  const int after = std::max(now.cpus - p.step, 1);
  std::string reason = after < now.cpus
                           ? fmt::format("DEC: {} at {} → {}", why, cpus_text(now.cpus), cpus_text(after))
                           : fmt::format("DEC: {} at {}; already at the minimum", why, cpus_text(now.cpus));
  PdpaStep st{m, after, 0, std::move(reason)};
  st.next.state = PdpaState::dec;
  st.next.previous = now;
  st.next.added = 0;
  return st;
}

// STABLE keeps the allocation; `stable_at` is the efficiency it is stable at (-1: the next report sets it,
// because the allocation has just changed and the last measurement belongs to the old one).
PdpaStep to_stable(const PdpaJobMemory& m, int cpus, double stable_at, std::string reason) {
  PdpaStep st{m, cpus, 0, std::move(reason)};
  st.next.state = PdpaState::stable;
  st.next.stable_efficiency = stable_at;
  st.next.added = 0;
  return st;
}

// §4.2.1 (NO_REF): compare the efficiency with the two thresholds only. Also used by INC when no CPUs were
// added since its last report (it waited for free CPUs), since there is then no increment to judge.
PdpaStep classify_by_efficiency(const PdpaJobMemory& m, const PdpaPoint& now, int request, const PdpaParams& p) {
  const double e = now.efficiency;
  if (e > p.high_eff) {
    if (now.cpus >= request) {
      return to_stable(m, now.cpus, e,
                       fmt::format("STABLE: efficiency {:.2f} > high_eff {:.2f} but already at its request of {}",
                                   e, p.high_eff, cpus_text(request)));
    }
    if (const PdpaPoint* bad = held_back_by_history(m, now.cpus, p)) return held_back(m, now, *bad, p);
    return to_inc(m, now, p,
                  fmt::format("INC: efficiency {:.2f} > high_eff {:.2f} at {}", e, p.high_eff,
                              cpus_text(now.cpus)));
  }
  if (e < p.target_eff) {
    return to_dec(m, now, p, fmt::format("efficiency {:.2f} < target_eff {:.2f}", e, p.target_eff));
  }
  return to_stable(m, now.cpus, e,
                   fmt::format("STABLE: efficiency {:.2f} within [target_eff {:.2f}, high_eff {:.2f}] at {}", e,
                               p.target_eff, p.high_eff, cpus_text(now.cpus)));
}

// §4.2.2 (INC): keep growing only if (1) efficiency > high_eff, (2) the speedup grew and (3) the relative
// speedup beats the processor ratio times high_eff.
PdpaStep on_inc(const PdpaJobMemory& m, const PdpaPoint& now, int request, const PdpaParams& p) {
  const PdpaPoint& before = m.previous;
  if (m.added <= 0 || before.cpus <= 0 || before.cpus >= now.cpus) {
    return classify_by_efficiency(m, now, request, p);
  }
  // "percentage of additional processors" read as the ratio P_now / P_before: perfect scaling gives a
  // relative speedup equal to that ratio, so condition (3) asks the increment itself to be high_eff-efficient.
  // (The ratio ΔP/P_before would make (3) pass for almost any speedup gain.)
  const double ratio = static_cast<double>(now.cpus) / before.cpus;
  // RelativeSpeedup: from execution times when both exist, else from speedups (§4.2.2).
  const bool timed = now.iteration_s > 0 && before.iteration_s > 0;
  const double relative = timed                  ? before.iteration_s / now.iteration_s
                          : before.speedup > 0.0 ? now.speedup / before.speedup
                                                 : 0.0;
  std::string failed;
  if (!(now.efficiency > p.high_eff)) {
    failed = fmt::format("efficiency {:.2f} ≤ high_eff {:.2f}", now.efficiency, p.high_eff);
  } else if (!(now.speedup > before.speedup)) {
    failed = fmt::format("speedup did not grow ({:.2f} at {} → {:.2f} at {})", before.speedup,
                         cpus_text(before.cpus), now.speedup, cpus_text(now.cpus));
  } else if (!(relative > ratio * p.high_eff)) {
    failed = fmt::format("relative speedup {:.2f} ≤ {:.2f} ({}→{} CPUs × high_eff {:.2f})", relative,
                         ratio * p.high_eff, before.cpus, now.cpus, p.high_eff);
  }
  if (failed.empty()) {
    if (now.cpus >= request) {
      return to_stable(m, now.cpus, now.efficiency,
                       fmt::format("STABLE: still scaling but already at its request of {}", cpus_text(request)));
    }
    return to_inc(m, now, p,
                  fmt::format("INC: efficiency {:.2f} > high_eff {:.2f}, relative speedup {:.2f} > {:.2f} at {}",
                              now.efficiency, p.high_eff, relative, ratio * p.high_eff, cpus_text(now.cpus)));
  }
  // INC→STABLE gives the last step back only when the efficiency is below target_eff (§4.2.2).
  if (now.efficiency < p.target_eff) {
    const int after = std::max(now.cpus - m.added, 1);
    PdpaStep st = to_stable(m, after, -1,
                            fmt::format("STABLE: {}; efficiency {:.2f} < target_eff {:.2f}, "
                                        "gives back the last {} → {}",
                                        failed, now.efficiency, p.target_eff, cpus_text(m.added), cpus_text(after)));
    st.next.previous = now;
    return st;
  }
  PdpaStep st = to_stable(m, now.cpus, now.efficiency,
                          fmt::format("STABLE: {}; keeps {}", failed, cpus_text(now.cpus)));
  st.next.previous = now;
  return st;
}

// §4.2.3 (DEC): below target_eff shrink again, else settle.
PdpaStep on_dec(const PdpaJobMemory& m, const PdpaPoint& now, const PdpaParams& p) {
  if (now.efficiency < p.target_eff) {
    return to_dec(m, now, p, fmt::format("efficiency {:.2f} < target_eff {:.2f}", now.efficiency, p.target_eff));
  }
  return to_stable(m, now.cpus, now.efficiency,
                   fmt::format("STABLE: efficiency {:.2f} ≥ target_eff {:.2f} at {}; keeps them", now.efficiency,
                               p.target_eff, cpus_text(now.cpus)));
}

// §4.2.4 (STABLE): keep the allocation unless the performance really changed (band) and the job still has
// re-evaluations left (ping-pong limit).
PdpaStep on_stable(const PdpaJobMemory& m, const PdpaPoint& now, int request, const PdpaParams& p) {
  PdpaStep st{m, now.cpus, 0, {}};
  const double e = now.efficiency;
  if (m.stable_efficiency < 0) {  // first report at the allocation it settled on: the reference
    st.next.stable_efficiency = e;
    return st;
  }
  const bool rose = e > p.high_eff && e > m.stable_efficiency + p.stable_band && now.cpus < request &&
                    held_back_by_history(m, now.cpus, p) == nullptr;
  const bool fell = e < p.target_eff && e < m.stable_efficiency - p.stable_band;
  if ((!rose && !fell) || m.stable_exits >= p.max_stable_exits) return st;
  const std::string why = fmt::format("efficiency moved from {:.2f} to {:.2f} (re-evaluation {} of {})",
                                      m.stable_efficiency, e, m.stable_exits + 1, p.max_stable_exits);
  PdpaStep out = rose ? to_inc(m, now, p, fmt::format("INC: {} > high_eff {:.2f} at {}", why, p.high_eff,
                                                      cpus_text(now.cpus)))
                      : to_dec(m, now, p, fmt::format("{} < target_eff {:.2f}", why, p.target_eff));
  out.next.stable_exits = m.stable_exits + 1;
  return out;
}

}  // namespace

PdpaStep pdpa_on_report(const PdpaJobMemory& m, int cpus, int request, const Perf& perf, const PdpaParams& p) {
  PdpaStep st{m, cpus, 0, {}};
  st.next.last_seq = perf.seq;
  // A report measured with another allocation than the one held now describes a past decision: acting on
  // it would repeat that decision. It is consumed (never looked at twice) and skipped.
  if (perf.cpus > 0 && perf.cpus != cpus) return st;
  const PdpaPoint now = point_at(cpus, perf);
  PdpaJobMemory seen = m;
  seen.last_seq = perf.seq;
  remember_point(seen, now, p);
  switch (m.state) {
    case PdpaState::no_ref: return classify_by_efficiency(seen, now, request, p);
    case PdpaState::inc: return on_inc(seen, now, request, p);
    case PdpaState::dec: return on_dec(seen, now, p);
    case PdpaState::stable: return on_stable(seen, now, request, p);
  }
  return st;
}

PdpaStep pdpa_on_param_change(const PdpaJobMemory& m, int cpus, int request, const Perf& perf,
                              const PdpaParams& p) {
  PdpaStep st{m, cpus, 0, {}};
  if (m.state != PdpaState::stable || !perf.valid || (perf.cpus > 0 && perf.cpus != cpus)) return st;
  const PdpaPoint now = point_at(cpus, perf);
  if (now.efficiency > p.high_eff && cpus < request) {
    return to_inc(m, now, p,
                  fmt::format("INC: parameters changed; efficiency {:.2f} > high_eff {:.2f} at {}", now.efficiency,
                              p.high_eff, cpus_text(cpus)));
  }
  if (now.efficiency < p.target_eff) {
    return to_dec(m, now, p,
                  fmt::format("parameters changed; efficiency {:.2f} < target_eff {:.2f}", now.efficiency,
                              p.target_eff));
  }
  return st;
}

}  // namespace cosched::policy
