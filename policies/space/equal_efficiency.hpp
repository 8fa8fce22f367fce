// Equal_efficiency (Nguyen, Zahorjan, Vaswani, JSSPP 1996 [PDPA paper ref. 16]; described as a comparator in
// Corbalan, Martorell, Labarta, TPDS 2005, §2, §3.3 and §5): "allocates more processors to those applications
// that have the best efficiency using extrapolated values", so that the efficiencies of the running jobs come
// out as equal as whole CPUs allow. No target efficiency: every CPU is handed out while some job still wants
// one. Reallocates on every event (the paper's §5.1 notes how often that moves CPUs).
#pragma once

#include <optional>

#include "policies/policy.hpp"
#include "policies/queue_sharing.hpp"

namespace cosched::policy {

class EqualEfficiency final : public TabledPolicy<EqualEfficiency> {
 public:
  [[nodiscard]] std::string_view name() const override { return "equal_eff"; }
  [[nodiscard]] std::unique_ptr<Policy> clone() const override { return std::make_unique<EqualEfficiency>(*this); }
  [[nodiscard]] bool uses_speedup() const override { return true; }  // extrapolated efficiencies
  Decision decide(const Snapshot& s) override;
  static const ParamTable<EqualEfficiency>& param_table();

 private:
  QueueSharing sharing_;
};

// Amdahl's law with parallel fraction f (PDPA paper §3.1, "Amdahl's Factor"):
//   S(p) = 1 / ((1 - f) + f / p),   E(p) = S(p) / p = 1 / (p (1 - f) + f).
double amdahl_efficiency(double f, int p) noexcept;

// The job's parallel fraction: Perf::amdahl_f when the SelfAnalyzer fitted it, else solved from the one point
// it reported, E(P) = 1 / (P (1 - f) + f)  ⇒  f = (P - 1/E) / (P - 1) for P > 1, clamped to [0, 1]
// (superlinear points give f = 1). nullopt when there is no usable measurement yet.
std::optional<double> parallel_fraction(const Perf& perf) noexcept;

// The same for a job: its report, else, when that report was taken at one CPU (which says nothing about
// scaling: a waiting-time efficiency there is about 1 whatever the job), the latest point of its history at
// more than one CPU. Without it a job measured at 2 CPUs, then given 1, would fall back to an equal share, be
// measured at 2 again, and so on.
std::optional<double> parallel_fraction(const JobView& job) noexcept;

// The allocation itself, one count per job (same order). Jobs without a measurement keep their equal share
// (equal_shares()); the rest of the machine goes to the measured jobs, one CPU at a time, always to the job
// whose extrapolated efficiency E(p + 1) is highest (ties: lowest id), never above a request.
std::vector<int> equal_efficiency_shares(const std::vector<JobView>& jobs, int cpus);

}  // namespace cosched::policy
