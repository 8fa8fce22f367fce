// The boundary between libcosched (inside a job) and cosched-rm: socket frames and the shared arena.
//
// Both sides are versioned: every frame and the arena start with a magic and a version, and a mismatch
// is one clear error (STYLE habit 9). The RM trusts nothing the job writes: every job-written field is
// range-checked by the RM before use (rm/job/arena_host.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace cosched::proto {

inline constexpr std::uint32_t kMagic = 0x43534844;  // "CSHD"
inline constexpr std::uint16_t kVersion = 1;

// ---------------------------------------------------------------------------------------------------
// Socket frames (SOCK_STREAM, UNIX domain): a fixed 16-byte header then `length` payload bytes.
// ---------------------------------------------------------------------------------------------------
enum class MsgType : std::uint16_t {
  register_job = 1,  // job → RM: RegisterBody
  register_ok = 2,   // RM → job: RegisterOkBody, with the arena memfd attached (SCM_RIGHTS)
  refused = 3,       // RM → any: UTF-8 reason text
  ctl_request = 4,   // cosched-ctl / qsubmit → RM: JSON object {"cmd": ..., ...}
  ctl_reply = 5,     // RM → cosched-ctl: JSON object
  register_rank = 6, // job → RM: RegisterRankBody, one process of a job of several (an MPI rank); same reply
};

struct FrameHeader {
  std::uint32_t magic;
  std::uint16_t version;
  std::uint16_t type;  // MsgType
  std::uint32_t length;
  std::uint32_t reserved;  // 0
};
static_assert(sizeof(FrameHeader) == 16);

// Largest payload the RM accepts from a peer; larger frames are a protocol error.
inline constexpr std::uint32_t kMaxRequestPayload = 64 * 1024;
// Largest payload a client accepts from the RM (status of thousands of jobs).
inline constexpr std::uint32_t kMaxReplyPayload = 64 * 1024 * 1024;

inline constexpr std::size_t kCommandMax = 240;

struct RegisterBody {
  std::int32_t request;  // CPUs the job asks for, >= 1
  std::uint32_t flags;   // RegisterFlags
  char command[kCommandMax];  // NUL-terminated, for display only
};

enum RegisterFlags : std::uint32_t {
  reg_explicit_api = 1U << 0,  // the binary calls cosched_iter_begin/end (relinked)
  reg_gomp = 1U << 1,          // a libgomp binary moved onto libomp by cosched-run
};

// One process of a job that spans several (an MPI job: libcosched_mpi, or `cosched-run --job ID`). All
// processes that register with the same key under the same uid are one job for the policies: one job id
// (returned to each of them), one allocation split among them, stopped and resumed together.
inline constexpr std::size_t kJobKeyMax = 64;
struct RegisterRankBody {
  RegisterBody base;
  char job_key[kJobKeyMax];   // NUL-terminated, printable: the launcher's job identity (e.g. "ompi:512688129")
  std::int32_t rank;          // rank in the job (MPI_COMM_WORLD), >= 0
  std::int32_t local_ranks;   // ranks of the job on this node as the launcher says, >= 1 (0: unknown)
};

struct RegisterOkBody {
  std::uint32_t job_id;
  std::uint32_t arena_size;
};

// ---------------------------------------------------------------------------------------------------
// The arena: one memfd per job, mapped shared by the RM (read/write) and the job (read/write).
// RM-written and job-written fields live on separate cache lines. No locks cross the trust boundary:
// each side publishes with a sequence counter (even = stable) and the reader retries on a change.
// ---------------------------------------------------------------------------------------------------
inline constexpr int kMaxCpus = 1024;
inline constexpr int kMaskWords = kMaxCpus / 64;
inline constexpr std::size_t kArenaSize = 4096;

struct alignas(64) ArenaHeader {  // written once by the RM before the fd is sent
  std::uint32_t magic;
  std::uint16_t version;
  std::uint16_t reserved;
  std::uint32_t arena_size;
  std::uint32_t job_id;
};

// Written by the RM only.
struct alignas(64) RmBlock {
  // The team size for the next outermost parallel region. Read alone (one relaxed load) on the hot
  // path; always in [1, kMaxCpus] when written by the RM.
  std::atomic<std::int32_t> allocation;
  std::atomic<std::uint32_t> runnable;    // 1: may run; 0: the RM stopped it (time sharing)
  std::atomic<std::uint32_t> seq;         // seqlock over cpu_mask and generation
  std::atomic<std::uint32_t> baseline_cpus;  // the SelfAnalyzer's baseline allocation (0: job default)
  std::atomic<std::uint32_t> flags;       // RmFlags
  std::atomic<std::uint32_t> stops;       // times the RM stopped the job (time sharing): an iteration
                                          // spanning a stop is not a clean measurement
  std::atomic<std::uint64_t> generation;  // bumped on every change of allocation or mask
  std::atomic<std::uint64_t> cpu_mask[kMaskWords];  // CPUs the job's threads may run on
};

enum RmFlags : std::uint32_t {
  // The RM enforces CPUs by thread affinity (no cpuset cgroup): the job applies cpu_mask to each thread
  // it creates, because libomp resets new threads' masks.
  rm_apply_mask = 1U << 0,
  // The policy uses no speedup (Equipartition, DSS): the SelfAnalyzer skips its baseline phase, so a job
  // never runs below its allocation just to be measured.
  rm_no_baseline = 1U << 1,
  // The job is alone on the machine (cosched-rm --baseline auto): no SelfAnalyzer baseline attempt runs, and
  // one in progress pauses with its samples; the RM clears it while another job runs or one waits.
  rm_baseline_waits = 1U << 2,
  // Another running job's threads may run on some of this job's CPUs (placement put more jobs than CPUs on
  // them). libcosched then keeps libomp from yielding in its wait loops (no parked roots): a waiter that
  // yields hands its CPU to the other job for a whole scheduler slice at every barrier, where one that sleeps
  // is woken at once (docs/architecture.md, "Oversubscribed regions"). A libcosched that predates it ignores it.
  rm_cpus_shared = 1U << 3,
};

// Whether libcosched may resize a job's teams, and why not (JobBlock::team_mode; docs/architecture.md,
// "Team sizes a program can observe"). Values only grow more restrictive during a run, except that a
// program may turn dynamic adjustment (malleable) on and off itself.
enum class TeamMode : std::uint32_t {
  unknown = 0,        // no region yet
  resizable = 1,      // owned by cosched: regions without a preceding read get the granted team (>= 2)
  malleable = 2,      // opted in (OMP_DYNAMIC=true, omp_set_dynamic(1), cosched-run --malleable)
  set_by_program = 3, // the program called omp_set_num_threads: its value, always
  clause = 4,         // the program uses num_threads clauses: they get exactly what they ask for
  threadprivate = 5,  // threadprivate data (TLS in the executable, __kmpc_threadprivate*): one team size
  fixed_by_user = 6,  // cosched-run --fixed-team (COSCHED_TEAM=fixed)
  no_interposer = 7,  // libcosched_wrap is not loaded: reads of the team size cannot be seen
};
inline constexpr std::uint32_t kTeamModeMax = 7;

// The names status, why and the logs use.
constexpr const char* team_mode_name(TeamMode m) noexcept {
  switch (m) {
    case TeamMode::unknown: return "unknown";
    case TeamMode::resizable: return "resizable";
    case TeamMode::malleable: return "malleable";
    case TeamMode::set_by_program: return "fixed: omp_set_num_threads";
    case TeamMode::clause: return "fixed: num_threads clause";
    case TeamMode::threadprivate: return "fixed: threadprivate";
    case TeamMode::fixed_by_user: return "fixed: --fixed-team";
    case TeamMode::no_interposer: return "fixed: no interposer";
  }
  return "unknown";
}

// Report phase values (JobBlock::phase).
enum class Phase : std::uint32_t { none = 0, detecting = 1, baseline = 2, measuring = 3 };

// Written by the job only; the RM validates every field (finite, positive, bounded) before use.
struct alignas(64) JobBlock {
  std::atomic<std::uint32_t> seq;      // seqlock: odd while the job writes a report
  std::atomic<std::uint32_t> phase;    // Phase
  std::atomic<std::uint64_t> reports;  // number of reports published so far
  std::atomic<double> speedup;         // vs one CPU (Amdahl-normalised)
  std::atomic<double> efficiency;      // speedup / cpus
  std::atomic<double> iteration_s;     // median iteration time at `cpus`
  std::atomic<double> baseline_s;      // median iteration time at the baseline
  std::atomic<double> spread;          // relative spread of the iteration times (0 = exact)
  std::atomic<double> amdahl_f;        // parallel fraction from the Amdahl fit, -1 if unknown
  std::atomic<std::int32_t> cpus;      // team size the measurement was taken with
  std::atomic<std::int32_t> period;    // detected period (regions per iteration), 0 if none
  std::atomic<std::int32_t> samples;   // iterations behind `iteration_s`
  std::atomic<std::int32_t> baseline_team;  // team size of the baseline measurement
  // Outside the seqlock: progress counters updated on the hot path with relaxed stores.
  alignas(64) std::atomic<std::uint64_t> regions;  // outermost parallel regions begun
  std::atomic<std::int32_t> last_team;             // team libomp formed for the last outermost region (OMPT)
  std::atomic<std::int32_t> team_mode;             // TeamMode: may cosched resize this job's teams, and why
  std::atomic<std::uint64_t> iterations;           // iterations completed (detected or explicit)
  std::atomic<std::uint64_t> team_mismatches;      // regions whose formed team differed from the chosen one
  std::atomic<std::uint32_t> restarts;             // times the SelfAnalyzer threw its measurement away
  std::atomic<std::uint32_t> restart_reason;       // MeasureRestart of the latest one
  std::atomic<double> cpu_wait;                    // share of the last sample's thread time spent waiting for
                                                   // a CPU (outside load); -1 unknown
  std::atomic<std::uint64_t> contaminated;         // samples discarded for outside load
  // Network payload bytes counted by the PMPI wrappers (libcosched_mpi): sent (point-to-point and this
  // rank's share of collectives) and received (blocking receives, collectives). Relaxed adds, monotonic;
  // the RM turns them into a rate per quantum (the counter-free network sensor, BW^N of MemBUS).
  alignas(64) std::atomic<std::uint64_t> net_bytes_out;
  std::atomic<std::uint64_t> net_bytes_in;
  std::atomic<std::uint64_t> net_messages;
  // NoSpeedup: why the SelfAnalyzer, with samples at hand, published no speedup (0: none, or a report was
  // made since). Appended in the padding of the line above: a libcosched built before it leaves it 0.
  std::atomic<std::uint32_t> no_speedup;
  // The window that gave no report for that reason: its team and median iteration time (0 when none), so
  // that status keeps showing an iteration time. Appended in the same padding, with the same guarantee.
  std::atomic<std::int32_t> unreported_cpus;
  std::atomic<double> unreported_s;
  // CPUs the job asks to run on during its baseline, keeping its team, because its team cannot shrink to
  // the baseline itself (a fixed team, the team floor at the grant, reads latched at the grant): 0 for no
  // such request. The RM narrows the job's CPU set to that many of its CPUs and publishes that allocation,
  // or ignores it (docs/selfanalyzer.md, "Teams that cannot shrink"). Same padding, same guarantee.
  std::atomic<std::int32_t> narrow_cpus;
};

// Why the SelfAnalyzer started its measurement over (JobBlock::restart_reason): what it had measured no
// longer describes the job, so it is never compared with what comes next.
enum class MeasureRestart : std::uint32_t {
  none = 0,
  loop_changed = 1,        // another loop (period or signature) was locked
  time_jump = 2,           // iteration times jumped at an unchanged team size (change detector)
  work_changed = 3,        // at the baseline size, iteration times no longer match the baseline
  impossible_speedup = 4,  // efficiency above 1 + the superlinearity margin: unlike work was compared
  load_changed = 5,        // the outside load differs from the baseline's (CPU wait share)
};
inline constexpr std::uint32_t kMeasureRestartMax = 5;

constexpr const char* measure_restart_name(MeasureRestart r) noexcept {
  switch (r) {
    case MeasureRestart::none: return "none";
    case MeasureRestart::loop_changed: return "another loop was locked";
    case MeasureRestart::time_jump: return "iteration times jumped at the same team size";
    case MeasureRestart::work_changed: return "iteration times at the baseline size no longer match the baseline";
    case MeasureRestart::impossible_speedup: return "efficiency above 1 + the superlinearity margin";
    case MeasureRestart::load_changed: return "the CPU wait share changed since the baseline (outside load, or the job's own idle threads spinning)";
  }
  return "none";
}

// Why no speedup is reported although samples exist (JobBlock::no_speedup; docs/selfanalyzer.md, "A
// speedup is a measurement"). A reported speedup compares two measured points; where the job could not
// give two, nothing is reported rather than a value that follows from an assumption.
enum class NoSpeedup : std::uint32_t {
  none = 0,
  no_lower_point = 1,  // only one team size measured, above 1 CPU (the baseline could not run below the
                       // allocation judged: the team floor), and no earlier fit of this loop
  load_differs = 2,    // the reference point and the samples at P ran under different outside load
};
inline constexpr std::uint32_t kNoSpeedupMax = 2;

// Short names: status --json's `no_speedup` and the NO_SPEEDUP column.
constexpr const char* no_speedup_name(NoSpeedup r) noexcept {
  switch (r) {
    case NoSpeedup::none: return "none";
    case NoSpeedup::no_lower_point: return "no_lower_point";
    case NoSpeedup::load_differs: return "load_differs";
  }
  return "none";
}

// Written by the job only, for the RM's sensors (sensors/; docs/architecture.md, "Sensors"): cumulative
// counters with relaxed stores, outside any seqlock (the RM reads deltas over its quantum and range-checks
// them). Appended after JobBlock: a libcosched built before it existed leaves it zero, which reads as
// "no data", so the arena version did not change.
struct alignas(64) SensorBlock {
  // cosched_report_bytes() (include/cosched/selfanalyzer.h): memory traffic the program says it caused,
  // in bytes, added by any of its threads (relaxed fetch_add); `reports_bytes` is 1 once it has called it
  // at all (a program may rightly report 0 bytes: a cache-resident loop).
  std::atomic<std::uint64_t> bytes;
  std::atomic<std::uint32_t> reports_bytes;
  // The SelfAnalyzer's clean iteration samples (not spanning a stop, a team or CPU-set change, or a burst
  // of outside CPU load), cumulated by the measuring thread: total time, the time their threads spent
  // waiting for a CPU (run-queue delay summed over the threads; 0 where unknown), iterations, and the team
  // size of the latest one. The counter-free sensor's input: mean iteration time over an interval, net of
  // waiting for a CPU, per team size.
  alignas(64) std::atomic<std::uint64_t> clean_ns;
  std::atomic<std::uint64_t> clean_wait_ns;
  std::atomic<std::uint64_t> clean_iterations;
  std::atomic<std::int32_t> clean_team;
  // cosched_report_work() (include/cosched/selfanalyzer.h): units of the program's own work (elements,
  // cells, particles...) it completed, added by any thread; `reports_work` is 1 once it has called it. The
  // co-scheduling policies' progress rate (docs/architecture.md, "Progress rates"). Appended last: a
  // libcosched built before it leaves it zero ("no data").
  alignas(64) std::atomic<std::uint64_t> work;
  std::atomic<std::uint32_t> reports_work;
};

// How a job's program repeats (EfficiencyBlock::structure; docs/selfanalyzer.md, "Where the iterations are").
enum class Structure : std::uint32_t {
  unknown = 0,     // not seen yet (no parallel region, or too few events to tell)
  regions = 1,     // a period in the sequence of outermost parallel regions
  constructs = 2,  // a period in the sequence of constructs inside one long region (work, barriers, tasks)
  none = 3,        // events enough to tell, and no repeating structure in either sequence
};
inline constexpr std::uint32_t kStructureMax = 3;

constexpr const char* structure_name(Structure s) noexcept {
  switch (s) {
    case Structure::unknown: return "unknown";
    case Structure::regions: return "regions";
    case Structure::constructs: return "constructs";
    case Structure::none: return "none";
  }
  return "unknown";
}

// Why no waiting-time efficiency is published at the job's current CPUs (EfficiencyBlock::pending).
enum class EfficiencyPending : std::uint32_t {
  none = 0,            // the estimate is at the current CPUs
  warming = 1,         // too few intervals at the current CPUs yet
  oversubscribed = 2,  // the team has more threads than CPUs: a working thread may be waiting for a CPU, so
                       // working time says nothing about what the CPUs did
  load_changing = 3,   // the outside load changed (CPU wait share) and the window started over
  no_team = 4,         // no parallel region yet
};
inline constexpr std::uint32_t kEfficiencyPendingMax = 4;

constexpr const char* efficiency_pending_name(EfficiencyPending p) noexcept {
  switch (p) {
    case EfficiencyPending::none: return "none";
    case EfficiencyPending::warming: return "warming";
    case EfficiencyPending::oversubscribed: return "oversubscribed";
    case EfficiencyPending::load_changing: return "load_changing";
    case EfficiencyPending::no_team: return "no_team";
  }
  return "none";
}

// Written by the job's sampler thread only (libruntime/efficiency_sampler.cpp): the waiting-time
// efficiency at the job's current CPUs, measured without moving the job (docs/selfanalyzer.md, "Waiting-time
// efficiency"). Its own seqlock, since its writer is not the thread that writes JobBlock. Appended after
// SensorBlock: a libcosched built before it leaves it zero, which reads as "no estimate".
struct alignas(64) EfficiencyBlock {
  std::atomic<std::uint32_t> seq;          // seqlock: odd while the sampler writes
  std::atomic<std::uint32_t> structure;    // Structure
  std::atomic<std::uint64_t> reports;      // estimates published so far (0: none yet)
  std::atomic<double> efficiency;          // useful CPU time / CPU time held, over the window, in [0, 1]
  std::atomic<double> std_error;           // standard error of `efficiency` over the window's intervals
  std::atomic<double> cpu_wait;            // the window's outside-load level (run-queue share); -1 unknown
  std::atomic<double> window_s;            // wall time the window covers
  std::atomic<std::int32_t> cpus;          // CPUs the job held during the window
  std::atomic<std::int32_t> intervals;     // intervals in the window
  std::atomic<std::int32_t> period;        // events per iteration of `structure` (0: none)
  std::atomic<std::uint32_t> pending;      // EfficiencyPending: why the latest estimate is not at the current CPUs
  // Outside the seqlock: progress, with relaxed stores.
  std::atomic<std::uint64_t> construct_iterations;  // iterations found inside long regions (Structure::constructs)
  std::atomic<std::uint64_t> ticks;                 // samples of the threads' states taken so far
};

struct Arena {
  ArenaHeader header;
  RmBlock rm;
  JobBlock job;
  SensorBlock sensors;
  EfficiencyBlock efficiency;
};
static_assert(sizeof(Arena) <= kArenaSize);
static_assert(std::atomic<double>::is_always_lock_free);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

}  // namespace cosched::proto
