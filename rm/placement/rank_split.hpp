// A job of several processes on one node (an MPI job's ranks, docs/architecture.md "MPI jobs") gets one
// allocation and one CPU set from the policy and placement; this divides them among its processes. Pure.
#pragma once

#include <vector>

#include "cosched/cpuset.hpp"

namespace cosched::rm {

// Each process's share of `allocation` CPUs among `processes` (>= 1): as even as possible, the remainder to
// the first ones, every share >= 1 (with fewer CPUs than processes, each still runs one thread; they share).
std::vector<int> rank_shares(int allocation, int processes);

// The CPUs of each process: consecutive slices of `cpus` (topology order) of the given sizes; when the
// shares add up to more than `cpus` holds, the slices wrap around, so processes share CPUs evenly.
std::vector<CpuSet> split_cpus(const CpuSet& cpus, const std::vector<int>& shares);

}  // namespace cosched::rm
