// What qsubmit --backend slurm asks Slurm, through its commands (sbatch, scontrol, sinfo, squeue, scancel,
// found in PATH and configured by SLURM_CONF like any user's): the site's job-completion settings, the
// partition's size, and submissions.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "cosched/error.hpp"

namespace cosched::qsubmit {

// Runs `argv` (no shell) and returns its standard output; an error carries the exit status and the first
// line of standard error. The program is found in PATH.
Result<std::string> run_slurm_command(const std::vector<std::string>& argv);

struct SlurmSite {
  std::string jobcomp_type;   // JobCompType, e.g. jobcomp/filetxt
  std::string jobcomp_loc;    // JobCompLoc: the file filetxt writes
  std::string partition;      // the partition jobs go to (the given one, else the default)
  int total_cpus = 0;         // the partition's CPUs (TotalCPUs)
  int node_cpus = 0;          // the largest node's CPUs: a job runs on one node, so requests scale to this
  bool has_cosched_option = false;  // sbatch --help lists --cosched (spank_cosched.so in plugstack.conf)
};

// Asks `scontrol show config`, `scontrol show partition`, `sinfo` and `sbatch --help`. `partition` empty:
// the default partition.
Result<SlurmSite> read_slurm_site(const std::string& partition);

// `sbatch --parsable OPTIONS SCRIPT` → the job id.
Result<std::int64_t> sbatch(const std::vector<std::string>& options, const std::string& script);

// The ids among `ids` that Slurm still has pending, running, suspended or completing.
Result<std::set<std::int64_t>> active_jobs(const std::set<std::int64_t>& ids);

// scancel for each id (errors are ignored: the job may have ended meanwhile).
void scancel(const std::set<std::int64_t>& ids);

}  // namespace cosched::qsubmit
