#include "slurm_confinement.hpp"

#include <sched.h>

#include "rm/enforce/cgroup_fs.hpp"

namespace cosched::rm {

bool is_slurm_cgroup(const std::string& path) {
  return path.find("/slurm/") != std::string::npos || path.find("/slurm_") != std::string::npos ||
         path.find("slurmstepd.scope") != std::string::npos;
}

CpuSet allowed_cpus(const std::vector<Job*>& members) {
  CpuSet out;
  for (const Job* m : members) {
    if (m->allowed.empty()) return {};
    out = out | m->allowed;
  }
  return out;
}

void read_slurm_confinement(Job& j, const CpuSet& managed) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (::sched_getaffinity(j.pid, sizeof mask, &mask) == 0) {
    CpuSet mine;
    for (int c : managed.to_vector()) {
      if (c < CPU_SETSIZE && CPU_ISSET(c, &mask)) mine.set(c);
    }
    // Every managed CPU: nothing to respect. None: the RM manages other CPUs than Slurm gave; placing the job
    // anywhere is all it can do (placement ignores a set that names none of its CPUs).
    if (!(mine == managed) && !mine.empty()) j.allowed = mine;
  }
  for (int version : {1, 2}) {
    if (is_slurm_cgroup(cgroupfs::cgroup_of(j.pid, version, "cpuset"))) j.in_slurm_cgroup = true;
  }
}

}  // namespace cosched::rm
