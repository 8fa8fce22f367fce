// What `status` shows of one job (job_status.hpp).
#include "job_status.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "job_table.hpp"
#include "narrowing.hpp"

namespace cosched::rm {

using nlohmann::json;

namespace {

const char* phase_name(proto::Phase p) {
  switch (p) {
    case proto::Phase::none: return "none";
    case proto::Phase::detecting: return "detecting";
    case proto::Phase::baseline: return "baseline";
    case proto::Phase::measuring: return "measuring";
  }
  return "none";
}

// CPU time the process received so far (user + system, all its threads, live and exited), in seconds;
// null when /proc cannot tell (the process is gone).
json cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return nullptr;
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  // Fields after comm: state(3) ... utime(14) stime(15).
  for (int n = 3; n <= 15 && (rest >> field); ++n) {
    if (n == 14) utime = std::stoull(field);
    if (n == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// True once the job has a period (of regions, or of constructs inside a long region); false when the sampler
// saw nothing repeat for 2 s, or, from a libcosched without the sampler, no period 1 s after arrival (PDPA's
// default unmeasured_after_s, our choice); null before that.
json iterative_json(const Job& j, double now) {
  if (j.progress.period > 0 || j.efficiency.structure == proto::Structure::regions ||
      j.efficiency.structure == proto::Structure::constructs) {
    return true;
  }
  if (j.efficiency.structure == proto::Structure::none) return false;
  if (j.efficiency.ticks == 0 && now - j.arrival >= 1.0) return false;
  return nullptr;
}

// A job's speedup estimates in status: the one the policy uses, and both as the job published them.
void add_estimates(json& o, const Job& j) {
  // The same keys for every job, null until the first report (and amdahl_f while no fit exists), so that
  // scripts reading status --json see one schema.
  // These are the estimate the policy uses (rm/job/estimate.hpp): its kind says which of the two below it is.
  const bool m = j.perf.valid;
  auto measured = [m](auto v) { return m ? json(v) : json(nullptr); };
  o["speedup"] = measured(j.perf.speedup);
  o["efficiency"] = measured(j.perf.efficiency);
  o["iteration_s"] = m && j.perf.iteration_s > 0 ? json(j.perf.iteration_s) : json(nullptr);
  o["baseline_s"] = m && j.perf.baseline_s > 0 ? json(j.perf.baseline_s) : json(nullptr);
  o["spread"] = measured(j.perf.spread);
  o["measured_cpus"] = measured(j.perf.cpus);
  o["samples"] = measured(j.perf.samples);
  o["reports"] = measured(j.perf.seq);
  o["amdahl_f"] = m && j.perf.amdahl_f >= 0 ? json(j.perf.amdahl_f) : json(nullptr);
  o["estimate_kind"] = m ? json(policy::to_string(j.perf.kind)) : json(nullptr);
  o["confidence"] = measured(j.perf.confidence);
  o["estimate_note"] = j.estimate_note.empty() ? json(nullptr) : json(j.estimate_note);
  // Both estimates as the job published them (null until each has one): the waiting-time efficiency at the
  // CPUs it holds, and the SelfAnalyzer's measured speedup (`failed`: impossible, never given to the policy).
  const WaitingEstimate& w = j.efficiency.estimate;
  o["waiting_time"] = w.valid ? json{{"efficiency", w.efficiency},
                                     {"std_error", w.std_error},
                                     {"speedup", w.efficiency * w.cpus},
                                     {"cpus", w.cpus},
                                     {"intervals", w.intervals},
                                     {"window_s", w.window_s},
                                     {"cpu_wait", w.cpu_wait >= 0 ? json(w.cpu_wait) : json(nullptr)},
                                     {"reports", w.seq}}
                              : json(nullptr);
  o["waiting_time_pending"] = proto::efficiency_pending_name(j.efficiency.pending);
  o["state_samples"] = j.efficiency.ticks;
  const policy::Perf& ms = j.measured;
  o["measured_speedup"] = ms.seq > 0 && ms.cpus > 0 ? json{{"speedup", ms.speedup},
                                                         {"efficiency", ms.efficiency},
                                                         {"cpus", ms.cpus},
                                                         {"iteration_s", ms.iteration_s},
                                                         {"baseline_s", ms.baseline_s},
                                                         {"spread", ms.spread},
                                                         {"amdahl_f", ms.amdahl_f >= 0 ? json(ms.amdahl_f) : json(nullptr)},
                                                         {"reports", ms.seq},
                                                         {"failed", j.measured_failed}}
                                                   : json(nullptr);
}

// What the job wrote of its teams, iterations and SelfAnalyzer (the arena's progress and efficiency blocks).
json progress_json(const Job& j, const JobStatusContext& ctx) {
  return {{"regions", j.progress.regions},
          {"iterations", j.progress.iterations},
          {"team", j.progress.last_team},
          {"team_mode", proto::team_mode_name(j.progress.team_mode)},
          {"resizable", j.progress.team_mode == proto::TeamMode::resizable ||
                            j.progress.team_mode == proto::TeamMode::malleable},
          {"team_mismatches", j.progress.team_mismatches},
          {"measurement_restarts", j.progress.restarts},
          {"restart_reason", proto::measure_restart_name(j.progress.restart_reason)},
          // Why the job published no speedup (null: it did, or has nothing to compare yet).
          {"no_speedup", j.progress.no_speedup == proto::NoSpeedup::none
                             ? json(nullptr) : json(proto::no_speedup_name(j.progress.no_speedup))},
          {"cpu_wait", j.progress.cpu_wait >= 0 ? json(j.progress.cpu_wait) : json(nullptr)},
          {"contaminated_samples", j.progress.contaminated},
          {"phase", phase_name(j.progress.phase)},
          // Its baseline waits while it is alone (--baseline auto; BaselineSteering::follow_sharing).
          {"baseline_waits", ctx.baseline_waits},
          {"period", j.progress.period},
          // Whether the SelfAnalyzer found an iterative structure: true once it has a period; false when
          // it has none 1 s after arrival (one long region, or nothing that repeats: PDPA then counts the
          // job as unmeasured, docs/policies.md); null before that. 1 s: PDPA's default
          // unmeasured_after_s (our choice).
          // Inside one long region the period is one of constructs (structure); "none" says the sampler saw
          // nothing repeat in either sequence for 2 s.
          {"iterative", iterative_json(j, ctx.now)},
          {"structure", proto::structure_name(j.efficiency.structure)},
          {"structure_period", j.efficiency.period},
          {"construct_iterations", j.efficiency.construct_iterations}};
}

}  // namespace

json job_json(const Job& j, const JobStatusContext& ctx) {
  const auto [running, running_cpus] = running_set(j, j.allocation, j.cpus);
  json o = {{"id", j.id},
            {"pid", j.pid},
            {"uid", j.uid},
            {"command", j.command},
            {"requested", j.request},
            {"allocated", j.allocation},
            {"cpus", j.cpus.to_vector()},
            {"cpu_list", j.cpus.to_string()},
            // Whether another running job's threads may use some of its CPUs (proto::rm_cpus_shared).
            {"cpus_shared", j.arena != nullptr && j.arena->cpus_shared()},
            // A baseline by narrowing (narrowing.cpp): the CPUs it runs on meanwhile; null when none.
            {"baseline_narrowed_to", running < j.allocation ? json(running_cpus.to_string()) : json(nullptr)},
            {"state", j.suspended ? "suspended" : j.runnable ? "running" : "stopped"},
            {"run_state", j.runnable ? "running" : "stopped"},
            {"stops", j.stops},
            {"stopped_s", j.stopped_s + (j.runnable ? 0.0 : ctx.now - j.stopped_at)},
            {"cpu_s", cpu_seconds(j.pid)},
            {"policy_state", j.policy_state},
            {"arrival_s", j.arrival},
            // A process of a job of several (an MPI rank): the job id all its processes share, its rank and the
            // launcher's key; for a job of its own, job = id and rank/job_key are null.
            {"job", view_id(j)},
            {"rank", j.gang != 0 ? json(j.rank) : json(nullptr)},
            {"job_key", j.gang != 0 ? json(j.job_key) : json(nullptr)},
            {"slurm_job_id", slurm_id_json(j)},
            // The PMPI wrappers' exact counts (0 for a program that is no MPI rank) and the network sensor's
            // latest rate (null before its first sample).
            {"net_bytes_out", j.progress.net_bytes_out},
            {"net_bytes_in", j.progress.net_bytes_in},
            {"net_messages", j.progress.net_messages},
            {"net_bytes_per_s", nullptr}};
  o.update(progress_json(j, ctx));
  if (const policy::Bandwidth n = ctx.sensors->network(j.id); n.valid()) o["net_bytes_per_s"] = n.latest().bytes_per_s;
  add_estimates(o, j);
  // While the job reports no speedup (no_speedup), its latest window's iteration time is still a
  // measurement: shown with its team next to the last report's fields, which stay one consistent report
  // (docs/selfanalyzer.md, "A speedup is a measurement"). Null when the job reports.
  const bool u = j.progress.unreported_s > 0;
  o["unreported_iteration_s"] = u ? json(j.progress.unreported_s) : json(nullptr);
  o["unreported_cpus"] = u ? json(j.progress.unreported_cpus) : json(nullptr);
  o["bandwidth"] = ctx.sensors->job_json(j.id);
  // The latest progress-rate sample (sensors/rates.hpp), null until the first.
  if (j.rate.valid()) {
    o["rate"] = {{"per_s", j.rate.latest.per_s},
                 {"source", j.rate.latest.source},
                 {"seconds", j.rate.latest.seconds},
                 {"at", j.rate.latest.at},
                 {"with", j.rate.latest.with},
                 {"samples", j.rate.seq}};
  } else {
    o["rate"] = nullptr;
  }
  // The memory traffic the program reported through cosched_report_bytes, in all since it started (null when
  // it never called it): what the app-reported sensor turns into bytes/s, as the job wrote it.
  const ArenaSensors c = j.arena->read_sensors();
  o["bytes_reported"] = c.reports_bytes ? json(c.bytes) : json(nullptr);
  return o;
}

}  // namespace cosched::rm
