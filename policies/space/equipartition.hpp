// Equipartition (McCann, Vaswani, Zahorjan, TOCS 1993; the comparator of the PDPA paper §3.3):
// an equal share of the CPUs for every running job, never more than a job requests, remainders to the
// jobs that can still use them. Reallocates at arrival and departure only.
#pragma once

#include "policies/policy.hpp"
#include "policies/queue_sharing.hpp"

namespace cosched::policy {

class Equipartition final : public TabledPolicy<Equipartition> {
 public:
  [[nodiscard]] std::string_view name() const override { return "equip"; }
  [[nodiscard]] std::unique_ptr<Policy> clone() const override { return std::make_unique<Equipartition>(*this); }
  Decision decide(const Snapshot& s) override;
  [[nodiscard]] bool reacts_to_reports() const override { return false; }  // reads no estimate
  static const ParamTable<Equipartition>& param_table();

 private:
  QueueSharing sharing_;
};

// The water-filling core, shared with policies that start from an equal split (e.g. PDPA's NO_REF cap):
// returns one count per job of `jobs` (same order). Every job gets >= 1 CPU even when jobs > cpus
// (oversubscription: placement then shares CPUs). Ties for a remainder CPU go to the job that holds more
// CPUs now (fewer moves), then to the older job.
std::vector<int> equal_shares(const std::vector<JobView>& jobs, int cpus);

}  // namespace cosched::policy
