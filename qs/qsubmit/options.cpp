#include "options.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "cosched/wire.hpp"

namespace cosched::qsubmit {

std::string Options::run_label() const {
  switch (rm_mode) {
    case RmMode::native: return "native";
    case RmMode::private_: return policy;
    case RmMode::existing: return "rm";
  }
  return "rm";
}

ParsedOptions parse_options(int argc, char** argv) {
  Options o;
  o.socket = wire::default_socket_path();
  std::string select = "fcfs";

  CLI::App app{
      "qsubmit: replays an SWF workload with real jobs. Jobs arrive at their submit time (x --time-scale), wait in\n"
      "a queue (FCFS or shortest request first) and start through cosched-run when the resource manager's\n"
      "multiprogramming level allows it (or a fixed --ml). Results go to --out: jobs.csv, summary.json, ml.csv,\n"
      "traces, decisions.jsonl and each job's output under jobs/.\n"
      "Exit status: 0 all jobs exited 0, 1 some job failed, 2 bad input (nothing started)."};
  app.set_version_flag("--version", std::string("qsubmit ") + COSCHED_VERSION);

  app.add_option("workload", o.workload, "SWF workload file (plain or .gz)")->required();
  app.add_option("--catalog,-c", o.catalog, "application catalog (default: catalog.yaml next to the workload)");
  app.add_option("--time-scale,-t", o.time_scale, "multiply submit times by X (0.1 = ten times faster)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-procs", o.max_procs,
                 "CPUs of the machine the trace came from, for request scaling (default: the SWF header's MaxProcs)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  app.add_option("--ml", o.ml,
                 "fixed multiprogramming level: start jobs while fewer than N run (default: ask the RM's may_start;"
                 " with --native: the number of CPUs)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--select", select, "which queued job starts next: fcfs or sjf (shortest request first)")
      ->check(CLI::IsMember({"fcfs", "sjf"}))
      ->capture_default_str();
  bool native_flag = false;
  auto* native = app.add_flag("--native", native_flag, "no resource manager: OMP_NUM_THREADS = request, the plain program");
  auto* socket = app.add_option("--socket,-s", o.socket, "use the cosched-rm serving this socket")
                     ->envname("COSCHED_SOCKET")
                     ->capture_default_str();
  auto* policy = app.add_option("--policy,-p", o.policy,
                                "start a private cosched-rm with this policy for the run (stopped at the end)");
  auto* param = app.add_option("--param", o.params, "private RM: policy parameter NAME=VALUE (repeatable)");
  auto* cpus = app.add_option("--cpus", o.cpus, "private RM: CPUs to manage, e.g. 0-3 (default: all we may use)");
  app.add_option("--out,-o", o.out_dir, "output directory (default: $XDG_DATA_HOME/cosched/runs/qsubmit-<policy|native>-<timestamp>, "
                 "XDG_DATA_HOME defaulting to ~/.local/share)");
  app.add_flag("--lenient", o.lenient, "skip malformed SWF lines (with a warning) instead of refusing the workload");
  app.add_option("--extra-fields", o.extra_fields,
                 "columns after the 18th of a job line: error (the standard has 18) or ignore (read the first 18, with one warning counting the lines)")
      ->check(CLI::IsMember({"error", "ignore"}))->capture_default_str();
  app.add_flag("--quiet,-q", o.quiet, "no progress line and no summary table");
  app.add_option("--backend", o.backend,
                 "local: start the jobs here; slurm: submit each job with sbatch at its submit time (with --cosched "
                 "unless --native) and build the results from Slurm's job-completion records (docs/slurm.md)")
      ->check(CLI::IsMember({"local", "slurm"}))
      ->capture_default_str();
  auto* partition = app.add_option("--partition", o.partition, "--backend slurm: the partition (default: Slurm's default)");
  auto* sbatch_opt = app.add_option("--sbatch-option", o.sbatch_options,
                                    "--backend slurm: an option for every sbatch, repeatable (--sbatch-option=--exclusive)")
                         ->allow_extra_args(false);
  auto* label = app.add_option("--label", o.label, "--backend slurm: the run's name in summary.json and reports");

  native->excludes(socket)->excludes(policy);
  socket->excludes(policy);
  param->needs(policy);
  cpus->needs(policy);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);  // prints help, version or the error
    return {std::nullopt, code == 0 ? kExitOk : kExitBadInput};
  }
  o.selection = *qs::parse_selection(select);  // IsMember above admits only known names
  if (o.backend == "slurm") {
    // Slurm decides where and when; the node's RM is started by the prolog or systemd (docs/slurm.md).
    for (const auto* opt : {policy, param, cpus}) {
      if (opt->count() > 0) {
        std::fprintf(stderr, "qsubmit: %s needs --backend local (under Slurm each node runs its own cosched-rm)\n",
                     opt->get_name().c_str());
        return {std::nullopt, kExitBadInput};
      }
    }
    if (o.ml > 0) {
      std::fprintf(stderr, "qsubmit: --ml needs --backend local (under Slurm the partition's OverSubscribe and the "
                           "node's RM set the level)\n");
      return {std::nullopt, kExitBadInput};
    }
  } else {
    for (const auto* opt : {partition, sbatch_opt, label}) {
      if (opt->count() > 0) {
        std::fprintf(stderr, "qsubmit: %s needs --backend slurm\n", opt->get_name().c_str());
        return {std::nullopt, kExitBadInput};
      }
    }
  }
  if (native_flag) {
    o.rm_mode = RmMode::native;
  } else if (policy->count() > 0) {
    o.rm_mode = RmMode::private_;
  }
  return {std::move(o), kExitOk};
}

int bad_input(const std::string& message) {
  std::fprintf(stderr, "qsubmit: %s\n", message.c_str());
  return kExitBadInput;
}

}  // namespace cosched::qsubmit
