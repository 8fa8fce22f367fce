// Application models: what a simulated job is made of. An SWF job (arrival, request, run time, executable)
// plus the catalog's speedup model for its executable become a JobSpec: an amount of work and a curve that
// says how fast that work goes on P CPUs (docs/simulator.md, "Application models").
//
//   work (one-CPU seconds) = SWF run time x S(request)
//
// i.e. a job alone on its (scaled) request finishes in exactly its SWF run time, whatever its curve. With
// the linear default S(p) = p this is the classic "run time x processors" of trace-driven simulation.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cosched/error.hpp"
#include "qs/catalog.hpp"
#include "qs/swf.hpp"

namespace cosched::sim {

struct AppModel {
  std::string name;
  std::string app_class;
  catalog::SpeedupModel speedup;
  double iteration_s = 1.0;  // one outer iteration on one CPU: the SelfAnalyzer model's unit of measurement
  std::string source;        // where the curve came from, for messages: "pdpa-models.yaml:12", "default"
  // Outermost parallel regions per iteration, as libcosched's periodicity detector sees them: -1 unknown
  // (the explicit iteration API, or --sa-detect-iterations alone), 0 not iterative (one long region).
  int period = -1;
  // Memory traffic of one thread alone, bytes/s (catalog `bandwidth`); < 0 unknown: no memory demand in the
  // contention model and nothing for the app-reported sensor.
  double bandwidth = -1;
  // Shared SMT core (catalog `smt`): slowed by 1 + smt_sensitivity × Σ the co-runners' smt_intensity on its core.
  double smt_intensity = 0;
  double smt_sensitivity = 0;
  // Catalog `team: fixed`: the program runs its request's threads whatever its CPUs (omp_set_num_threads,
  // clauses, reads of the team size), so on fewer CPUs they share them (JobTiming::oversub_cost), and its
  // SelfAnalyzer baseline is one by narrowing: its threads on the baseline's CPUs (docs/simulator.md).
  bool fixed_team = false;
};

// The model used for executables nobody describes (--default-speedup, --default-iteration-s).
// Text forms: "linear" (S(p) = p), "amdahl:S" (serial fraction S), "downey:A:SIGMA", "table:1=1,8=6,...".
Result<catalog::SpeedupModel> parse_speedup_spec(std::string_view text);

// Resolves executable numbers to models, once each. Lookup, first hit wins:
//   curve:  models exact entry > catalog exact entry > models default > catalog default > built-in default
//           (an entry without a `speedup` is skipped for the curve; its iteration_s is used only with its curve)
//   name/class: the first exact entry (models, then catalog), else the default entry that gave the curve,
//           else "exe<N>" with class "uncatalogued".
class ModelTable {
 public:
  ModelTable(const catalog::Catalog* catalog, const catalog::Catalog* models, AppModel fallback);
  // Never null; the pointer stays valid for the table's life.
  const AppModel& find(std::int64_t executable);

 private:
  AppModel resolve(std::int64_t executable) const;
  const catalog::Catalog* catalog_;
  const catalog::Catalog* models_;
  AppModel fallback_;
  std::map<std::int64_t, AppModel> cache_;
};

// One workload job, ready to simulate.
struct JobSpec {
  std::int64_t number = -1;      // SWF field 1
  double submit = 0;             // seconds since the start of the run (time-scaled)
  int request = 1;               // CPUs, after scaling to the simulated machine
  double work = 0;               // one-CPU seconds
  const AppModel* app = nullptr;
  std::string problem;           // non-empty: the job cannot be simulated (reported, never started)
  // Closed workloads (SWF fields 17-18): released when job `preceding` ends, plus `think` seconds (scaled
  // like submit times); -1: an open job, released at `submit`.
  std::int64_t preceding = -1;
  double think = 0;
  double ideal = -1;             // SWF field 4: its run time on a dedicated machine at its request
  [[nodiscard]] bool usable() const { return problem.empty(); }
};

struct JobBuildOptions {
  int machine_cpus = 1;
  std::int64_t trace_procs = 0;  // source machine for request scaling; 0 = the SWF header's MaxProcs/MaxNodes
  double time_scale = 1.0;       // submit times are multiplied by it (qsubmit's --time-scale)
};

// Every SWF job becomes a JobSpec, in file order. A job with an unknown run time (field 4 = -1) or no
// processor request is kept with `problem` set: results list it as never started, it is never dropped.
std::vector<JobSpec> build_jobs(const swf::Workload& workload, ModelTable& models, const JobBuildOptions& options);

}  // namespace cosched::sim
