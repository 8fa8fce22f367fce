// Synthetic SWF workloads: Poisson arrivals at a target offered load, an executable mix, and job sizes and
// run times from a simple model (log-uniform or power-of-two sizes, lognormal run times) or a
// Lublin-Feitelson-style rigid-job model. Deterministic for a seed on every platform (random.hpp).
//
// Offered load = CPU-seconds the jobs ask for (request x run time) / (max_procs x arrival span). Two ways
// to stop (docs/workloads.md explains both):
//  - `jobs` N: N job bodies are drawn first, then exponential interarrivals whose mean makes the expected
//    span give the target load (or mean_interarrival_s when set).
//  - `duration_s` T (the PDPA paper's "Poisson arrivals during 300 s"): bodies are drawn until their
//    demand reaches load x max_procs x T, then placed at sorted uniform times in [0, T) -- a Poisson
//    process conditioned on its count, so the load is hit exactly, not only on average.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cosched/error.hpp"
#include "qs/swf.hpp"

namespace cosched::swfgen {

// One entry of the executable mix. procs / runtime_mean_s of 0 mean "draw from the size/run-time model".
struct AppShare {
  std::int64_t executable = 1;
  double weight = 1;
  std::int64_t procs = 0;
  double runtime_mean_s = 0;
  bool operator==(const AppShare&) const = default;
};

enum class Model {
  lognormal,  // sizes log-uniform in [1, max_procs] (or powers of two), run times lognormal
  lublin,     // Lublin & Feitelson (JPDC 2003) rigid jobs: serial/power-of-two/two-stage-uniform sizes,
              // hyper-gamma run times that grow with size; arrivals stay Poisson at the target load
};

enum class MixBy {
  jobs,  // weights are fractions of the jobs
  load,  // weights are fractions of the CPU demand (PDPA Table 1); needs duration_s
};

struct Config {
  std::int64_t jobs = 0;           // stop after N jobs...
  double duration_s = 0;           // ...or fill [0, duration_s) (exactly one of the two)
  std::int64_t max_procs = 64;
  double load = 0.8;
  double mean_interarrival_s = 0;  // > 0 replaces `load` (jobs mode only)
  std::uint64_t seed = 1;
  std::vector<AppShare> apps = {AppShare{}};
  MixBy mix_by = MixBy::jobs;
  Model model = Model::lognormal;
  bool pow2_sizes = false;         // lognormal model: sizes 2^k, k uniform in [0, log2 max_procs]
  double runtime_mean_s = 600;     // lognormal model
  double runtime_sigma = 1.0;      // lognormal model, log-space; 0 makes run times constant
  double max_runtime_s = 172800;   // run times above this are drawn again (caps the heavy tails)
  double estimate_factor = 0;      // requested time = ceil(factor x run time); 0 writes -1 (unknown)
  bool integer_times = true;       // whole seconds, like the archive's logs; false keeps milliseconds
  std::string preset;              // recorded in the header when the config came from a preset
};

// Checks ranges and combinations; Errc::invalid_argument naming the option.
Status validate(const Config& config);

// Builds the workload (header included). Fails only when validate() does.
Result<swf::Workload> generate(const Config& config);

// "1:0.5,2:0.5" or with per-application size and mean run time, "EXE:WEIGHT[:PROCS[:RUNTIME_S]]".
Result<std::vector<AppShare>> parse_apps(std::string_view spec);
std::string format_apps(const std::vector<AppShare>& apps);

// Named configurations. "pdpa-w1".."pdpa-w4": PDPA (Corbalan, Martorell, Labarta) section 5, Table 1 --
// swim (exe 1), bt.A (2), hydro2d (3), apsi (4) with requests 30, 30, 30, 2 on 60 CPUs, Poisson arrivals
// during 300 s, mixes by share of load. Run times are the paper's measured execution times (Table 4, ~6,
// 100, 32 and 100 s), constant per application. Errc::not_found for an unknown name.
Result<Config> preset(std::string_view name);
std::vector<std::string> preset_names();

// The command line that regenerates this config (written into the SWF header).
std::string command_line(const Config& config);

}  // namespace cosched::swfgen
