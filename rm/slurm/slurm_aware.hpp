// The enforcer and the stopper the daemon runs, wrapped so that jobs in Slurm's own cgroups keep their cgroup
// (slurm_aware.cpp says why). Declared here, with their definitions, not in rm/enforce/: enforce/ sits below
// slurm/ and knows nothing of Slurm.
#pragma once

#include <memory>

#include "cosched/cpuset.hpp"
#include "rm/enforce/enforcer.hpp"
#include "rm/enforce/guard.hpp"
#include "rm/enforce/stopper.hpp"

namespace cosched::rm {

// Jobs in Slurm's own cgroups (Job::in_slurm_cgroup) go to an affinity backend, never moved out of them;
// others to `primary`. A primary that moves no process is returned as it is.
std::unique_ptr<Enforcer> make_slurm_aware_enforcer(std::unique_ptr<Enforcer> primary, const CpuSet& managed);
// Jobs in Slurm's own cgroups are stopped with signals, never moved into a freezer cgroup.
std::unique_ptr<Stopper> make_slurm_aware_stopper(std::unique_ptr<Stopper> primary, Guard& guard);

}  // namespace cosched::rm
