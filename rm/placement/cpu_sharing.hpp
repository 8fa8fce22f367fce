// Which jobs' CPUs another running job's threads may also use. Placement gives each job a CPU set; with more
// jobs than CPUs some sets overlap, and a job whose CPUs are shared must not make libomp yield in its wait
// loops (proto::rm_cpus_shared says why). Pure.
#pragma once

#include <vector>

#include "cosched/cpuset.hpp"

namespace cosched::rm {

// For each of `sets` (the CPU sets of the processes that run now), whether one of its CPUs is in another of
// them. An empty set shares nothing.
std::vector<char> sharing_a_cpu(const std::vector<const CpuSet*>& sets);

}  // namespace cosched::rm
