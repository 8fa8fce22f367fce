// Placement: which CPUs, once the policy has said how many. Pure: topology order in, CPU sets out.
//
// Goals, in order: (1) a job keeps the CPUs it has (stability across quanta: caches, memory affinity, the
// "selective scheduling" of the DSS paper §3.1); (2) a job's CPUs are compact in topology order; (3) when
// the policy oversubscribes (more CPUs granted than exist: more jobs than CPUs), sharing is spread evenly —
// no CPU carries more than ceil(total / cpus) jobs.
#pragma once

#include <map>
#include <vector>

#include "cosched/cpuset.hpp"
#include "policies/snapshot.hpp"

namespace cosched::rm {

struct PlaceRequest {
  policy::JobId id = 0;
  int count = 1;      // CPUs to place (>= 1)
  CpuSet current;     // CPUs held now (kept where possible)
  CpuSet allowed;     // the only CPUs it may get (a Slurm job: those Slurm gave it); empty: any
};

// `order`: the managed CPUs in topology order. Requests are served in the given order (admission order), so
// older jobs win ties. Every request gets exactly min(count, CPUs it may get) distinct CPUs, all within
// `allowed` when that names any CPU of `order`.
std::map<policy::JobId, CpuSet> place(const std::vector<int>& order, const std::vector<PlaceRequest>& requests);

}  // namespace cosched::rm
