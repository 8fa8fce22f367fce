// One job under the RM's control: identity, allocation, measurements and the handles of its mechanisms.
// Owned by the Daemon; policies never see this struct, only the JobView the daemon builds from it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "arena_host.hpp"
#include "cosched/cpuset.hpp"
#include "policies/snapshot.hpp"
#include <nlohmann/json.hpp>

namespace cosched::rm {

// The sensing interval in progress (rm/daemon/sensing.cpp): opened at the end of a quantum for a job that
// runs, sampled at the start of the next one unless the job was stopped, suspended or moved in between.
struct SensorMark {
  bool open = false;
  double at = 0;
  int allocation = 0;
  ArenaSensors counters;  // the job's cumulative counters when it opened
  std::uint64_t net_bytes = 0;  // the PMPI wrappers' bytes out + in when it opened
  std::vector<policy::JobId> group;  // its co-schedule partners when it opened (Decision::co_schedule)
};

// From `t` (RM seconds) on, the job held `cpus` CPUs (its accounting: rm/accounting/accounting.hpp).
struct CpuStep {
  double t = 0;
  int cpus = 0;
};

// One line of `cosched-ctl why JOB`.
struct WhyEntry {
  double at = 0;
  std::string event;
  int from = 0;
  int to = 0;
  std::string reason;
};

struct Job {
  policy::JobId id = 0;
  pid_t pid = 0;
  uid_t uid = 0;
  std::string command;
  int request = 1;
  std::uint32_t flags = 0;    // proto::RegisterFlags
  double arrival = 0;

  // What the RM decided and applied.
  int allocation = 0;
  CpuSet cpus;
  bool runnable = true;
  bool suspended = false;     // stopped by someone else (SIGSTOP, a debugger): its CPUs are lent to the others
  std::string policy_state;   // the policy's label (e.g. PDPA's "STABLE")
  // A baseline by narrowing (rm/daemon/narrowing.cpp): the CPUs the job asked to run its baseline on, once
  // checked (0: none). While it is below `allocation`, the job runs on the first that many of `cpus` and is
  // told that allocation; `allocation` and `cpus` stay the policy's.
  int narrow_request = 0;

  // A process of a job of several (an MPI rank, register_rank): the policies see the job, `gang`, whose id
  // all its processes were given; 0 for a job of its own (rm/daemon/mpi_jobs.cpp).
  policy::JobId gang = 0;
  int rank = 0;
  std::string job_key;
  // The Slurm job it belongs to, from the key the SPANK plugin gives every task of a --cosched job
  // ("slurm:<id>", slurm/spank_cosched.cpp); -1 for none. Like the key, it is the job's own word: it groups the
  // processes of one uid and labels records, and grants nothing.
  std::int64_t slurm_job_id = -1;
  // Slurm's confinement, read from the kernel at admission (slurm_confinement.cpp): the CPUs Slurm let the
  // process use (its affinity, which task/affinity and task/cgroup narrow), empty when that is every managed
  // CPU; and whether its cpuset cgroup is Slurm's (task/cgroup), which the RM must never move it out of.
  CpuSet allowed;
  bool in_slurm_cgroup = false;

  // Mechanism handles.
  int conn_fd = -1;           // the job's socket (EOF = departure)
  int pidfd = -1;             // readable when the process exits
  std::unique_ptr<ArenaHost> arena;
  std::string cgroup_dir;     // enforcement: the job's cpuset cgroup, empty if none
  std::string original_cgroup_procs;  // where to put the job back on release
  std::string freezer_dir;    // time sharing: the job's freezer cgroup, empty until its first stop
  bool freezer_owned = false; // freezer_dir was created by the stopper (else it is the cpuset cgroup)
  std::string freezer_restore_procs;  // where the stopper puts the job back on release
  std::string share_dir;      // its group in the cpu controller's hierarchy (job_cpu_share.cpp), empty if none
  std::string share_restore_procs;    // where that group's pid goes back on release

  // Time sharing (rm/daemon/time_sharing.cpp): runnable == false while the RM holds the job stopped.
  std::uint32_t stops = 0;    // stop → resume cycles completed (the arena's `stops`)
  double stopped_at = 0;      // when the current stop began
  double stopped_s = 0;       // time spent stopped by the RM, completed stops

  // Measurements (validated) and their history. `perf` is what the policy sees (choose_estimate, estimate.hpp):
  // the SelfAnalyzer's measured speedup (`measured`) or the sampler's waiting-time efficiency (`efficiency`).
  policy::Perf perf;
  policy::Perf measured;
  ArenaEfficiency efficiency;
  bool measured_failed = false;  // the latest measured speedup was impossible (estimate.hpp)
  std::string estimate_note;     // choose_estimate's note for the latest choice
  bool baseline_check = true;    // the job may run its baseline (proto::rm_no_baseline clear; follow_check)
  int measured_below = 0;        // measured reports in a row below the waiting-time efficiency (estimate.hpp)
  std::vector<policy::HistoryEntry> history;
  std::vector<policy::Perf> estimate_at;  // the latest estimate at each allocation measured (the CPU report)
  ArenaProgress progress;
  double analyzing_since = -1;            // when progress.phase last became baseline or measuring (-1: it is not)
  std::uint64_t iterations_at_analyzing = 0;  // progress.iterations then
  std::uint64_t regions_seen = 0;  // progress.regions at the previous quantum (suspension check)
  bool team_differs = false;  // the formed team differs from the allocation (noted once in `why` per change)

  SensorMark sensor_mark;     // rm/daemon/sensing.cpp
  policy::Rate rate;          // the latest progress-rate sample (rm/daemon/sensing.cpp; JobView::rate)

  std::deque<WhyEntry> why;   // most recent last, bounded

  // Accounting (rm/accounting/accounting.hpp): the CPUs granted over time, and CPU·seconds up to the last step.
  std::vector<CpuStep> cpu_steps;
  double cpu_seconds = 0;
};

// One line of the job's `why` at RM time `t`; it keeps the newest kWhyDepth (our choice: a few minutes of
// decisions at one a quantum, and what `cosched-ctl why` shows).
inline constexpr std::size_t kWhyDepth = 32;
inline void remember_why(Job& j, double t, const std::string& event, int from, int to, const std::string& reason) {
  j.why.push_back({t, event, from, to, reason});
  while (j.why.size() > kWhyDepth) j.why.pop_front();
}

// "slurm:<digits>" → the Slurm job id; -1 for any other key.
inline std::int64_t slurm_job_id_of(const std::string& key) {
  constexpr std::string_view prefix = "slurm:";
  if (key.size() <= prefix.size() || key.size() > prefix.size() + 10 || key.compare(0, prefix.size(), prefix) != 0) {
    return -1;
  }
  std::int64_t v = 0;
  for (std::size_t i = prefix.size(); i < key.size(); ++i) {
    if (key[i] < '0' || key[i] > '9') return -1;
    v = v * 10 + (key[i] - '0');
  }
  return v;
}

inline nlohmann::json slurm_id_json(const Job& j) {
  return j.slurm_job_id >= 0 ? nlohmann::json(j.slurm_job_id) : nlohmann::json(nullptr);
}

}  // namespace cosched::rm
