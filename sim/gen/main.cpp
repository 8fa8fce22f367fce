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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cosched-swfgen: synthetic workloads in the Standard Workload Format (SWF 2.2).\n"
               "Poisson arrivals at a target offered load; executable mix; sizes and run times from a\n"
               "lognormal model or a Lublin-Feitelson-style rigid-job model. Same seed, same file.\n"
               "Exit status: 0 written, 1 the file could not be written, 2 bad options."};
  app.set_version_flag("--version", std::string("cosched-swfgen ") + COSCHED_VERSION);
  Config cli;  // what the command line says; defaults as in Config
  std::string preset_name, apps_spec = cosched::swfgen::format_apps(cli.apps), output = "-";
  std::string mix_by = "jobs", model = "lognormal";
  bool fractional = false;

  std::vector<Flag> flags;
  auto flag = [&](CLI::Option* o, std::function<void(Config&, const Config&)> f) {
    flags.push_back({o, std::move(f)});
    return o;
  };
  flag(app.add_option("--jobs,-n", cli.jobs, "number of jobs (or use --duration)"),
       [](Config& c, const Config& v) { c.jobs = v.jobs; c.duration_s = 0; });
  flag(app.add_option("--duration", cli.duration_s, "fill this many seconds with arrivals instead of --jobs"),
       [](Config& c, const Config& v) { c.duration_s = v.duration_s; c.jobs = 0; });
  flag(app.add_option("--max-procs,-p", cli.max_procs, "CPUs of the target machine (MaxProcs)")->capture_default_str(),
       [](Config& c, const Config& v) { c.max_procs = v.max_procs; });
  flag(app.add_option("--load,-l", cli.load, "offered load: requested CPU-seconds / (CPUs x arrival span)")
           ->capture_default_str(),
       [](Config& c, const Config& v) { c.load = v.load; });
  flag(app.add_option("--mean-interarrival", cli.mean_interarrival_s, "mean seconds between arrivals (replaces --load)"),
       [](Config& c, const Config& v) { c.mean_interarrival_s = v.mean_interarrival_s; });
  flag(app.add_option("--seed,-s", cli.seed, "random seed")->capture_default_str()->envname("COSCHED_SWFGEN_SEED"),
       [](Config& c, const Config& v) { c.seed = v.seed; });
  flag(app.add_option("--apps,-a", apps_spec, "executable mix EXE:WEIGHT[:PROCS[:RUNTIME_S]],... (e.g. 1:0.5,2:0.5)")
           ->capture_default_str(),
       [](Config& c, const Config& v) { c.apps = v.apps; });
  flag(app.add_option("--mix-by", mix_by, "weights are fractions of jobs or of load (load needs --duration)")
           ->check(CLI::IsMember({"jobs", "load"}))->capture_default_str(),
       [](Config& c, const Config& v) { c.mix_by = v.mix_by; });
  flag(app.add_option("--model,-m", model, "lognormal: log-uniform sizes, lognormal run times; "
                                           "lublin: Lublin-Feitelson rigid-job sizes and run times")
           ->check(CLI::IsMember({"lognormal", "lublin"}))->capture_default_str(),
       [](Config& c, const Config& v) { c.model = v.model; });
  flag(app.add_flag("--pow2-sizes", cli.pow2_sizes, "lognormal model: power-of-two sizes"),
       [](Config& c, const Config& v) { c.pow2_sizes = v.pow2_sizes; });
  flag(app.add_option("--runtime-mean", cli.runtime_mean_s, "mean run time in seconds (lognormal model)")
           ->capture_default_str(),
       [](Config& c, const Config& v) { c.runtime_mean_s = v.runtime_mean_s; });
  flag(app.add_option("--runtime-sigma", cli.runtime_sigma, "log-space sigma of run times; 0 = constant")
           ->capture_default_str(),
       [](Config& c, const Config& v) { c.runtime_sigma = v.runtime_sigma; });
  flag(app.add_option("--max-runtime", cli.max_runtime_s, "longer run times are drawn again")->capture_default_str(),
       [](Config& c, const Config& v) { c.max_runtime_s = v.max_runtime_s; });
  flag(app.add_option("--estimate-factor", cli.estimate_factor, "requested time = factor x run time (0: -1)"),
       [](Config& c, const Config& v) { c.estimate_factor = v.estimate_factor; });
  flag(app.add_flag("--fractional-times", fractional, "keep milliseconds instead of whole seconds"),
       [](Config& c, const Config& v) { c.integer_times = v.integer_times; });
  std::string preset_help = "start from a named configuration:";
  for (const auto& n : cosched::swfgen::preset_names()) preset_help += " " + n;
  app.add_option("--preset", preset_name, preset_help);
  int closed = 0;
  app.add_option("--closed", closed,
                 "closed system (DSS paper 4.2.1): M instances of each --apps application (EXE:WEIGHT:PROCS:RUNTIME_S), "
                 "each resubmitted on completion (SWF fields 17-18) for --duration seconds");
  app.add_option("--output,-o", output, "output file ('-' = stdout; a .gz name compresses)")->capture_default_str();

  COSCHED_CLI_PARSE(app, argc, argv);

  auto apps = cosched::swfgen::parse_apps(apps_spec);
  if (!apps) {
    std::cerr << "cosched-swfgen: " << apps.error().message << "\n";
    return 2;
  }
  cli.apps = *apps;
  cli.mix_by = mix_by == "load" ? cosched::swfgen::MixBy::load : cosched::swfgen::MixBy::jobs;
  cli.model = model == "lublin" ? cosched::swfgen::Model::lublin : cosched::swfgen::Model::lognormal;
  cli.integer_times = !fractional;

  Config config;
  if (!preset_name.empty()) {
    auto p = cosched::swfgen::preset(preset_name);
    if (!p) {
      std::cerr << "cosched-swfgen: " << p.error().message << "\n";
      return 2;
    }
    config = *p;
  } else {
    config.jobs = 1000;  // something useful with no arguments at all
  }
  for (const auto& f : flags) {
    if (f.option->count() > 0) f.apply(config, cli);  // given on the command line or by its env var
  }

  auto workload = closed > 0 ? cosched::swfgen::generate_closed(config, closed) : cosched::swfgen::generate(config);
  if (!workload) {
    std::cerr << "cosched-swfgen: " << workload.error().message << "\n";
    return 2;
  }
  if (workload->jobs.empty()) std::cerr << "cosched-swfgen: warning: the workload has no jobs (load too low?)\n";
  if (output == "-") {
    std::ios::sync_with_stdio(false);
    cosched::swf::write(std::cout, *workload);
    std::cout.flush();
    return std::cout ? 0 : 1;
  }
  if (auto s = cosched::swf::write_file(output, *workload); !s) {
    std::cerr << "cosched-swfgen: " << s.error().message << "\n";
    return 1;
  }
  return 0;
}
