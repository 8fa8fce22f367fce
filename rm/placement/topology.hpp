// The machine as hwloc sees it, restricted to the CPUs the RM manages. Placement uses its compact order
// (PUs of one core, then cores of one cache/package, adjacent). A synthetic description
// ("package:2 core:4 pu:2", hwloc's syntax) lets tests describe any machine.
#pragma once

#include <string>
#include <vector>

#include "cosched/cpuset.hpp"
#include "cosched/error.hpp"
#include "policies/snapshot.hpp"

namespace cosched::rm {

class Topology {
 public:
  // `managed`: the CPUs to manage (empty = every CPU this process may use). `synthetic`: an hwloc synthetic
  // description instead of the real machine (tests, what-if).
  static Result<Topology> load(const CpuSet& managed, const std::string& synthetic = "");

  // Managed CPUs (OS numbering) in topology order.
  [[nodiscard]] const std::vector<int>& order() const { return order_; }
  // Core index (dense, topology order) of each entry of order().
  [[nodiscard]] const std::vector<int>& core_of() const { return core_of_; }
  [[nodiscard]] CpuSet cpus() const { return CpuSet::of(order_); }
  [[nodiscard]] policy::Machine machine() const { return machine_; }
  [[nodiscard]] const std::string& description() const { return description_; }
  // What the operator measured (cosched-rm --mem-bandwidth): the bandwidth-aware policies' bus capacity.
  void set_mem_bandwidth(double bytes_per_s) { machine_.mem_bandwidth = bytes_per_s; }

 private:
  std::vector<int> order_;
  std::vector<int> core_of_;
  policy::Machine machine_;
  std::string description_;
};

}  // namespace cosched::rm
