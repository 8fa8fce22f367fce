#include "sim/cli/options.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

#include "cosched/cli.hpp"

namespace cosched::sim {

ParsedOptions parse_options(int argc, char** argv) {
  Options o;
  std::vector<std::string> params;
  std::string select = "fcfs";
  int quantum_ms = 100;
  bool no_analyzer = false;
  bool no_waiting_time = false;
  bool no_placement = false;
  bool list = false;
  sa::Config& sa = o.sim.analyzer.config;

  CLI::App app{
      "cosched-sim: replays an SWF workload on a simulated machine with the same policy objects cosched-rm runs\n"
      "(policies/), libcosched's SelfAnalyzer and the daemon's placement; jobs are application models from the\n"
      "catalog. Writes qsubmit's result files (jobs.csv, summary.json, ml.csv, traces) to --out.\n"
      "Usage: cosched-sim WORKLOAD --policy NAME --cpus N [options], or cosched-sim --list-policies.\n"
      "cosched-sim cluster [options] runs the cluster model instead (cosched-sim cluster --help).\n"
      "cosched-sim replay-core TRACE replays a cosched-rm --core-trace (cosched-sim replay-core --help).\n"
      "Exit status: 0 done, 1 the results could not be written, 2 bad input."};
  app.set_version_flag("--version", std::string("cosched-sim ") + COSCHED_VERSION);
  app.footer("Policies, and their parameters as NAME=DEFAULT (accepted values): meaning (set with --param):\n" +
             policy::describe_policies());

  auto* workload = app.add_option("workload", o.workload, "SWF workload file (plain or .gz); required");
  auto* policy = app.add_option("--policy,-p", o.policy, "policy name (below, or --list-policies); required");
  app.add_option("--param", params, "policy parameter NAME=VALUE (repeatable)");
  auto* cpus = app.add_option("--cpus", o.sim.cpus, "CPUs of the simulated machine; required")->check(CLI::Range(1, 1 << 16));
  app.add_flag("--list-policies", list, "list the policies and exit");
  bool markdown = false;
  app.add_flag("--markdown", markdown, "with --list-policies: every policy's parameters as the Markdown table in docs/usage.md");
  app.add_option("--topology", o.topology,
                 "an SMT machine as an hwloc synthetic topology, e.g. 'package:1 core:8 pu:2' (its PU count must "
                 "equal --cpus): co-scheduled groups share cores, and catalog `smt` parameters slow co-runners");

  // Workload and application models.
  app.add_option("--catalog,-c", o.catalog, "application catalog (default: catalog.yaml next to the workload)");
  app.add_option("--models", o.models,
                 "application models in the catalog's YAML format; its entries take precedence over --catalog's");
  app.add_option("--default-speedup", o.default_speedup,
                 "curve for uncatalogued executables: linear, amdahl:S, downey:A:SIGMA, table:P=S,...")
      ->capture_default_str();
  app.add_option("--default-iteration-s", o.default_iteration_s,
                 "one iteration on one CPU for models without iteration_s")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--max-procs", o.max_procs, "CPUs of the machine the trace came from (default: the header's MaxProcs)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  app.add_option("--time-scale,-t", o.time_scale, "multiply submit times by X")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_flag("--lenient", o.lenient, "skip malformed SWF lines (with a warning)");
  app.add_option("--extra-fields", o.extra_fields,
                 "columns after the 18th of a job line: error (the standard has 18) or ignore (read the first 18, with one warning counting the lines)")
      ->check(CLI::IsMember({"error", "ignore"}))->capture_default_str();

  // Queuing system (qsubmit's rules).
  app.add_option("--ml", o.sim.fixed_ml, "fixed multiprogramming level (default: the policy's may_start)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--select", select, "which queued job starts next: fcfs or sjf (shortest request first)")
      ->check(CLI::IsMember({"fcfs", "sjf"}))->capture_default_str();

  // Resource manager and jobs.
  app.add_option("--quantum-ms", quantum_ms, "the RM's quantum")->check(CLI::Range(1, 3600000))->capture_default_str();
  app.add_flag("--every-quantum", o.sim.every_quantum,
               "simulate every quantum tick while jobs exist (default: only ticks that can matter)");
  app.add_flag("--all-estimates", o.sim.model_unread_estimates,
               "model every job's SelfAnalyzer and sampler even under a policy that reads no estimate (default: "
               "not then, docs/simulator.md \"Estimates nothing reads\"; a decision log models them always)");
  app.add_flag("--no-fast-forward", o.no_fast_forward,
               "simulate every turn of a steady time-sharing rotation (default: repeated turns are skipped, "
               "docs/simulator.md \"Steady rotations\")");
  app.add_option("--realloc-cost", o.sim.timing.realloc_cost_s, "seconds of progress lost per team-size change")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--oversub-cost", o.sim.timing.oversub_cost,
                 "a fixed team (catalog team: fixed) on fewer CPUs than threads: its work takes 1 + X x (threads "
                 "per CPU - 1) times as long")
      ->check(CLI::Range(0.0, 10.0))->capture_default_str();
  app.add_option("--noise", o.sim.analyzer.noise, "relative std. deviation of measured iteration times")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--startup-noise", o.sim.analyzer.startup_noise,
                 "extra relative std. deviation of the measurements taken in a job's first --startup-s seconds")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--startup-s", o.sim.analyzer.startup_s, "how long a job's start-up noise lasts, seconds")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--report-every", o.report_every_s,
                 "steady jobs re-measure this often, seconds (default: 0 without noise, one quantum with noise)")
      ->check(CLI::NonNegativeNumber);
  sa.baseline_cpus = 0;  // auto, as cosched-rm's --baseline-cpus
  app.add_option("--sa-baseline-cpus", sa.baseline_cpus,
                 "SelfAnalyzer baseline team size: N, or auto (a quarter of each job's request, at least 1; "
                 "cosched-rm's --baseline-cpus)")
      ->transform(CLI::Transformer(std::map<std::string, std::string>{{"auto", "0"}}))
      ->check(CLI::Range(0, 1024))
      ->default_str("auto");
  app.add_option("--sa-baseline-iterations", sa.baseline_iterations, "SelfAnalyzer baseline iterations")
      ->check(CLI::Range(1, 32))->capture_default_str();
  app.add_option("--sa-window", sa.window, "SelfAnalyzer median window")->check(CLI::Range(1, 32))->capture_default_str();
  app.add_option("--sa-min-samples", sa.min_report_samples, "SelfAnalyzer clean iterations before a report")
      ->check(CLI::Range(1, 32))->capture_default_str();
  app.add_option("--sa-max-period", sa.max_period,
                 "longest loop (outermost regions per iteration) the detector finds, as COSCHED_MAX_PERIOD")
      ->check(CLI::Range(1, 8192))->capture_default_str();
  app.add_option("--released-spin-s", o.sim.analyzer.released_spin_s,
                 "how long threads a shrinking team released spin (libomp's KMP_BLOCKTIME): no sample that begins "
                 "within it after a job's allocation shrinks is used, seconds")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--sa-detect-iterations", o.sim.analyzer.detect_iterations,
                 "iterations run natively before measurement starts (periodicity detection; 0 = explicit API)")
      ->check(CLI::Range(0, 1 << 20))->capture_default_str();
  app.add_option("--baseline", o.sim.analyzer.baseline,
                 "as cosched-rm --baseline: SelfAnalyzer baseline under policies that use speedups, once a job shares the "
                 "machine (auto), always (from the start, any policy), never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  app.add_flag("--no-analyzer", no_analyzer, "jobs never measure themselves: no baseline, no reports");
  app.add_flag("--no-waiting-time", no_waiting_time,
               "jobs publish no waiting-time efficiency (as run with COSCHED_SAMPLE_MS=0): the RM has the measured "
               "speedup only");
  app.add_flag("--no-placement", no_placement, "skip rm::place(): CPU counts only, no CPU lists in the traces");
  app.add_option("--seed", o.sim.seed, "seed of the measurement noise")->capture_default_str();

  // Memory contention (docs/simulator.md, "Memory contention"): off unless the three constants are given.
  cli::add_rate(app, "--mem-bandwidth", o.sim.memory.machine_bytes_per_s,
              "memory bandwidth of the simulated machine with every CPU streaming, bytes/s (e.g. 29G): the "
              "contention model's B and the bandwidth policies' bus capacity");
  cli::add_rate(app, "--thread-bandwidth", o.sim.memory.thread_bytes_per_s,
              "what one streaming thread moves alone, bytes/s: the model's b (a job's memory fraction is its "
              "catalog bandwidth / b)");
  app.add_option("--contention", o.sim.memory.contention, "the model's k: slowdown per unit of excess demand")
      ->check(CLI::Range(0.01, 100.0))->capture_default_str();
  app.add_option("--sensor", o.sim.sensor,
                 "bandwidth sensors: auto (app-reported = the models' exact traffic, then counter-free), app, "
                 "counter-free, none")
      ->check(CLI::IsMember({"auto", "app", "counter-free", "none"}))->capture_default_str();

  // Output.
  app.add_option("--out,-o", o.out_dir, "output directory (default: ./cosched-sim-<policy>-<timestamp>)");
  app.add_option("--name", o.name, "run label in summary.json (default: sim-<policy>)");
  app.add_flag("--decisions", o.write_decisions, "also write DIR/decisions.jsonl (the daemon's decision log)");
  app.add_option("--traces", o.traces,
                 "write the Paraver/Chrome traces: on, off, or auto (off above 2,000 jobs, or above 1,000,000 CPU "
                 "pieces drawn: they grow with CPUs x reallocations)")
      ->check(CLI::IsMember({"on", "off", "auto"}))
      ->capture_default_str();
  app.add_option("--allocation", o.allocation,
                 "write allocation.csv, every CPU segment of every job: on, off, or auto (off once its segments take "
                 "more than 2 GiB in memory: time sharing makes one per job and quantum; jobs.csv and summary.json "
                 "then come from their totals)")
      ->check(CLI::IsMember({"on", "off", "auto"}))
      ->capture_default_str();
  app.add_flag("--dry-run", o.dry_run, "simulate and print the summary, write no file (sweeps, benchmarks)");
  app.add_flag("--quiet,-q", o.quiet, "no progress line and no summary table");
  app.add_option("--log", o.log_spec, "log levels, e.g. info or sim=debug");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return {std::nullopt, code == 0 ? kExitOk : kExitBadInput};
  }
  if (list) {
    if (markdown) {
      std::cout << policy::policies_markdown();
      return {std::nullopt, kExitOk};
    }
    for (const auto& p : policy::list_policies()) std::cout << p.name << "\t" << p.summary << "\n";
    return {std::nullopt, kExitOk};
  }
  for (auto* required : {workload, policy, cpus}) {
    if (required->count() == 0) {
      std::cerr << "cosched-sim: " << required->get_name() << " is required\nRun with --help for more information.\n";
      return {std::nullopt, kExitBadInput};
    }
  }
  for (const auto& kv : params) {
    auto p = policy::parse_param(kv);
    if (!p) {
      std::cerr << "cosched-sim: " << p.error().message << "\n";
      return {std::nullopt, kExitBadInput};
    }
    o.params.push_back(*p);
  }
  o.sim.selection = *qs::parse_selection(select);  // IsMember admits only known names
  o.sim.quantum_s = quantum_ms / 1000.0;
  o.sim.analyzer.enabled = !no_analyzer;
  o.sim.analyzer.waiting_time = !no_waiting_time;
  o.sim.place_cpus = !no_placement;
  if (sa.min_report_samples > sa.window) sa.min_report_samples = sa.window;
  // Automatic cadence: without noise a steady job's reports repeat the last one exactly, so none is needed
  // until its allocation changes; with noise (start-up noise too: the report after a noisy one differs),
  // one per quantum is what the daemon would see (it polls each report once per quantum).
  const bool noisy = o.sim.analyzer.noise > 0 || o.sim.analyzer.startup_noise > 0;
  o.sim.fast_forward = !o.no_fast_forward;
  o.sim.timing.report_every_s = o.report_every_s >= 0 ? o.report_every_s : noisy ? o.sim.quantum_s : 0.0;
  return {std::move(o), kExitOk};
}

nlohmann::json describe(const Options& o) {
  const SimConfig& s = o.sim;
  const sa::Config& sa = s.analyzer.config;
  return {{"cpus", s.cpus},
          {"ml", s.fixed_ml > 0 ? nlohmann::json(s.fixed_ml) : nlohmann::json("policy")},
          {"select", s.selection == qs::Selection::fcfs ? "fcfs" : "sjf"},
          {"quantum_ms", s.quantum_s * 1000.0},
          {"every_quantum", s.every_quantum},
          {"all_estimates", s.model_unread_estimates},
          {"fast_forward", s.fast_forward},
          {"realloc_cost_s", s.timing.realloc_cost_s},
          {"oversub_cost", s.timing.oversub_cost},
          {"noise", s.analyzer.noise},
          {"startup_noise", s.analyzer.startup_noise},
          {"startup_s", s.analyzer.startup_s},
          {"released_spin_s", s.analyzer.released_spin_s},
          {"report_every_s", s.timing.report_every_s},
          {"analyzer", s.analyzer.enabled},
          {"waiting_time", s.analyzer.enabled && s.analyzer.waiting_time},
          {"baseline", s.analyzer.baseline},
          {"sa_baseline_cpus", sa.baseline_cpus},
          {"sa_baseline_iterations", sa.baseline_iterations},
          {"sa_window", sa.window},
          {"sa_min_report_samples", sa.min_report_samples},
          {"sa_detect_iterations", s.analyzer.detect_iterations},
          {"sa_max_period", sa.max_period},
          {"placement", s.place_cpus},
          {"seed", s.seed},
          {"mem_bandwidth", s.memory.machine_bytes_per_s},
          {"thread_bandwidth", s.memory.thread_bytes_per_s},
          {"contention", s.memory.contention},
          {"sensor", s.sensor},
          {"topology", o.topology},
          {"catalog", o.catalog},
          {"models", o.models},
          {"default_speedup", o.default_speedup},
          {"default_iteration_s", o.default_iteration_s},
          {"max_procs", o.max_procs}};
}

}  // namespace cosched::sim
