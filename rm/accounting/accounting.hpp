// The accounting record (sacct-like): one JSON line per job that left the RM — who (uid, user), what
// (command, pid, request), when (wall-clock start and end), the CPUs it held over time and the speedup it
// last measured — appended to a file that outlives the RM, so `cosched-ctl history` answers after a
// restart. Fields: docs/usage.md, "Accounting".
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cosched/error.hpp"
#include "policies/snapshot.hpp"

namespace cosched::rm {

struct Job;

// The steps a job keeps: enough for any policy that moves a job a few times a second for an hour; past
// that, the last step is overwritten (cpu_seconds stays exact: it is accumulated, not recomputed).
inline constexpr std::size_t kMaxCpuSteps = 4096;

// Appends a step to the job's record and accumulates its CPU·seconds.
void note_cpus(Job& j, double now, int cpus);
// Keeps `e` as the job's latest estimate at e.cpus (cpu_report.hpp).
void note_estimate(Job& j, const policy::Perf& e);
// What the job's CPUs bought up to `now` (cpu_report.hpp).
nlohmann::json cpu_report_of(const Job& j, double now);

class AccountingLog {
 public:
  AccountingLog() = default;
  ~AccountingLog();
  AccountingLog(const AccountingLog&) = delete;
  AccountingLog& operator=(const AccountingLog&) = delete;

  // Appends; creates the file. `readable_by_all`: mode 0644 instead of 0640, for an RM whose status every
  // local user may read (--all-users), so that they may read their history too.
  Status open(const std::string& path, bool readable_by_all = false);
  // The largest job id among the last records of the file (0 when none): an RM restarted on the same file
  // numbers its jobs after it, so an id names one job in the history.
  [[nodiscard]] long last_id() const { return last_id_; }
  [[nodiscard]] bool is_open() const { return fd_ >= 0; }
  // One line for a job that left at RM time `now`; `wall_now` is the same instant in seconds since the epoch.
  void record(const Job& j, const std::string& why, double now, double wall_now, const nlohmann::json& context);

  // The socket's path with .accounting.jsonl for .sock (/run/cosched/rm.accounting.jsonl): next to the
  // socket, so `cosched-ctl --socket S history` finds it without being told.
  static std::string default_path(const std::string& socket);

 private:
  int fd_ = -1;
  long last_id_ = 0;
};

}  // namespace cosched::rm
