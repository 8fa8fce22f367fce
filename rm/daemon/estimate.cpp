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

ChosenEstimate choose_estimate(const policy::Perf& measured, const WaitingEstimate& waiting, int allocation) {
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
  if (m_now) {
    out.perf = m;
    if (w_now && w.efficiency > m.efficiency * (1 + kSpeedupTolerance) + 2 * waiting.std_error) {
      out.note = fmt::format("measured efficiency {:.2f} below the waiting-time efficiency {:.2f}: work grows with "
                             "the CPUs; the measured one is used", m.efficiency, w.efficiency);
    }
  } else if (w_now || (w.valid && !m.valid)) {
    out.perf = w;
  } else if (m.valid) {
    out.perf = m;
  }
  if (out.perf.valid) out.perf.seq = measured.seq + waiting.seq;
  return out;
}

}  // namespace cosched::rm
