#include "run.hpp"

#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>

#include "paths.hpp"
#include "processes.hpp"
#include "progress.hpp"
#include "replay.hpp"
#include "qs/qsubmit/slurm/slurm_replay.hpp"
#include "rm_link.hpp"
#include "workload.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cosched::qsubmit {

namespace {

int cpus_we_may_use() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

Status write_lines(const std::string& path, const std::vector<json>& entries) {
  std::ofstream out(path, std::ios::trunc);
  for (const auto& e : entries) out << e.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
  out.close();
  if (!out) return make_error(Errc::io_error, "cannot write " + path);
  return {};
}

// With an RM someone else runs, its decision log is not ours to read: ask for the entries of our run.
void copy_decisions(const RmLink& rm, double since, const std::string& path, ProgressLine& progress) {
  std::vector<json> entries;
  if (auto got = rm.decisions_since(since)) {
    entries = std::move(*got);
  } else {
    progress.note("decisions.jsonl left empty: " + got.error().message);
  }
  if (auto st = write_lines(path, entries); !st) progress.note(st.error().message);
}

std::string failed_jobs_sentence(const std::vector<results::JobRecord>& jobs) {
  std::string out;
  int n = 0;
  for (const auto& j : jobs) {
    if (j.exit_status == 0 && j.end >= 0) continue;
    if (n++ < 20) {
      out += (out.empty() ? "" : ", ") + ("job " + std::to_string(j.id) + " (" + j.app + ", ");
      out += j.start < 0 ? "never started)" : j.end < 0 ? "never ended)" : "exit " + std::to_string(j.exit_status) + ")";
    }
  }
  if (n > 20) out += ", and " + std::to_string(n - 20) + " more";
  return n == 0 ? std::string() : std::to_string(n) + " job(s) failed: " + out;
}

// Jobs that fell out of the RM's control are part of the result: their times are native times.
std::string unmanaged_sentence(const std::vector<std::int64_t>& ids, const std::string& jobs_dir) {
  if (ids.empty()) return {};
  std::string list;
  for (std::size_t i = 0; i < ids.size() && i < 20; ++i) list += (i == 0 ? "" : ", ") + std::to_string(ids[i]);
  if (ids.size() > 20) list += ", and " + std::to_string(ids.size() - 20) + " more";
  return std::to_string(ids.size()) + " job(s) ran unmanaged (the RM never registered them; see " + jobs_dir +
         "/<job>.err): " + list;
}

// What the run leaves in its results directory (qs/results.hpp).
results::Run run_record(const Options& options, const LoadedWorkload& workload, const std::string& label,
                        const json& policy_params, int machine_cpus, const ReplaySetup& setup, const Replay& replay,
                        bool managed) {
  results::Run run;
  run.name = label;
  run.mode = options.rm_mode == RmMode::native ? "native" : "real";
  run.policy = options.rm_mode == RmMode::native ? "" : label;
  run.params["policy_params"] = policy_params;
  run.params["ml"] = setup.fixed_ml > 0 ? json(setup.fixed_ml) : json("rm");
  run.params["select"] = options.selection == qs::Selection::fcfs ? "fcfs" : "sjf";
  run.params["trace_procs"] = workload.trace_procs;
  run.params["catalog"] = workload.catalog_path;
  run.machine_cpus = machine_cpus;
  run.workload = options.workload;
  run.time_scale = options.time_scale;
  run.jobs = replay.job_records();
  run.ml = replay.ml_samples();
  if (managed) run.unmanaged_jobs = static_cast<int>(replay.unmanaged().size());
  run.skipped_lines = workload.skipped_lines;
  return run;
}

// One line each on stderr: an RM that stopped answering, the jobs that failed, the jobs that ran unmanaged.
// True when a job failed.
bool report_failures(const results::Run& run, const Replay& replay, const std::string& jobs_dir) {
  const std::string failed = failed_jobs_sentence(run.jobs);
  if (replay.rm_lost()) std::fprintf(stderr, "qsubmit: the run stopped early: cosched-rm stopped answering\n");
  if (!failed.empty()) std::fprintf(stderr, "qsubmit: %s\n", failed.c_str());
  if (std::string u = unmanaged_sentence(replay.unmanaged(), jobs_dir); !u.empty()) {
    std::fprintf(stderr, "qsubmit: %s\n", u.c_str());
  }
  return !failed.empty();
}

// A broken install is bad input too: found out before anything starts. Empty when every program is there.
std::string missing_program(const Options& options) {
  if (options.rm_mode != RmMode::native && find_executable(cosched_run_path()).empty()) {
    return "cosched-run not found (looked at " + cosched_run_path() + ")";
  }
  if (options.rm_mode == RmMode::private_ && find_executable(cosched_rm_path()).empty()) {
    return "cosched-rm not found (looked at " + cosched_rm_path() + ")";
  }
  return {};
}

// After the replay: stop the jobs of an interrupted run, keep the RM's decisions, stop a private RM (it
// releases every job it still holds) and reap what is left.
void wind_down(const Options& options, Replay& replay, RmLink* rm, const std::string& decisions_path,
               ProgressLine& progress) {
  if (replay.stop_signal() != 0) {
    progress.note("interrupted (signal " + std::to_string(replay.stop_signal()) + "): stopping the jobs");
    replay.stop_jobs();
  }
  if (options.rm_mode == RmMode::existing) {
    copy_decisions(*rm, replay.rm_uptime_at_start(), decisions_path, progress);
  } else if (options.rm_mode == RmMode::native) {
    (void)write_lines(decisions_path, {});  // no RM, no decisions; the file set stays the same
  }
  if (rm) rm->stop();
  replay.reap_remaining(5.0);
}

}  // namespace

int run_qsubmit(const Options& options) {
  if (options.backend == "slurm") return run_slurm_backend(options);
  signals::install();  // before anything starts: a Ctrl-C from here on is handled, not fatal

  auto workload = load_workload(options);
  if (!workload) return bad_input(workload.error().message);

  if (std::string missing = missing_program(options); !missing.empty()) return bad_input(missing);

  // Reach the RM (or start ours) to learn the machine: requests are scaled to the CPUs it manages.
  std::string label = options.run_label();
  std::string out_dir = options.out_dir;
  std::optional<RmLink> rm;
  json policy_params = json::object();
  int machine_cpus = 0;
  if (options.rm_mode == RmMode::existing) {
    rm.emplace(options.socket);
    auto st = rm->status();
    if (!st) {
      std::fprintf(stderr, "qsubmit: cannot use the cosched-rm at %s: %s\n", options.socket.c_str(),
                   st.error().message.c_str());
      return kExitNoRm;
    }
    label = st->policy.empty() ? label : st->policy;
  }
  if (out_dir.empty()) out_dir = default_out_dir(label);
  bool dir_existed = fs::exists(out_dir);
  if (auto msg = claim_out_dir(out_dir); !msg.empty()) return bad_input(msg);
  std::string decisions_path = fs::absolute(fs::path(out_dir) / "decisions.jsonl").string();

  if (options.rm_mode == RmMode::private_) {
    auto started = RmLink::start_private({options.policy, options.params, options.cpus, decisions_path});
    if (!started) {
      std::error_code ec;
      if (!dir_existed) fs::remove_all(out_dir, ec);
      return bad_input(started.error().message);
    }
    rm.emplace(std::move(*started));
  }
  if (rm) {
    auto st = rm->status();
    if (!st) return bad_input("cosched-rm at " + rm->socket() + ": " + st.error().message);
    machine_cpus = static_cast<int>(st->cpus.size());
    policy_params = st->params;
    if (!st->policy.empty()) label = st->policy;
  } else {
    machine_cpus = cpus_we_may_use();
  }
  if (machine_cpus <= 0) return bad_input("the resource manager manages no CPU");
  scale_requests(*workload, machine_cpus);

  ProgressLine progress(!options.quiet && ::isatty(STDERR_FILENO) != 0, label);
  ReplaySetup setup;
  setup.workload = &*workload;
  setup.rm = rm ? &*rm : nullptr;
  setup.fixed_ml = options.ml > 0 ? options.ml : (rm ? 0 : machine_cpus);
  setup.selection = options.selection;
  setup.jobs_dir = (fs::path(out_dir) / "jobs").string();
  setup.progress = &progress;
  setup.label = label;

  Replay replay(setup);
  replay.run();
  wind_down(options, replay, rm ? &*rm : nullptr, decisions_path, progress);

  const results::Run run =
      run_record(options, *workload, label, policy_params, machine_cpus, setup, replay, rm.has_value());
  auto written = results::write_run(out_dir, run);
  progress.finish();
  if (!written) std::fprintf(stderr, "qsubmit: %s\n", written.error().message.c_str());
  if (!options.quiet) std::printf("%s", summary_table(run).c_str());

  if (replay.stop_signal() != 0) return 128 + replay.stop_signal();
  const bool failed = report_failures(run, replay, setup.jobs_dir);
  if (!options.quiet) std::printf("results: %s\n", out_dir.c_str());
  return !failed && written ? kExitOk : kExitJobFailed;
}

}  // namespace cosched::qsubmit
