#include "estimate.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace cosched::rm {

policy::Perf waiting_perf(const WaitingEstimate& w) {
  policy::Perf p;
  if (!w.valid || w.cpus < 1) return p;
  p.valid = true;
  p.kind = policy::EstimateKind::waiting_time;
  p.efficiency = std::clamp(w.efficiency, 1e-6, 1.0);
  p.speedup = p.efficiency * w.cpus;
  p.cpus = w.cpus;
  p.samples = std::max(w.intervals, 1);
  p.spread = 2 * w.std_error / p.efficiency;
  p.confidence = std::clamp(1 - w.std_error / p.efficiency, 0.0, 1.0);
  p.seq = w.seq;
  return p;
}

namespace {

// The two disagree, the measured one lower, beyond the tolerance and both uncertainties.
bool lower_beyond_noise(const policy::Perf& measured, const WaitingEstimate& waiting) {
  if (!measured.valid || !waiting.valid || measured.cpus != waiting.cpus) return false;
  const double m_unc = measured.spread * measured.efficiency / 2;
  const double w_unc = 2 * waiting.std_error;
  return waiting.efficiency > measured.efficiency * (1 + kSpeedupTolerance) + m_unc + w_unc;
}

// A speedup fitted from two close team sizes (a baseline at 4, the job at 5) extrapolates to one CPU through a
// fraction those two points pin poorly (docs/selfanalyzer.md, "Which two points"): in cosched-sim's 16-CPU burst
// one read 0.59 at 5 CPUs where the curve gives 0.96. Only one anchored at one CPU, or within a factor of two of
// its CPUs (our choice), is evidence against the waiting times.
bool well_anchored(const policy::Perf& measured) {
  return measured.baseline_cpus <= 1 || 2 * measured.baseline_cpus <= measured.cpus;
}

}  // namespace

bool measured_below_waiting(const policy::Perf& measured, const WaitingEstimate& waiting) {
  return lower_beyond_noise(measured, waiting) && well_anchored(measured);
}

ChosenEstimate choose_estimate(const policy::Perf& measured, const WaitingEstimate& waiting, int allocation,
                               int below_in_a_row) {
  ChosenEstimate out;
  policy::Perf m = measured;
  const policy::Perf w = waiting_perf(waiting);
  if (m.valid) {
    m.kind = policy::EstimateKind::measured_speedup;
    m.confidence = std::clamp(1 - m.spread, 0.0, 1.0);
    if (m.speedup > m.cpus * (1 + kSpeedupTolerance)) {
      out.measured_failed = true;
      out.note = fmt::format("measured speedup {:.2f} above its {} CPUs: a failed measurement", m.speedup, m.cpus);
    } else if (w.valid && w.cpus == m.cpus &&
               m.efficiency > w.efficiency * (1 + kSpeedupTolerance) + 2 * waiting.std_error) {
      out.measured_failed = true;
      out.note = fmt::format("measured efficiency {:.2f} above the waiting-time efficiency {:.2f} at {} CPUs: a "
                             "failed measurement", m.efficiency, w.efficiency, m.cpus);
    }
    if (out.measured_failed) m.valid = false;
  }
  const bool m_now = m.valid && m.cpus == allocation;
  const bool w_now = w.valid && w.cpus == allocation;
  if (m_now && w_now) {
    const double m_unc = m.spread * m.efficiency / 2;
    const double w_unc = 2 * waiting.std_error;
    // A precise measurement needs no second one (our choice: a spread within 5 %, what a quiet machine shows).
    const bool confirmed = below_in_a_row >= kInflationConfirm || m.spread <= kPreciseSpread;
    if (allocation == 1) {
      out.perf = m;  // at one CPU the waiting times say nothing of scaling; the measured report's fit does
    } else if (measured_below_waiting(m, waiting) && confirmed) {
      out.perf = m;
      out.note = fmt::format("measured efficiency {:.2f} below the waiting-time efficiency {:.2f}: work grows with "
                             "the CPUs; the measured one is used", m.efficiency, w.efficiency);
    } else if (measured_below_waiting(m, waiting)) {
      out.perf = w;
      out.note = fmt::format("measured efficiency {:.2f} below the waiting-time efficiency {:.2f}, once: the "
                             "waiting-time one is used until another report confirms it", m.efficiency,
                             w.efficiency);
    } else if (lower_beyond_noise(m, waiting)) {
      out.perf = w;
      out.note = fmt::format("measured efficiency {:.2f} below the waiting-time efficiency {:.2f}, from a baseline at "
                             "{} CPUs, too close to {} to pin the fit: the waiting-time one is used", m.efficiency,
                             w.efficiency, m.baseline_cpus, m.cpus);
    } else {
      out.perf = m_unc <= w_unc ? m : w;  // they agree: the more certain one (the measured one on ties)
    }
  } else if (m_now) {
    out.perf = m;
  } else if (w_now || (w.valid && !m.valid)) {
    out.perf = w;
  } else if (m.valid) {
    out.perf = m;
  }
  if (out.perf.valid) out.perf.seq = measured.seq + waiting.seq;
  return out;
}

}  // namespace cosched::rm
