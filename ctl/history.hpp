// `cosched-ctl history`: the accounting records of jobs that left the RM (rm/accounting/accounting.hpp), read
// from the file itself, so they are there after the RM restarts, and even while no RM runs.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cosched/error.hpp"

namespace cosched::ctl {

struct HistoryFilter {
  std::string user;              // name or uid; empty: everyone
  std::optional<long> job;       // one RM job id
  std::optional<long> pid;
  std::optional<long> slurm_job;  // one Slurm job (records of --cosched jobs carry slurm_job_id)
  std::size_t last = 0;          // only the last N records (0: all)
};

// The records of `path` that pass `filter`, oldest first. A line that is not a JSON object is skipped
// (a record cut by a crash mid-write) and counted in `skipped`.
Result<std::vector<nlohmann::json>> read_history(const std::string& path, const HistoryFilter& filter,
                                                 std::size_t& skipped);

// One line per record: id, pid, user, Slurm job, start (local time), elapsed, requested and mean CPUs, speedup, the CPUs
// over time and the command, never cut.
std::string format_history(const std::vector<nlohmann::json>& records);

}  // namespace cosched::ctl
