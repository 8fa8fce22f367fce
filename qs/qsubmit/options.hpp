// qsubmit's command line: one options table (CLI11) that also generates --help (STYLE habit 7).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "qs/queue_policy.hpp"

namespace cosched::qsubmit {

// Exit statuses, documented in docs/qsubmit.md.
enum ExitCode : int {
  kExitOk = 0,        // every job ran and exited 0
  kExitJobFailed = 1, // the run happened, some job did not exit 0 (or never started)
  kExitBadInput = 2,  // options, workload or catalog rejected; nothing was started
  kExitNoRm = 3,      // the cosched-rm named by --socket could not be reached; nothing was started
};

// Prints "qsubmit: <message>" on stderr and returns kExitBadInput.
int bad_input(const std::string& message);

// How qsubmit talks to (or does without) a resource manager.
enum class RmMode {
  existing,  // --socket (or the default socket): a cosched-rm someone else runs
  private_,  // --policy: a cosched-rm started for this run only
  native,    // --native: no RM, OMP_NUM_THREADS = request
};

struct Options {
  std::string workload;          // the SWF file
  std::string catalog;           // empty: catalog.yaml next to the workload
  double time_scale = 1.0;       // arrival at submit time x this
  std::int64_t max_procs = 0;    // trace machine size for request scaling; 0: the SWF header's
  int ml = 0;                    // fixed multiprogramming level; 0: the RM decides (native: #CPUs)
  qs::Selection selection = qs::Selection::fcfs;
  RmMode rm_mode = RmMode::existing;
  std::string socket;            // existing RM
  std::string policy;            // private RM
  std::vector<std::string> params;  // private RM: NAME=VALUE
  std::string cpus;              // private RM: --cpus list
  std::string out_dir;           // empty: ./qsubmit-<policy|native>-<timestamp>
  bool lenient = false;
  std::string extra_fields = "error";  // error | ignore (swf::ExtraFields)
  bool quiet = false;
  // --backend slurm (docs/slurm.md): jobs go to sbatch; results come from Slurm's job-completion records.
  std::string backend = "local";
  std::string partition;                    // empty: Slurm's default partition
  std::vector<std::string> sbatch_options;  // passed to every sbatch
  std::string label;                        // the run's name (default slurm-cosched / slurm-native)

  // "native", the policy name, or "rm" when an existing RM is used (its policy is only known once asked).
  [[nodiscard]] std::string run_label() const;
};

// Parses argv. Returns the options, or the exit status to leave with right away (0 after --help or
// --version, kExitBadInput after a usage error, whose message is already printed).
struct ParsedOptions {
  std::optional<Options> options;
  int exit_status = kExitOk;
};
ParsedOptions parse_options(int argc, char** argv);

}  // namespace cosched::qsubmit
