// What Slurm confined a --cosched job's process to, read from the kernel when it registers (never from what
// the job says): the CPUs it may use, and whether its cpuset cgroup belongs to Slurm (task/cgroup). The RM
// then places the job only inside those CPUs and, for a process in Slurm's cgroup, confines it by affinity
// instead of moving it into a cgroup of its own (docs/slurm.md, "Slurm's confinement").
#pragma once

#include "cosched/cpuset.hpp"
#include <vector>

#include "rm/job/job.hpp"

namespace cosched::rm {

// The CPUs a job of these processes may get: the union of theirs, empty (any) when one of them may use all.
CpuSet allowed_cpus(const std::vector<Job*>& members);

// Fills j.allowed (empty when the process may use every managed CPU) and j.in_slurm_cgroup.
void read_slurm_confinement(Job& j, const CpuSet& managed);

// A cgroup path (from /proc/PID/cgroup) under Slurm's hierarchy: cgroup/v1's /slurm/uid_U/job_J/...,
// cgroup/v2's .../slurmstepd.scope/job_J/...
bool is_slurm_cgroup(const std::string& path);

}  // namespace cosched::rm
