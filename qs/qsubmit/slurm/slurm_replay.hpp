// qsubmit --backend slurm (docs/slurm.md, "Replaying a workload on Slurm"): the same workload and catalog as a
// local replay, but each job goes to sbatch at its (scaled) submit time, with --cosched unless --native, and
// Slurm decides where and when it runs. The results — jobs.csv, summary.json, ml.csv, allocation.csv, traces —
// are built from Slurm's job-completion records (jobcomp/filetxt), in the schema of local replays.
#pragma once

#include <string>
#include <vector>

#include "qs/qsubmit/options.hpp"
#include "qs/qsubmit/workload.hpp"

namespace cosched::qsubmit {

// One batch script: the job's command, quoted for /bin/sh and run with exec (so the job is the program),
// after the environment a local replay gives it (OMP_NUM_THREADS for --native).
std::string batch_script(const PlannedJob& job, bool native);

// The sbatch options of one job: name, output files, one task with `request` CPUs on one node, --cosched
// (with the catalog's team flag) or, where the plugin is installed (`plugin`), --no-cosched; then the user's
// --sbatch-option values.
std::vector<std::string> sbatch_options(const PlannedJob& job, const Options& options, const std::string& jobs_dir,
                                        const std::string& partition, bool plugin);

// The whole run, after the options were parsed: checks, submissions, waiting, results. Returns qsubmit's
// exit status.
int run_slurm_backend(const Options& options);

}  // namespace cosched::qsubmit
