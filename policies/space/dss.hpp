// DSS, Dynamic Space Sharing (Polychronopoulos, Nikolopoulos, Papatheodorou, Martorell, Labarta, Navarro,
// "An Efficient Kernel-level Scheduling Methodology for Multiprogrammed Shared Memory Multiprocessors",
// §3.1, eqs. 1–3): every job gets a share of the P CPUs proportional to its request ρ_i,
//   W = Σ ρ_i (1),   R_i = ⌊ρ_i P / W⌋ (2),   x_i = R_i + δ_i, δ_i = 1 if R_i < 1 else 0 (3),
// and runs on min(x_i, ρ_i) CPUs. δ keeps every job on at least one CPU (no starvation), so Σ x_i may exceed
// P; this space-sharing version then takes the excess back from the largest allocations (never below one).
//
// Hook for the time-sharing variants of §3.2 (SW-DSS, SSW-DSS, VTQ-DSS, a later issue): they pick the gang
// that runs this quantum (Σ ρ ≤ 3P, eq. 5), call dss_partition() on the gang's requests only, and mark the
// other jobs runnable = false. DSS's second level, affinity-preserving "selective scheduling", is a placement
// requirement (docs/policies.md), not a count, so it is not here.
#pragma once

#include <cstdint>
#include <vector>

#include "policies/policy.hpp"
#include "policies/queue_sharing.hpp"

namespace cosched::policy {

// The terms of eqs. 1–3 for one set of requests, kept apart so tests and traces can show them.
struct DssTerms {
  std::int64_t workload = 0;  // W, eq. 1
  std::vector<int> r;         // R_i, eq. 2
  std::vector<int> x;         // x_i = R_i + δ_i, eq. 3
};
DssTerms dss_terms(const std::vector<int>& requests, int cpus);

// min(x_i, ρ_i) per job, fitted to the machine: Σ ≤ cpus unless there are more jobs than CPUs (then one
// each). With `fill_remainder`, CPUs left idle by the floor of eq. 2 go to the jobs with the largest
// fractional part of ρ_i P / W (ties: first job); the paper leaves them idle, which is the default.
std::vector<int> dss_partition(const std::vector<int>& requests, int cpus, bool fill_remainder = false);

class Dss final : public TabledPolicy<Dss> {
 public:
  [[nodiscard]] std::string_view name() const override { return "dss"; }
  [[nodiscard]] std::unique_ptr<Policy> clone() const override { return std::make_unique<Dss>(*this); }
  Decision decide(const Snapshot& s) override;
  [[nodiscard]] bool reacts_to_reports() const override { return false; }  // reads no estimate
  static const ParamTable<Dss>& param_table();

 private:
  bool fill_remainder_ = false;
  QueueSharing sharing_;
};

}  // namespace cosched::policy
