// Placement: which CPUs, once the policy has said how many. Pure: topology order in, CPU sets out.
//
// Goals, in order: (1) a job keeps the CPUs it has (stability across quanta: caches, memory affinity, the
// "selective scheduling" of the DSS paper §3.1), a running job before one that resumes; (2) a job's CPUs are
// compact in topology order; (3) when the policy oversubscribes (more CPUs granted than exist: more jobs than
// CPUs), sharing is spread evenly by threads — no CPU carries more than ceil(total / cpus) threads, where a
// job puts one thread on each of its CPUs unless its team is fixed larger than them (PlaceRequest::threads).
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
  // The threads of a team the job fixed itself when it has more than `count` (GROMACS' -ntomp,
  // omp_set_num_threads): ceil(threads / count) of them run on each of its CPUs. 0: one per CPU.
  int threads = 0;
  // `current` is where the job ran before it was stopped, not CPUs it holds now (a time-sharing policy resumes
  // it). Such a job keeps what of `current` the running jobs leave: taking a running job's CPUs would move that
  // job, and a stopped job's cache there is cold by now anyway.
  bool resuming = false;
};

// Co-scheduled groups (policy::Decision::co_schedule: SMT symbiosis). A group of jobs shares cores: with SMT
// a member of width w gets one PU (hardware thread) of each of w of the group's cores — member k the k-th PU of
// every core, so the members are siblings — and the group takes as many cores as its widest member; without
// SMT the members get adjacent cores, one block after the other.
struct GroupRequest {
  std::vector<PlaceRequest> members;  // in the group's order
};

struct GroupPlacement {
  std::map<policy::JobId, CpuSet> cpus;  // every member of every group that fitted
  std::vector<int> free_order;           // the CPUs no group took, in topology order (for place())
  int unplaced_groups = 0;               // groups that did not fit the free cores (their members are left out)
};

// `order`: the managed CPUs in topology order; `core_of[i]`: the core of order[i] (Topology::core_of). A group
// keeps the cores its members hold when those are exactly as many as it needs and free; the others take the
// lowest free run of adjacent cores (else the lowest free cores).
GroupPlacement place_groups(const std::vector<int>& order, const std::vector<int>& core_of,
                            const std::vector<GroupRequest>& groups);

// `order`: the managed CPUs in topology order. Requests are served in the given order (admission order), so
// older jobs win ties. Every request gets exactly min(count, CPUs it may get) distinct CPUs, all within
// `allowed` when that names any CPU of `order`.
std::map<policy::JobId, CpuSet> place(const std::vector<int>& order, const std::vector<PlaceRequest>& requests);

// The daemon's and the simulator's placement: `requests` honouring `groups` (Decision::co_schedule; ids not in
// `requests` are skipped): the grouped jobs by place_groups, the others by place() on the CPUs left. Groups that
// do not fit the machine (a policy's mistake) are ignored: everything is placed by place() alone.
std::map<policy::JobId, CpuSet> place_with_groups(const std::vector<int>& order, const std::vector<int>& core_of,
                                                  const std::vector<PlaceRequest>& requests,
                                                  const std::vector<std::vector<policy::JobId>>& groups);

}  // namespace cosched::rm
