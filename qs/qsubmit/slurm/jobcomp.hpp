// Slurm's job-completion records as jobcomp/filetxt writes them (JobCompLoc): one line per finished job,
// KEY=VALUE fields separated by spaces, times in local time to the second:
//
//   JobId=12 UserId=root(0) ... JobState=COMPLETED Partition=main ... StartTime=2026-11-25T08:31:28
//   EndTime=2026-11-25T08:31:31 NodeList=vm NodeCnt=1 ProcCnt=2 ... SubmitTime=2026-11-25T08:31:26 ...
//   ExitCode=0:0
//
// qsubmit --backend slurm builds jobs.csv from them (docs/slurm.md, "Reading the results").
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "cosched/error.hpp"

namespace cosched::qsubmit {

struct CompletionRecord {
  std::int64_t job_id = 0;
  std::string name;
  std::string state;          // COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, ...
  std::string nodes;
  double submit = -1;         // seconds since the epoch; -1 unknown
  double start = -1;
  double end = -1;
  int cpus = 0;               // ProcCnt: CPUs Slurm allocated
  int exit_status = -1;       // the shell's convention: the code, or 128 + signal
};

// One line; errors name the field that is wrong.
Result<CompletionRecord> parse_completion_line(const std::string& line);

// "2026-11-25T08:31:28" in local time → seconds since the epoch; -1 for "Unknown", "None" or empty.
Result<double> parse_slurm_time(const std::string& text);

// "a:b" (exit code : signal) → a, or 128 + b when a signal ended the job.
Result<int> parse_exit_code(const std::string& text);

// Reads a growing jobcomp file: each call returns the records of the lines completed since the last one.
class JobcompReader {
 public:
  explicit JobcompReader(std::string path) : path_(std::move(path)) {}
  // Unreadable lines are skipped and counted; a file that does not exist yet reads as empty.
  Result<std::map<std::int64_t, CompletionRecord>> read_new();
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] long bad_lines() const { return bad_lines_; }

 private:
  std::string path_;
  std::uint64_t offset_ = 0;
  std::string partial_;
  long bad_lines_ = 0;
};

}  // namespace cosched::qsubmit
