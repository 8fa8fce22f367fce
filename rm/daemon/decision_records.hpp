// What the daemon keeps of its decisions, a room of its own: the --log file (every job of every
// decision), the recent decisions `cosched-ctl decisions` and qsubmit read (only what changed, bounded), and
// the --core-trace file that cosched-sim replay-core replays (rm/decision/core_trace.hpp).
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "config.hpp"
#include "cosched/error.hpp"
#include "job_table.hpp"
#include "rm/accounting/decision_log.hpp"
#include "rm/decision/decision_core.hpp"

namespace cosched::rm {

class DecisionRecords {
 public:
  // Opens what the options ask for (--log, --core-trace); an error names the file.
  Status open(const Config& cfg);
  [[nodiscard]] bool tracing() const { return core_trace_.is_open(); }
  // One line of the core trace, flushed (a test reads it while the RM runs).
  void trace(const nlohmann::json& record);
  // The settled decision's record: each process's entry with its pid (joins ps and qsubmit's jobs.csv) and
  // Slurm job id (joins sacct), all of them to the log, the changed ones to the recent decisions.
  void record(const Settled& st, const JobTable& jobs);
  // The recent decisions with t > since, oldest first, as a JSON array's text.
  [[nodiscard]] std::string since(double t) const { return recent_.since(t); }

 private:
  DecisionLog log_;
  std::ofstream core_trace_;
  DecisionHistory recent_{4 << 20};  // 4 MiB (decision_log.hpp says why it is bounded by bytes)
};

}  // namespace cosched::rm
