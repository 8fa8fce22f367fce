// cosched-swfgen: writes a synthetic SWF workload (generator.hpp). Options come in one table; a --preset
// supplies a whole configuration and any option given explicitly overrides it.
#include <CLI/CLI.hpp>

#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "cosched/cli.hpp"
#include "sim/gen/closed.hpp"
#include "sim/gen/generator.hpp"
#include "qs/swf.hpp"

namespace {

using cosched::swfgen::Config;

struct Flag {
  CLI::Option* option;
  std::function<void(Config&, const Config&)> apply;  // copies this option's value from the CLI config
};

// Every option, and where its value lands.
struct GenArgs {
  Config cli;  // what the command line says; defaults as in Config
  std::string preset_name;
  std::string apps_spec = cosched::swfgen::format_apps(cli.apps);
  std::string output = "-";
  std::string mix_by = "jobs";
  std::string model = "lognormal";
  bool fractional = false;
  int closed = 0;
  std::vector<Flag> flags;
};

// The options table.
void add_options(CLI::App& app, GenArgs& a) {
  app.set_version_flag("--version", std::string("cosched-swfgen ") + COSCHED_VERSION);
  auto flag = [&](CLI::Option* o, std::function<void(Config&, const Config&)> f) {
    a.flags.push_back({o, std::move(f)});
    return o;
  };
  flag(app.add_option("--jobs,-n", a.cli.jobs, "number of jobs (or use --duration)"),
       [](Config& c, const Config& v) { c.jobs = v.jobs; c.duration_s = 0; });
  flag(app.add_option("--duration", a.cli.duration_s, "fill this many seconds with arrivals instead of --jobs"),
       [](Config& c, const Config& v) { c.duration_s = v.duration_s; c.jobs = 0; });
  flag(app.add_option("--max-procs,-p", a.cli.max_procs, "CPUs of the target machine (MaxProcs)")->capture_default_str(),
       [](Config& c, const Config& v) { c.max_procs = v.max_procs; });
  flag(app.add_option("--load,-l", a.cli.load, "offered load: requested CPU-seconds / (CPUs x arrival span)")
           ->capture_default_str(),
       [](Config& c, const Config& v) { c.load = v.load; });
  flag(app.add_option("--mean-interarrival", a.cli.mean_interarrival_s, "mean seconds between arrivals (replaces --load)"),
       [](Config& c, const Config& v) { c.mean_interarrival_s = v.mean_interarrival_s; });
  flag(app.add_option("--seed,-s", a.cli.seed, "random seed")->capture_default_str()->envname("COSCHED_SWFGEN_SEED"),
       [](Config& c, const Config& v) { c.seed = v.seed; });
  flag(app.add_option("--apps,-a", a.apps_spec, "executable mix EXE:WEIGHT[:PROCS[:RUNTIME_S]],... (e.g. 1:0.5,2:0.5)")
           ->capture_default_str(),
       [](Config& c, const Config& v) { c.apps = v.apps; });
  flag(app.add_option("--mix-by", a.mix_by, "weights are fractions of jobs or of load (load needs --duration)")
           ->check(CLI::IsMember({"jobs", "load"}))->capture_default_str(),
       [](Config& c, const Config& v) { c.mix_by = v.mix_by; });
  flag(app.add_option("--model,-m", a.model, "lognormal: log-uniform sizes, lognormal run times; "
                                           "lublin: Lublin-Feitelson rigid-job sizes and run times")
           ->check(CLI::IsMember({"lognormal", "lublin"}))->capture_default_str(),
       [](Config& c, const Config& v) { c.model = v.model; });
  flag(app.add_flag("--pow2-sizes", a.cli.pow2_sizes, "lognormal model: power-of-two sizes"),
       [](Config& c, const Config& v) { c.pow2_sizes = v.pow2_sizes; });
  flag(app.add_option("--runtime-mean", a.cli.runtime_mean_s, "mean run time in seconds (lognormal model)")
           ->capture_default_str(),
       [](Config& c, const Config& v) { c.runtime_mean_s = v.runtime_mean_s; });
  flag(app.add_option("--runtime-sigma", a.cli.runtime_sigma, "log-space sigma of run times; 0 = constant")
           ->capture_default_str(),
       [](Config& c, const Config& v) { c.runtime_sigma = v.runtime_sigma; });
  flag(app.add_option("--max-runtime", a.cli.max_runtime_s, "longer run times are drawn again")->capture_default_str(),
       [](Config& c, const Config& v) { c.max_runtime_s = v.max_runtime_s; });
  flag(app.add_option("--estimate-factor", a.cli.estimate_factor, "requested time = factor x run time (0: -1)"),
       [](Config& c, const Config& v) { c.estimate_factor = v.estimate_factor; });
  flag(app.add_flag("--fractional-times", a.fractional, "keep milliseconds instead of whole seconds"),
       [](Config& c, const Config& v) { c.integer_times = v.integer_times; });
  std::string preset_help = "start from a named configuration:";
  for (const auto& n : cosched::swfgen::preset_names()) preset_help += " " + n;
  app.add_option("--preset", a.preset_name, preset_help);
  app.add_option("--closed", a.closed,
                 "closed system (DSS paper 4.2.1): M instances of each --apps application (EXE:WEIGHT:PROCS:RUNTIME_S), "
                 "each resubmitted on completion (SWF fields 17-18) for --duration seconds");
  app.add_option("--output,-o", a.output, "output file ('-' = stdout; a .gz name compresses)")->capture_default_str();

}

// The configuration: the preset (or the defaults), then every option given, on the command line or by its
// environment variable.
cosched::Result<Config> configure(GenArgs& a) {
  auto apps = cosched::swfgen::parse_apps(a.apps_spec);
  if (!apps) return apps.error();
  a.cli.apps = *apps;
  a.cli.mix_by = a.mix_by == "load" ? cosched::swfgen::MixBy::load : cosched::swfgen::MixBy::jobs;
  a.cli.model = a.model == "lublin" ? cosched::swfgen::Model::lublin : cosched::swfgen::Model::lognormal;
  a.cli.integer_times = !a.fractional;

  Config config;
  if (!a.preset_name.empty()) {
    auto p = cosched::swfgen::preset(a.preset_name);
    if (!p) return p.error();
    config = *p;
  } else {
    config.jobs = 1000;  // something useful with no arguments at all
  }
  for (const auto& f : a.flags) {
    if (f.option->count() > 0) f.apply(config, a.cli);
  }
  return config;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cosched-swfgen: synthetic workloads in the Standard Workload Format (SWF 2.2).\n"
               "Poisson arrivals at a target offered load; executable mix; sizes and run times from a\n"
               "lognormal model or a Lublin-Feitelson-style rigid-job model. Same seed, same file.\n"
               "Exit status: 0 written, 1 the file could not be written, 2 bad options."};
  GenArgs a;
  add_options(app, a);
  COSCHED_CLI_PARSE(app, argc, argv);
  auto config = configure(a);
  if (!config) {
    std::cerr << "cosched-swfgen: " << config.error().message << "\n";
    return 2;
  }
  auto workload = a.closed > 0 ? cosched::swfgen::generate_closed(*config, a.closed) : cosched::swfgen::generate(*config);
  if (!workload) {
    std::cerr << "cosched-swfgen: " << workload.error().message << "\n";
    return 2;
  }
  if (workload->jobs.empty()) std::cerr << "cosched-swfgen: warning: the workload has no jobs (load too low?)\n";
  if (a.output == "-") {
    std::ios::sync_with_stdio(false);
    cosched::swf::write(std::cout, *workload);
    std::cout.flush();
    return std::cout ? 0 : 1;
  }
  if (auto st = cosched::swf::write_file(a.output, *workload); !st) {
    std::cerr << "cosched-swfgen: " << st.error().message << "\n";
    return 1;
  }
  return 0;
}
