#include "report_check.hpp"

#include <cmath>

#include "cosched/protocol.hpp"

namespace cosched::rm {

namespace {

// Bounds on what a job may report.
constexpr double kMaxSpeedup = 4.0 * proto::kMaxCpus;  // superlinear speedups exist, but not unbounded
constexpr double kMaxEfficiency = 8.0;
constexpr double kMaxSeconds = 1e6;
constexpr double kMaxSpread = 100.0;

bool in_range(double v, double lo, double hi) { return std::isfinite(v) && v >= lo && v <= hi; }

std::string bad(const char* field, double v) { return std::string(field) + "=" + std::to_string(v); }

}  // namespace

std::string check_report(const policy::Perf& p) {
  if (!in_range(p.speedup, 1e-6, kMaxSpeedup)) return bad("speedup", p.speedup);
  if (!in_range(p.efficiency, 1e-6, kMaxEfficiency)) return bad("efficiency", p.efficiency);
  // A waiting-time estimate times no iteration (0); a measured speedup always does.
  const double min_iteration = p.kind == policy::EstimateKind::waiting_time ? 0 : 1e-9;
  if (!in_range(p.iteration_s, min_iteration, kMaxSeconds)) return bad("iteration_s", p.iteration_s);
  if (!in_range(p.baseline_s, 0, kMaxSeconds)) return bad("baseline_s", p.baseline_s);
  if (!in_range(p.spread, 0, kMaxSpread)) return bad("spread", p.spread);
  if (p.cpus < 1 || p.cpus > proto::kMaxCpus) return bad("cpus", p.cpus);
  if (p.samples < 1 || p.samples > 1000000000) return bad("samples", p.samples);
  if (!(p.amdahl_f == -1.0 || in_range(p.amdahl_f, 0, 1))) return bad("amdahl_f", p.amdahl_f);
  return {};
}

}  // namespace cosched::rm
