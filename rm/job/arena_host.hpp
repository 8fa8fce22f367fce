// The RM's side of a job's arena: creates the memfd, publishes allocations (seqlock), and reads the job's
// reports — trusting nothing: every field is range-checked, and a job that holds its seqlock odd or
// writes nonsense simply has no valid report.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cosched/cpuset.hpp"
#include "cosched/error.hpp"
#include "cosched/protocol.hpp"
#include "estimate.hpp"
#include "policies/snapshot.hpp"

namespace cosched::rm {

// Counters the job updates outside its seqlock (for status only).
struct ArenaProgress {
  std::uint64_t regions = 0;
  std::uint64_t iterations = 0;
  // PMPI wrapper counts (libcosched_mpi), monotonic as the job wrote them; the RM takes differences.
  std::uint64_t net_bytes_out = 0;
  std::uint64_t net_bytes_in = 0;
  std::uint64_t net_messages = 0;
  int last_team = 0;          // team libomp formed for the last outermost region (0: none yet)
  proto::TeamMode team_mode = proto::TeamMode::unknown;
  std::uint64_t team_mismatches = 0;  // regions whose formed team differed from the one libcosched chose
  std::uint32_t restarts = 0;         // times the SelfAnalyzer started its measurement over
  proto::MeasureRestart restart_reason = proto::MeasureRestart::none;
  proto::NoSpeedup no_speedup = proto::NoSpeedup::none;  // why the job published no speedup
  double unreported_s = 0;   // the iteration time of the window that gave no report (0: none, or invalid)
  int unreported_cpus = 0;   // and its team
  double cpu_wait = -1;               // share of thread time spent waiting for a CPU in the last sample
  std::uint64_t contaminated = 0;     // samples the job discarded for outside load
  int period = 0;
  int narrow_cpus = 0;  // JobBlock::narrow_cpus as written, clamped to [0, kMaxCpus]; the daemon checks the rest
  proto::Phase phase = proto::Phase::none;
};

// The job's cumulative sensor counters (proto::SensorBlock), as read; the sensing code takes deltas.
struct ArenaSensors {
  bool reports_bytes = false;
  std::uint64_t bytes = 0;
  std::uint64_t clean_ns = 0;
  std::uint64_t clean_wait_ns = 0;
  std::uint64_t clean_iterations = 0;
  int clean_team = 0;
  bool reports_work = false;
  std::uint64_t work = 0;      // cosched_report_work's running total
  std::uint64_t regions = 0;   // outermost parallel regions begun
};

// The job's waiting-time efficiency block (proto::EfficiencyBlock), as read: the estimate validated, the
// rest clamped to its vocabulary.
struct ArenaEfficiency {
  WaitingEstimate estimate;        // valid = false: none, or it failed validation
  std::string invalid_field;       // why not ("efficiency=1.7"), empty when valid or absent
  proto::Structure structure = proto::Structure::unknown;
  proto::EfficiencyPending pending = proto::EfficiencyPending::no_team;
  int period = 0;                  // events per iteration of `structure`
  std::uint64_t construct_iterations = 0;
  std::uint64_t ticks = 0;         // state samples taken (0: a libcosched without the sampler)
};

struct ArenaReport {
  bool present = false;       // a report exists (reports counter > 0)
  bool valid = false;         // it passed validation
  std::string invalid_field;  // why not, for the log ("speedup=nan")
  std::uint64_t seq = 0;      // the job's report counter
  policy::Perf perf;
};

class ArenaHost {
 public:
  static Result<std::unique_ptr<ArenaHost>> create(std::uint32_t job_id);
  ~ArenaHost();
  ArenaHost(const ArenaHost&) = delete;
  ArenaHost& operator=(const ArenaHost&) = delete;

  [[nodiscard]] int fd() const { return fd_; }

  // RM → job. `apply_mask` tells the job to apply the mask to threads it creates (affinity enforcement).
  void publish(int allocation, const CpuSet& cpus, bool apply_mask);
  void set_runnable(bool runnable);
  // A stop of the job ended: the job drops the iteration in progress (it spans the stop). Called while the
  // job is still stopped, so the job cannot see the count move before the stop and then cross an iteration
  // boundary before the freezer takes hold.
  void count_stop();
  // Whether the job is writing its report now (its seqlock is odd).
  [[nodiscard]] bool job_writing() const;
  void set_baseline(int cpus);
  // Whether the job should measure a baseline (the policy uses speedups); takes effect at its next region.
  void set_baseline_wanted(bool wanted);
  // Whether the job is alone (--baseline auto): no baseline attempt runs (proto::rm_baseline_waits).
  void set_baseline_waits(bool waits);
  // Whether another running job's threads may run on some of its CPUs (proto::rm_cpus_shared).
  void set_cpus_shared(bool shared);
  [[nodiscard]] bool cpus_shared() const { return (flags_ & proto::rm_cpus_shared) != 0; }

  // job → RM, validated.
  [[nodiscard]] ArenaReport read_report() const;
  [[nodiscard]] ArenaProgress read_progress() const;
  [[nodiscard]] ArenaSensors read_sensors() const;
  [[nodiscard]] ArenaEfficiency read_efficiency() const;

 private:
  ArenaHost(int fd, proto::Arena* a) : fd_(fd), a_(a) {}
  int fd_ = -1;
  proto::Arena* a_ = nullptr;
  std::uint64_t generation_ = 0;
  std::uint32_t flags_ = 0;  // RmFlags as last published
  static constexpr std::uint32_t with_flag(std::uint32_t flags, std::uint32_t flag, bool on) {
    return on ? (flags | flag) : (flags & ~flag);
  }
  void set_flag(std::uint32_t flag, bool on);  // outside publish(): one flag, released at once
};

}  // namespace cosched::rm
