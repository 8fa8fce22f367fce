// The decision path that cosched-rm and cosched-sim share (issue 49): the policy's call, its answer made safe,
// the stops and resumes it asks for, placement, and what each process must be told, with the decision-log
// record. It has no I/O and no clock (the time comes in with the snapshot): it returns actions and performs
// none. The daemon performs them with its mechanisms (cgroups, signals, the arena), the simulator with its
// models.
//
// One decision is two calls, because a stop may not happen: the daemon defers stopping a job that is writing
// its report (Daemon::stop_unit), and a job that was not stopped must be placed with the others.
//   1. propose(): the policy's Decision and the jobs it wants stopped now;
//   2. the caller stops what it can, and says so in the processes' `runnable`;
//   3. settle(): placement and every process's action, on the jobs as they are after the stops.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cosched/cpuset.hpp"
#include "policies/policy.hpp"
#include "rm/placement/placement.hpp"

namespace cosched::rm {

// One process of a job, as it is before the decision.
struct CoreProcess {
  policy::JobId id = 0;
  int allocation = 0;
  CpuSet cpus;
  bool runnable = true;  // false while a time-sharing policy holds it stopped
  std::string state;     // the policy's label it was last given
};

// One job as the policy sees it (JobView::id), in admission order. A job of its own has one process; a job of
// several (MPI ranks, in rank order) shares its allocation among them (rank_split.hpp). A job stopped from
// outside (SIGSTOP: Daemon's `suspended`) is not given to the core at all: its CPUs are lent to the others.
struct CoreJob {
  policy::JobId id = 0;
  bool several = false;
  int allocation = 0;  // the job's (for several: what its ranks share)
  CpuSet cpus;         // the job's; for a job of its own, its process's
  CpuSet allowed;      // the only CPUs it may get (a Slurm job's); empty: any
  int threads = 0;     // a team the job fixed itself (PlaceRequest::threads); 0: one thread per CPU
  std::vector<CoreProcess> processes;
};

struct CoreMachine {
  int cpus = 1;
  std::vector<int> order;    // the managed CPUs in placement order
  std::vector<int> core_of;  // the core of each entry of `order`
  bool place_cpus = true;    // false: counts only, CPU sets stay as they are (cosched-sim --no-placement)
};

// Step 1's answer.
struct Proposal {
  policy::Decision decision;
  policy::Event event = policy::Event::quantum;
  policy::JobId subject = -1;
  double now = 0;
  std::vector<std::pair<policy::JobId, std::string>> stops;  // jobs to stop now, with the policy's reason
};

// What one process is to be told and done (step 3's answer, one per process of every job given).
struct ProcessAction {
  policy::JobId id = 0;   // the process
  policy::JobId job = 0;  // the job it belongs to (== id for a job of its own)
  bool several = false;
  int rank = 0;           // its index among the job's processes
  int from = 0;           // its allocation before
  int count = 0;          // its allocation now (its share, for a rank)
  CpuSet cpus;            // its CPU set now
  bool running = true;    // false: it sits this decision out (stopped now or before)
  bool moved = false;     // count or CPU set changed: publish the new allocation and apply the CPU set
  bool stopped_now = false;
  bool resumed = false;   // continue it once every process of its job has its CPUs and team
  bool restated = false;  // the policy's label changed
  std::string state;      // the policy's label now
  std::string reason;     // the allocation's reason, as the policy gave it (may be empty)
  std::string why;        // the line for `cosched-ctl why` (empty: none); from → count when moved
  bool listed = false;    // belongs in the short history of changes (`cosched-ctl decisions`)
};

// When the RM calls the policy back for its Decision::wake_at `at`, asked for at `now`: at `at` itself, not
// later. A policy's wake-up ends a step of its (a quantum); one moved later by a floor ends that step late,
// and by how much would depend on whether a quantum tick came in between (a tick re-arms the timer). Our
// choices: at least kMinWakeAheadS on; a time not in the future gets kPastWakeDelayS, so that a policy
// asking for "now" again and again is not called in a loop.
inline constexpr double kMinWakeAheadS = 1e-6;
inline constexpr double kPastWakeDelayS = 1e-3;
[[nodiscard]] inline double wake_time(double at, double now) {
  return at > now ? std::max(at, now + kMinWakeAheadS) : now + kPastWakeDelayS;
}

struct Settled {
  // The running ones in job order, then the stopped ones; with SettleContext::every_process false, only those
  // whose action is not none (moved, stopped now, resumed, restated).
  std::vector<ProcessAction> processes;
  std::map<policy::JobId, int> job_allocation;  // each placed job of several processes: the whole (the gang's)
  std::map<policy::JobId, CpuSet> job_cpus;
  // Each job's group partners (Decision::co_schedule), and the jobs whose partners changed: a sensing
  // interval is sampled with one set of partners only.
  std::map<policy::JobId, std::vector<policy::JobId>> partners;
  std::vector<policy::JobId> partners_changed;
  std::vector<std::string> errors;  // the policy's mistakes that were corrected (an allocation out of range)
  bool changed = false;             // an allocation, CPU set, stop or resume changed
  bool groups_changed = false;
  bool may_start = false;
  std::string may_start_reason;  // empty unless SettleContext::every_process (or log)
  bool may_start_changed = false;
  std::optional<double> wake_at;  // wake_time() of the policy's
  bool noteworthy = false;  // the decision log gets a record
  // The decision-log record (only when asked for and noteworthy): t, event, subject, policy, may_start,
  // may_start_reason, groups; and one entry per process, in `processes` order, for the caller to complete
  // with what only it knows (a pid, a Slurm job id, an SWF number).
  nlohmann::json record;
  std::vector<nlohmann::json> entries;
};

// What settle() needs to know of the caller.
struct SettleContext {
  std::string policy;     // the policy's name, for errors and the log
  bool may_start_before;  // the may_start answer the caller gives now
  // The caller's override of the policy's may_start (Daemon::hold_for_expected: an announced Slurm job that
  // has not registered yet), applied before it is compared and logged.
  std::optional<std::string> hold;
  bool log = false;       // build the decision-log record (it lists every process: implies every_process)
  // false: leave out of Settled::processes the processes whose action is none (nothing moved, stopped,
  // resumed or relabelled), and leave may_start_reason, each action's reason and its `why` line empty.
  // cosched-sim without a decision log asks so: it makes millions of decisions, most of which change
  // nothing, and building an action for every job at each was most of its time.
  bool every_process = true;
};

class DecisionCore {
 public:
  DecisionCore() = default;
  explicit DecisionCore(CoreMachine machine);

  Proposal propose(policy::Policy& policy, const policy::Snapshot& s, const std::vector<CoreJob>& jobs) const;
  // `jobs` as they are after the caller's stops.
  Settled settle(const Proposal& p, const std::vector<CoreJob>& jobs, const SettleContext& ctx);

  [[nodiscard]] const CoreMachine& machine() const { return machine_; }

 private:
  struct Pass {
    bool any_resumed = false;
    bool any_stopping = false;
  };
  Pass classify(const Proposal& p, const std::vector<CoreJob>& jobs);
  void request(const std::vector<CoreJob>& jobs, const SettleContext& ctx, Settled& out);
  void note_partners(const policy::Decision& d, const std::vector<CoreJob>& jobs, Settled& out);
  void act_on_placed(const Proposal& p, const CoreJob& j, std::size_t i, int want, const CpuSet& job_cpus, bool every,
                     Settled& out) const;
  void act_on_process(const Proposal& p, const CoreJob& j, std::size_t i, const CoreProcess& proc, int k,
                      const CpuSet& cpus, int count, int want, bool every, Settled& out) const;
  void act_on_stopped(const std::vector<CoreJob>& jobs, bool every, Settled& out) const;
  static void finish(const Proposal& p, const SettleContext& ctx, bool every, Settled& out);
  ProcessAction& new_action(Settled& out) const;

  // Each request's CPU set, in request order (pointers into an entry of recent_). Without placement there are no
  // requests (a count needs none) and nothing is placed: every job keeps its own CPU set.
  const std::vector<const CpuSet*>& place(const std::vector<PlaceRequest>& reqs,
                                          const std::vector<std::vector<policy::JobId>>& groups);

  CoreMachine machine_;
  std::map<policy::JobId, std::vector<policy::JobId>> partners_;
  // The last few placements' inputs and outputs: placement is a pure function, so the same input gives the
  // same CPU sets without placing again. A quantum that changes nothing costs no placement, nor does gang's
  // next turn of a row placed before (a stopped job keeps its CPU set, so its row's request comes back the
  // same). kRecentPlacements is our choice: enough for a few rows; a miss replaces the oldest.
  struct RecentPlacement {
    std::vector<PlaceRequest> requests;
    std::vector<std::vector<policy::JobId>> groups;
    std::map<policy::JobId, CpuSet> placed;
  };
  static constexpr std::size_t kRecentPlacements = 4;
  std::vector<RecentPlacement> recent_;  // at most kRecentPlacements
  std::size_t oldest_ = 0;               // the entry a miss replaces once recent_ is full
  std::vector<const CpuSet*> placed_;  // place()'s answer, its storage kept from one decision to the next
  // settle()'s scratch, kept for the same reason; job i's entries are jobs[i]'s (classify, request).
  std::vector<const policy::Allocation*> scratch_alloc_;
  std::vector<char> scratch_resuming_;
  std::vector<char> scratch_stopping_;
  std::vector<char> scratch_running_;
  std::vector<PlaceRequest> scratch_reqs_;
  std::vector<std::size_t> scratch_placed_jobs_;
  std::vector<int> scratch_wants_;
  std::size_t scratch_processes_ = 0;  // the processes of the jobs given (classify)
};

// The estimates a job reported, as both keep them for the policy (JobView::history): the newest kHistoryDepth
// (our choice: PDPA looks back a few allocations at most).
inline constexpr std::size_t kHistoryDepth = 16;
void push_history(std::vector<policy::HistoryEntry>& history, const policy::Perf& p, double now);

// Whether the machine is shared (--baseline auto lets baselines run then: Daemon::follow_sharing): two jobs
// run, or one waits for admission or is being started.
[[nodiscard]] bool machine_shared(const policy::Snapshot& s);

}  // namespace cosched::rm
