// cosched-sim: read the workload and the models, build the policy through the registry (the daemon's
// objects), run the engine, write qsubmit's result files. Options: sim/cli/options.cpp; docs/simulator.md.
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>

#include <fmt/format.h>

#include "cosched/log.hpp"
#include "policies/registry.hpp"
#include "qs/catalog.hpp"
#include "qs/results.hpp"
#include "qs/trace_placement.hpp"
#include "qs/swf.hpp"
#include "sim/cli/options.hpp"
#include "rm/placement/topology.hpp"
#include "sim/cli/progress.hpp"

namespace fs = std::filesystem;
using namespace cosched;

namespace {

int fail(const std::string& message, int code = sim::kExitBadInput) {
  std::cerr << "cosched-sim: " << message << "\n";
  return code;
}

std::string default_out_dir(const std::string& policy) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return fmt::format("cosched-sim-{}-{}", policy, stamp);
}

// qsubmit's rule: without --catalog, catalog.yaml next to the workload is used when it exists.
std::string catalog_path(const sim::Options& o) {
  if (!o.catalog.empty()) return o.catalog;
  fs::path next_to = fs::path(o.workload).parent_path() / "catalog.yaml";
  std::error_code ec;
  return fs::is_regular_file(next_to, ec) ? next_to.string() : std::string();
}

void print_summary(const results::Run& run, const sim::SimStats& st, double wall_s) {
  const nlohmann::json s = results::summarize(run);
  auto num = [](const nlohmann::json& v) { return v.is_number() ? fmt::format("{:10.1f}", v.get<double>()) : fmt::format("{:>10}", "-"); };
  std::cout << fmt::format("{:<16} {:>7} {:>10} {:>10} {:>10}\n", "class", "jobs", "response", "execution", "wait");
  for (const auto& [name, g] : s["classes"].items()) {
    std::cout << fmt::format("{:<16} {:>7} {} {} {}\n", name, g["completed"].get<long>(), num(g["mean_response"]),
                             num(g["mean_execution"]), num(g["mean_wait"]));
  }
  const auto& all = s["overall"];
  std::cout << fmt::format("{:<16} {:>7} {} {} {}\n", "all", all["completed"].get<long>(), num(all["mean_response"]),
                           num(all["mean_execution"]), num(all["mean_wait"]));
  std::cout << fmt::format(
      "makespan {:.1f} s, utilisation {}, max ML {} | {} events, {} decisions, {} reports, {} reallocations{} | "
      "{:.2f} s wall, {:.0f} jobs/s\n",
      all["makespan"].get<double>(),
      all["cpu_utilisation"].is_number() ? fmt::format("{:.1f}%", 100 * all["cpu_utilisation"].get<double>()) : "-",
      all["max_ml"].get<int>(), st.events, st.decisions, st.reports, st.reallocations,
      st.skipped_quanta > 0 ? fmt::format(", {} quanta skipped in {} fast-forwards", st.skipped_quanta, st.fast_forwards)
                            : std::string(),
      wall_s,
      wall_s > 0 ? static_cast<double>(run.jobs.size()) / wall_s : 0.0);
}

Result<swf::Workload> read_workload(const sim::Options& o) {
  auto workload = swf::read_file(o.workload, swf::Options{.lenient = o.lenient,
                                 .extra_fields = o.extra_fields == "ignore" ? swf::ExtraFields::ignore : swf::ExtraFields::error});
  if (!workload) return workload.error();
  if (auto st = swf::require_jobs(*workload, o.workload); !st) return st.error();
  for (const auto& w : workload->warnings) std::cerr << "cosched-sim: warning: " << w << "\n";
  for (const auto& n : swf::workload_notes(*workload, o.workload)) std::cerr << "cosched-sim: warning: " << n << "\n";
  return workload;
}

// The catalog (qsubmit's, or the one next to the workload) and the --models file, each when given.
Status load_catalogs(sim::Options& o, std::optional<catalog::Catalog>& cat, std::optional<catalog::Catalog>& models) {
  o.catalog = catalog_path(o);
  if (!o.catalog.empty()) {
    auto c = catalog::load_file(o.catalog);
    if (!c) return c.error();
    cat = std::move(*c);
  }
  if (!o.models.empty()) {
    auto m = catalog::load_file(o.models);
    if (!m) return m.error();
    models = std::move(*m);
  }
  return {};
}

void warn_unusable(const std::vector<sim::JobSpec>& jobs) {
  std::size_t unusable = 0;
  for (const auto& j : jobs) {
    if (j.usable()) continue;
    if (++unusable <= 5) std::cerr << "cosched-sim: warning: " << j.problem << "\n";
  }
  if (unusable > 5) std::cerr << "cosched-sim: warning: " << unusable << " jobs cannot be simulated (listed as never started)\n";
}

// Whether the run writes traces. Which CPUs (rm::place) only shows in traces and allocation.csv, never in
// times: when the traces are off because the run is large, the per-decision placement of every job is skipped
// too (it dominates large runs: 100k jobs on 1,024 CPUs take 19 s with it, 2.3 s without; docs/performance.md).
bool choose_traces(sim::Options& o, std::size_t jobs) {
  constexpr std::size_t kAutoTraceJobs = 2000;
  const bool traces = o.traces == "on" || (o.traces == "auto" && jobs <= kAutoTraceJobs);
  if (!traces && o.traces == "auto" && o.topology.empty()) {  // an SMT model needs to know who shares a core
    o.sim.place_cpus = false;
    if (!o.quiet) std::cerr << "cosched-sim: " << jobs << " jobs: no traces and no CPU lists (--traces on to force)\n";
  }
  return traces;
}

// --traces auto, after the run: the traces cost about 360 bytes per piece (one CPU of one allocation
// segment; docs/performance.md), so a run that changed allocations millions of times (time sharing: every
// job stops and resumes every quantum) gets none, rather than tens of gigabytes built in memory. The bound
// is our choice: about 360 MB of traces.
bool keep_traces(const sim::Options& o, const results::Run& run, bool traces) {
  constexpr std::size_t kAutoTracePieces = 1'000'000;
  if (!traces || o.traces != "auto") return traces;
  const std::size_t pieces = results::trace_pieces(run);
  if (pieces <= kAutoTracePieces) return true;
  if (!o.quiet) {
    std::cerr << fmt::format("cosched-sim: {} CPU pieces to draw (more than {}): no traces; allocation.csv has "
                             "them all (--traces on to force)\n", pieces, kAutoTracePieces);
  }
  return false;
}

// How many bytes of segments the run keeps for allocation.csv and the traces (sim/recorder.hpp): none for a
// dry run (the summary needs their totals only) or --allocation off, all for on; for auto, our choice of
// 2 GiB: 44 million segments without CPU lists, half a million of 1,024 CPUs (an allocation.csv about as
// large, built in memory too). A 2,000-job trace under equal_eff on 1,024 CPUs keeps its 1.1 GB; a 1,000-job
// Lublin log under gang (13 GB) does not.
constexpr std::size_t kAutoSegmentGiB = 2;
std::size_t segment_budget(const sim::Options& o) {
  if (o.dry_run || o.allocation == "off") return 0;
  return o.allocation == "on" ? std::numeric_limits<std::size_t>::max() : kAutoSegmentGiB << 30;
}

// Whether the run writes allocation.csv: asked for, and its segments all kept.
bool writes_allocation(const sim::Options& o, const sim::Simulator& engine) {
  return !o.dry_run && o.allocation != "off" && !engine.segments_dropped();
}

// The simulated machine: --cpus flat, or an SMT machine from an hwloc synthetic description (the daemon's own
// topology code).
Result<policy::Machine> load_machine(sim::Options& o) {
  policy::Machine machine{o.sim.cpus, o.sim.cpus, 1, 1};
  if (o.topology.empty()) return machine;
  auto topo = rm::Topology::load({}, o.topology);
  if (!topo) return make_error(topo.error().code, "--topology: " + topo.error().message);
  machine = topo->machine();
  o.sim.cpu_order = topo->order();
  o.sim.core_of = topo->core_of();
  o.sim.packages = machine.packages;
  if (machine.cpus != o.sim.cpus) {
    return make_error(Errc::invalid_argument,
                      fmt::format("--topology '{}' has {} CPUs but --cpus is {}", o.topology, machine.cpus, o.sim.cpus));
  }
  if (o.sim.place_cpus == false) {
    return make_error(Errc::invalid_argument, "--topology needs placement: it cannot go with --no-placement");
  }
  return machine;
}

results::Run make_run(const sim::Options& o, const policy::Policy& pol, sim::Simulator& engine,
                      const swf::Workload& workload) {
  results::Run run;
  run.name = o.name.empty() ? "sim-" + o.policy : o.name;
  run.mode = "simulated";
  run.policy = std::string(pol.name());
  for (const auto& p : pol.params()) run.params[p.name] = p.value;
  run.params["sim"] = sim::describe(o);
  // What the run did, where the options do not say it: estimates nothing reads are not modelled.
  run.params["sim"]["estimates_modelled"] = engine.estimates_modelled();
  run.params["sim"]["allocation_csv"] = writes_allocation(o, engine);
  run.machine_cpus = o.sim.cpus;
  run.workload = o.workload;
  run.time_scale = o.time_scale;
  run.skipped_lines = workload.skipped_lines;
  run.jobs = engine.take_records();
  run.ml = engine.take_ml();
  run.delivered = engine.delivered();
  return run;
}

}  // namespace

namespace cosched::sim {
int cluster_main(int argc, char** argv);  // cluster_main.cpp: `cosched-sim cluster ...`
int replay_core_main(int argc, char** argv);  // replay_core_main.cpp: `cosched-sim replay-core TRACE`
}

int main(int argc, char** argv) {
  log::set_program("cosched-sim");
  if (argc > 1 && std::string(argv[1]) == "cluster") return sim::cluster_main(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "replay-core") return sim::replay_core_main(argc - 1, argv + 1);
  auto parsed = sim::parse_options(argc, argv);
  if (!parsed.options) return parsed.code;
  sim::Options o = std::move(*parsed.options);
  if (!o.log_spec.empty()) {
    if (auto st = log::configure(o.log_spec); !st) return fail(st.error().message);
  }
  auto workload = read_workload(o);
  if (!workload) return fail(workload.error().message);

  std::optional<catalog::Catalog> cat;
  std::optional<catalog::Catalog> models;
  if (auto st = load_catalogs(o, cat, models); !st) return fail(st.error().message);
  auto fallback_curve = sim::parse_speedup_spec(o.default_speedup);
  if (!fallback_curve) return fail(fallback_curve.error().message);
  sim::ModelTable table(cat ? &*cat : nullptr, models ? &*models : nullptr,
                        sim::AppModel{"", "", *fallback_curve, o.default_iteration_s, "default"});
  const auto jobs = sim::build_jobs(*workload, table, {o.sim.cpus, o.max_procs, o.time_scale});
  warn_unusable(jobs);
  const bool traces = choose_traces(o, jobs.size());
  o.sim.segment_bytes = segment_budget(o);

  auto machine = load_machine(o);
  if (!machine) return fail(machine.error().message);
  auto pol = policy::make_policy(o.policy, *machine, o.params);
  if (!pol) return fail(pol.error().message);

  if (o.out_dir.empty()) o.out_dir = default_out_dir(o.policy);
  if (o.dry_run && o.write_decisions) return fail("--decisions writes a file; it cannot go with --dry-run");
  if (!o.dry_run) {
    std::error_code ec;
    fs::create_directories(o.out_dir, ec);
    if (ec) return fail(fmt::format("cannot create {}: {}", o.out_dir, ec.message()), sim::kExitOutputFailed);
  }

  sim::Simulator engine(o.sim, jobs, **pol);
  std::ofstream decision_log;
  if (o.write_decisions) {
    decision_log.open(fs::path(o.out_dir) / "decisions.jsonl", std::ios::trunc);
    if (!decision_log) return fail("cannot write " + o.out_dir + "/decisions.jsonl", sim::kExitOutputFailed);
    engine.set_decision_sink([&](const nlohmann::json& e) { decision_log << e.dump() << '\n'; });
  }
  sim::ProgressLine progress(!o.quiet);
  const auto t0 = std::chrono::steady_clock::now();
  engine.run([&](double t, std::size_t done, std::size_t total) { progress.update(t, done, total); });
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  progress.finish();

  const results::Run run = make_run(o, **pol, engine, *workload);
  if (!o.dry_run) {
    results::WriteOptions wo;
    wo.allocation = writes_allocation(o, engine);
    wo.traces = wo.allocation && keep_traces(o, run, traces);
    if (engine.segments_dropped() && !o.quiet) {
      std::cerr << fmt::format("cosched-sim: the CPU segments passed {} GiB (a segment per job and quantum under time "
                               "sharing): no allocation.csv and no traces; jobs.csv and summary.json come from their "
                               "totals (--allocation on to keep them all)\n", kAutoSegmentGiB);
    }
    if (auto st = results::write_run(o.out_dir, run, wo); !st) return fail(st.error().message, sim::kExitOutputFailed);
  }
  if (decision_log.is_open() && !decision_log.flush()) {
    return fail("cannot write " + o.out_dir + "/decisions.jsonl", sim::kExitOutputFailed);
  }
  if (!o.quiet) {
    print_summary(run, engine.stats(), wall);
    if (!o.dry_run) std::cout << "results in " << o.out_dir << "\n";
  }
  return sim::kExitOk;
}
