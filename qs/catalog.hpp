// The application catalog: what an SWF executable number (field 14) stands for. qsubmit takes the command
// line from it; cosched-sim takes the speedup model and iteration time. One YAML file serves both, e.g.
//
//   default:                       # used for executable numbers that have no entry (optional)
//     name: generic
//     command: "@amdahl --serial-fraction 0.1 --iterations 100"
//   apps:
//     1:
//       name: swim
//       command: ["@amdahl", "--serial-fraction", "0.0", "--iterations", "200"]
//       class: superlinear          # free label for reports
//       speedup: {model: amdahl, serial_fraction: 0.0}
//       iteration_s: 0.05
//
// `@name` in a command is a program shipped with cosched; expand_programs() resolves it through a callback
// (qsubmit looks next to its own executable). docs/workloads.md is the reference for users.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cosched/error.hpp"

namespace cosched::catalog {

// How a job's speed grows with CPUs, for the simulator. Speedup is relative to one CPU.
struct SpeedupModel {
  enum class Kind { amdahl, downey, table };
  Kind kind = Kind::amdahl;
  double serial_fraction = 0;                     // amdahl: S(p) = 1 / (s + (1 - s) / p)
  double average_parallelism = 1;                 // downey: A
  double sigma = 0;                               // downey: variance of parallelism
  std::vector<std::pair<double, double>> points;  // table: (cpus, speedup), cpus strictly increasing
  bool operator==(const SpeedupModel&) const = default;
};

// Speedup on `cpus` processors (fractional values are time-shared CPUs). Below one CPU a job runs at
// `cpus` times its one-CPU speed for every model. Tables interpolate linearly, assume (1, 1) when they
// start above one CPU, and stay flat after their last point. Downey: "A model for speedup of parallel
// programs" (1997), low-variance (sigma <= 1) and high-variance (sigma >= 1) branches.
double speedup(const SpeedupModel& model, double cpus);

struct App {
  std::int64_t executable = -1;       // its key in `apps`; -1 for the default entry
  std::string name;                   // required: shows in results and reports
  std::vector<std::string> command;   // argv; empty for simulation-only entries
  std::string app_class;              // YAML `class`: optional label to group results
  std::optional<SpeedupModel> speedup;
  std::optional<double> iteration_s;  // one outer iteration on one CPU, for the simulator's analyzer model
  std::optional<int> period;          // outermost parallel regions per iteration, for the simulator's
                                      // periodicity detector model; 0: not iterative (one long region)
  // YAML `bandwidth`: memory traffic of one thread of the program running alone, bytes/s ("750M", 7.5e8), for
  // the simulator's contention model and its app-reported sensor (docs/simulator.md, "Memory contention").
  std::optional<double> bandwidth;
  // YAML `smt: {intensity: X, sensitivity: Y}`: how the program shares an SMT core, for the simulator's
  // shared-core model (docs/simulator.md, "SMT cores"): running next to co-runners of intensities x_j on one
  // core it is slowed by 1 + sensitivity × Σ x_j. Both in [0, 10]; absent: 0 (SMT costs it nothing).
  std::optional<double> smt_intensity;
  std::optional<double> smt_sensitivity;
  std::string team;                   // YAML `team`: automatic (""), malleable or fixed: cosched-run's option
  std::int64_t line = 0;              // where the entry starts in the YAML file
};

class Catalog {
 public:
  std::string source;                // file name, for messages
  std::map<std::int64_t, App> apps;  // by executable number
  std::optional<App> default_app;

  // The entry for an executable number, else the default entry, else nullptr.
  [[nodiscard]] const App* find(std::int64_t executable) const;
  // Like find(), but Errc::not_found naming the catalog and the number when nothing matches.
  [[nodiscard]] Result<const App*> resolve(std::int64_t executable) const;
};

// Parses catalog YAML. `name` prefixes messages: "cat.yaml:12: apps.3.speedup.serial_fraction: '1.5' is not
// in [0, 1]". Unknown keys are errors (typos must not silently drop a setting). Errc::parse_error.
Result<Catalog> parse(std::string_view yaml_text, std::string_view name);
// Reads (gzip or plain) and parses. Errc::io_error when unreadable.
Result<Catalog> load_file(const std::string& path);

// Splits a command string into arguments on whitespace; '...' and "..." group words (no escapes, no
// expansion: a catalog command never goes through a shell). Errc::parse_error on an unclosed quote.
Result<std::vector<std::string>> split_command(std::string_view text);

// Finds a cosched program by name ("amdahl"): its path, or nullopt when there is none.
using ProgramLookup = std::function<std::optional<std::string>(std::string_view name)>;

// Replaces every argument of the form `@name` with lookup(name); `@@text` stands for a literal `@text`.
// Errc::not_found naming the placeholder when the lookup fails.
Result<std::vector<std::string>> expand_programs(const std::vector<std::string>& argv,
                                                 const ProgramLookup& lookup);

// A lookup that returns dir/name for the first directory holding an executable file of that name.
ProgramLookup lookup_in_directories(std::vector<std::string> directories);

}  // namespace cosched::catalog
