// The results of one workload run — real (qsubmit), native (qsubmit --native) or simulated (cosched-sim) —
// in one data model, written in one set of files so that cosched-report compares any of them side by side:
//
//   DIR/jobs.csv        one row per job: job, app, class, submit, start, end, wait, response, execution,
//                       requested, mean_cpus, exit_status, rm_id, pid
//   DIR/summary.json    per application class and overall: mean/median response and execution time,
//                       makespan, CPU utilisation, mean multiprogramming level; plus the run's metadata
//   DIR/ml.csv          multiprogramming level over time (t, running, queued)
//   DIR/allocation.csv  every CpuSegment (job, t0, t1, cpus, cpu_list) so that read_run gets the whole Run back
//   DIR/trace.prv/.pcf/.row   Paraver trace: one row per CPU, state = the job on it (PDPA paper Fig. 5)
//   DIR/trace.json      the same as a Chrome/Perfetto trace (one track per CPU), plus the ML as a counter
//
// Times are seconds since the run began. A job that never started or never ended has start/end = -1 and
// is reported as such (never silently dropped).
//
// docs/results.md documents every column, the formulas (utilisation, mean ML) and the trace placement rule.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cosched/error.hpp"

namespace cosched::results {

// The CPUs a job held during [t0, t1).
struct CpuSegment {
  double t0 = 0;
  double t1 = 0;
  int cpus = 0;               // how many
  std::vector<int> cpu_list;  // which (may be empty when unknown, e.g. native runs: then traces spread
                              // the job over `cpus` rows by its own rule, documented in the writer)
};

// What a job's segments add up to, kept instead of them where a run has too many to keep (cosched-sim
// --dry-run under time sharing: a segment per turn, millions of them). Enough for the summary, nothing more.
struct HeldTotals {
  double cpu_seconds = 0;  // Σ cpus·(t1−t0)
  double seconds = 0;      // Σ (t1−t0) over segments with CPUs
  double last_end = -1;    // the latest t1 (-1: none)
};

// ∫ min(Σ CPUs held, machine) dt over a run, added up as it ran (with HeldTotals).
struct DeliveredTotals {
  double cpu_seconds = 0;
  bool oversubscribed = false;  // Σ held exceeded the machine over some stretch (else delivered = held)
};

struct JobRecord {
  std::int64_t id = 0;        // SWF job number
  std::string app;            // application name (catalog)
  std::string app_class;      // class label for summaries (catalog "class", else the app name)
  double submit = 0;
  double start = -1;
  double end = -1;
  int requested = 1;          // CPUs requested (after scaling to this machine)
  int exit_status = 0;        // the program's exit status (simulation: 0)
  // Its run time on a dedicated machine at its request (SWF field 4), for the normalised throughput of DSS
  // eqs. 10-11; -1 unknown. Not in jobs.csv: summary.json carries what it yields.
  double ideal = -1;
  // Where to find the job outside this run: its id at the RM (`cosched-ctl why`, the decision log,
  // `cosched-ctl history`) and its process id; -1 when there is none (simulated, native, never seen).
  std::int64_t rm_id = -1;
  std::int64_t pid = -1;
  std::vector<CpuSegment> allocation;
  std::optional<HeldTotals> held;  // set instead of `allocation` (above); allocation.csv then lists none

  [[nodiscard]] double wait() const { return start >= 0 ? start - submit : -1; }
  [[nodiscard]] double response() const { return end >= 0 ? end - submit : -1; }
  [[nodiscard]] double execution() const { return end >= 0 && start >= 0 ? end - start : -1; }
  // Time-weighted mean of CPUs held over the execution; `requested` when no segment is known.
  [[nodiscard]] double mean_cpus() const;
  // CPU·seconds held: Σ cpus·(t1−t0) over the segments; requested × execution when no segment is known;
  // 0 for a job that never ran.
  [[nodiscard]] double cpu_seconds() const;
};

struct MlSample {
  double t = 0;
  int running = 0;
  int queued = 0;
};

struct Run {
  std::string name;           // a label for reports: "pdpa", "equip", "native", "sim-pdpa", ...
  std::string mode;           // "real", "native" or "simulated"
  std::string policy;         // policy name ("" for native)
  nlohmann::json params = nlohmann::json::object();  // policy parameters, options
  int machine_cpus = 1;
  std::string workload;       // path of the SWF file
  double time_scale = 1.0;
  std::vector<JobRecord> jobs;
  std::vector<MlSample> ml;
  std::optional<DeliveredTotals> delivered;  // with the jobs' HeldTotals; else worked out from their segments
  // Real runs: jobs that ran without the RM's control (their registration failed); -1 where it does not
  // apply (native and simulated runs).
  int unmanaged_jobs = -1;
  // Lenient reads: SWF lines skipped as bad (all of them, not only those shown).
  std::int64_t skipped_lines = 0;
};

// Summary statistics (what summary.json holds).
nlohmann::json summarize(const Run& run);

// The ML a run would have sampled, rebuilt from its jobs' submit/start/end: one sample per distinct event
// time. write_run uses it when `run.ml` is empty; cosched-sim may use it instead of sampling.
std::vector<MlSample> derive_ml(const std::vector<JobRecord>& jobs);

struct WriteOptions {
  // The traces (trace.prv/.pcf/.row, trace.json) grow with jobs × CPUs: a 10,000-job run on 1,024 CPUs
  // makes gigabytes. Without them the run directory still has every table (and allocation.csv, from which
  // traces can be drawn later).
  bool traces = true;
  // allocation.csv. For both, false: none is written, and one left in `dir` by an earlier run is removed (a
  // reader would take it for this run's).
  bool allocation = true;
};

// Writes every file above into `dir` (created if needed). Errors name the file.
Status write_run(const std::string& dir, const Run& run, const WriteOptions& options = {});

// Reads back jobs.csv + summary.json, and allocation.csv + ml.csv when present (used by tests and comparison
// tools). Errors name the file, line and column.
Result<Run> read_run(const std::string& dir);

}  // namespace cosched::results
