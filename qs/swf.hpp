// Standard Workload Format (SWF) v2.2, the Parallel Workloads Archive's format: one job per line, 18
// whitespace-separated numeric fields, -1 for "unknown", `;` comment lines that carry `Key: value` header
// entries. qsubmit (real runs) and cosched-sim (simulation) read workloads through this one reader, so a
// trace means the same thing to both (DESIGN rule 2).
//
// Reader decisions (docs/workloads.md has the user-facing version):
//  - A strict read fails on the first bad line with one message naming file, line, field and text; no
//    partial result. Options::lenient skips bad lines instead, counting them and keeping their messages.
//  - Submit times must be known and non-decreasing (the archive sorts by submit time; an unsorted file is
//    more often a broken concatenation than a real trace). Options::sort_by_submit accepts any order and
//    stable-sorts the jobs instead.
//  - A negative value other than -1 is an error in every field. Status must be -1 or 0..5.
//  - Time and memory fields may be fractional (the standard allows it); counts and ids are integers.
//  - Files may be gzip-compressed (`.swf.gz` as downloaded); the content decides, not the name.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cosched/error.hpp"

namespace cosched::swf {

constexpr int kFieldCount = 18;

// Field 11 (status) values defined by SWF 2.2; -1 means unknown.
enum StatusCode : int {
  kFailed = 0,
  kCompleted = 1,
  kPartial = 2,           // one part of a job that was checkpointed or swapped out; more lines follow
  kLastPartCompleted = 3,
  kLastPartFailed = 4,
  kCancelled = 5,
};

// One SWF line. Members are in field order; every one defaults to -1 ("unknown").
struct Job {
  std::int64_t number = -1;             //  1 job number
  double submit_s = -1;                 //  2 submit time, seconds since the start of the log
  double wait_s = -1;                   //  3 wait time in the queue
  double run_s = -1;                    //  4 run (wall-clock) time
  std::int64_t allocated_procs = -1;    //  5 allocated processors
  double avg_cpu_s = -1;                //  6 average CPU time per processor
  double used_memory_kb = -1;           //  7 used memory per processor, KB
  std::int64_t requested_procs = -1;    //  8 requested processors
  double requested_time_s = -1;         //  9 requested time (run time or CPU time, per the log)
  double requested_memory_kb = -1;      // 10 requested memory per processor, KB
  std::int64_t status = -1;             // 11 see StatusCode
  std::int64_t user = -1;               // 12 user id
  std::int64_t group = -1;              // 13 group id
  std::int64_t executable = -1;         // 14 executable (application) number: the catalog key
  std::int64_t queue = -1;              // 15 queue number
  std::int64_t partition = -1;          // 16 partition number
  std::int64_t preceding_job = -1;      // 17 preceding job number
  double think_time_s = -1;             // 18 think time after the preceding job

  std::int64_t line = 0;  // where the reader found it (1-based); 0 for jobs built in memory

  bool operator==(const Job&) const = default;
};

// The field table the reader, writer and messages share: number (1-based), name, and which member.
struct FieldInfo {
  int number;
  std::string_view name;                // as it appears in error messages: "requested processors"
  std::int64_t Job::*integer = nullptr; // exactly one of these two is set
  double Job::*real = nullptr;
};
const std::array<FieldInfo, kFieldCount>& fields() noexcept;

// One `;` line. Entries with a key came from `; Key: value`; free comment lines have an empty key and the
// text in value. Order and repetitions (Note, Queue, Partition appear many times) are kept.
struct HeaderEntry {
  std::string key;
  std::string value;
  std::int64_t line = 0;
  bool operator==(const HeaderEntry&) const = default;
};

class Header {
 public:
  std::vector<HeaderEntry> entries;

  // First value of a key (keys compare exactly, as the archive spells them), or nullptr.
  [[nodiscard]] const std::string* find(std::string_view key) const;
  [[nodiscard]] std::vector<std::string_view> find_all(std::string_view key) const;
  // Replaces the first entry with this key, or appends one.
  void set(std::string_view key, std::string value);
  void add_comment(std::string text) { entries.push_back({"", std::move(text), 0}); }

  // Typed accessors; nullopt when absent. The reader rejects a non-numeric value for these keys, so on a
  // read workload "present" means "valid".
  [[nodiscard]] std::optional<std::int64_t> max_procs() const;
  [[nodiscard]] std::optional<std::int64_t> max_nodes() const;
  [[nodiscard]] std::optional<std::int64_t> unix_start_time() const;
  // The trace machine's processor count: MaxProcs, else MaxNodes (one processor per node), else nullopt.
  [[nodiscard]] std::optional<std::int64_t> machine_procs() const;
};

struct Workload {
  Header header;
  std::vector<Job> jobs;
  // Lenient mode only: lines skipped and their messages (the first kMaxWarnings of them).
  std::int64_t skipped_lines = 0;
  std::vector<std::string> warnings;
  static constexpr std::size_t kMaxWarnings = 1000;
  // ExtraFields::ignore only: job lines that had more than 18 columns, and the first of them.
  std::int64_t lines_with_extra_fields = 0;
  std::int64_t first_extra_fields_line = 0;
};

// What to do with columns after the 18th. Tools that convert or annotate archive logs append some (queue
// names, node lists); the standard has exactly 18, so by default they are an error that names the line.
enum class ExtraFields { error, ignore };

struct Options {
  bool lenient = false;         // skip bad lines instead of failing
  ExtraFields extra_fields = ExtraFields::error;  // ignore: read the first 18 columns, count the lines
  bool sort_by_submit = false;  // accept submit times in any order and stable-sort by them
};

// Parses SWF text. `name` prefixes every message ("w1.swf:12: ..."). Errors are Errc::parse_error.
Result<Workload> parse(std::string_view text, std::string_view name, const Options& options = {});
// Reads a whole file, plain or gzip-compressed, then parses it. Errc::io_error when it cannot be read, or
// when a gzip stream ends before its end (a truncated download).
Result<Workload> read_file(const std::string& path, const Options& options = {});

// Warnings about the workload as a whole (swf_checks.cpp), to print after the per-line ones: the total of
// bad lines skipped (lenient reads keep only the first kMaxWarnings messages), and a header whose MaxJobs or
// MaxRecords promises more jobs than the file holds.
std::vector<std::string> workload_notes(const Workload& w, std::string_view name);
// A workload with no job is bad input (Errc::invalid_argument naming the file and what was skipped).
Status require_jobs(const Workload& w, std::string_view name);
// Just the file's bytes, decompressed if gzip (shared with the catalog and tools).
Result<std::string> read_text(const std::string& path);

// One canonical line: the 18 fields separated by single spaces, integers as integers, times in the
// shortest form that reads back to the same double ("12", "0.5"). No newline.
std::string to_line(const Job& job);
// The header (`; Key: value` or `; text` per entry, in order), then one line per job.
void write(std::ostream& out, const Workload& workload);
// Writes to a file, gzip-compressed when the path ends in ".gz".
Status write_file(const std::string& path, const Workload& workload);

// Processors a job asks for: field 8, or field 5 when 8 is unknown (logs that only record the allocation).
// Errc::invalid_argument naming the job and its line when neither is positive.
Result<std::int64_t> processor_request(const Job& job);

// Scales a request from the machine the trace came from (trace_procs) to this one (machine_procs):
//  - trace_procs unknown (<= 0) or not larger than machine_procs: the request is kept;
//  - otherwise request * machine_procs / trace_procs, rounded to the nearest integer (halves up);
//  - the result is always within [1, machine_procs].
// The source size is `--max-procs N` when the user gives it, else Header::machine_procs().
std::int64_t scale_request(std::int64_t request, std::int64_t trace_procs, std::int64_t machine_procs);

}  // namespace cosched::swf
