#include "contention_model.hpp"

#include <algorithm>
#include <cmath>

namespace cosched::sensors {

double model_demand(const Demand& d, const Calibration& c) {
  return std::clamp(d.memory_fraction, 0.0, 1.0) * std::max(d.threads, 0) * c.thread_bytes_per_s;
}

std::vector<double> model_slowdowns(const std::vector<Demand>& running, const Calibration& c, double* excess) {
  std::vector<double> s(running.size(), 1.0);
  double e = 0;
  if (c.calibrated()) {
    double total = 0;
    for (const auto& d : running) total += model_demand(d, c);
    e = std::max(0.0, total / c.machine_bytes_per_s - 1.0);
    for (std::size_t i = 0; i < running.size(); ++i) {
      s[i] = 1.0 + c.contention * std::clamp(running[i].memory_fraction, 0.0, 1.0) * e;
    }
  }
  if (excess != nullptr) *excess = e;
  return s;
}

bool infer_memory_fractions(const std::vector<double>& slowdowns, const std::vector<int>& threads,
                            double prior_demand, const Calibration& c, std::vector<double>& fractions,
                            double* excess) {
  fractions.clear();
  if (!c.calibrated() || slowdowns.size() != threads.size() || slowdowns.empty()) return false;
  double worst = 0;
  double weighted = 0;  // Σ n_i (s_i − 1)
  for (std::size_t i = 0; i < slowdowns.size(); ++i) {
    const double over = std::max(slowdowns[i] - 1.0, 0.0);
    worst = std::max(worst, over);
    weighted += std::max(threads[i], 0) * over;
  }
  if (worst <= c.min_slowdown) return false;
  // D = prior + Σ m_i n_i b with m_i = (s_i − 1)/(k e), and e = D/B − 1:
  //   e² + (1 − prior/B)·e − b·Σ n_i (s_i − 1) / (k·B) = 0, whose positive root is e.
  const double r0 = std::max(prior_demand, 0.0) / c.machine_bytes_per_s;
  const double K = c.thread_bytes_per_s * weighted / (c.contention * c.machine_bytes_per_s);
  const double p = 1.0 - r0;
  const double e = (-p + std::sqrt(p * p + 4.0 * K)) / 2.0;
  if (!(e > 0) || !std::isfinite(e)) return false;
  fractions.resize(slowdowns.size());
  for (std::size_t i = 0; i < slowdowns.size(); ++i) {
    // A slowdown within the noise band is no evidence of memory traffic: where k·e is small (weak
    // contention) dividing it by k·e would turn a cache-resident job's noise into a large fraction.
    const double over = slowdowns[i] - 1.0;
    fractions[i] = over <= c.min_slowdown ? 0.0 : std::clamp(over / (c.contention * e), 0.0, 1.0);
  }
  if (excess != nullptr) *excess = e;
  return true;
}

}  // namespace cosched::sensors
