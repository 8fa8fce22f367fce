// cosched-sim's command line: one CLI11 table (STYLE habit 7), parsed into the engine's SimConfig plus the
// inputs and outputs. docs/simulator.md lists every option with its default and its reason.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "policies/registry.hpp"
#include "sim/simulator.hpp"

namespace cosched::sim {

struct Options {
  std::string topology;          // hwloc synthetic description of an SMT machine; "" = flat (every CPU a core)
  std::string workload;
  std::string policy;
  policy::ParamList params;
  std::string catalog;          // "" = catalog.yaml next to the workload, if there is one
  std::string models;           // "" = none
  std::int64_t max_procs = 0;   // source machine for request scaling; 0 = the SWF header's
  double time_scale = 1.0;
  bool lenient = false;
  std::string extra_fields = "error";  // error | ignore (swf::ExtraFields)
  std::string default_speedup = "linear";
  double default_iteration_s = 1.0;
  std::string out_dir;          // "" = ./cosched-sim-<policy>-<timestamp>
  std::string name;             // run label; "" = sim-<policy>
  bool write_decisions = false; // DIR/decisions.jsonl
  bool dry_run = false;         // simulate and print the summary; write no file
  bool no_fast_forward = false; // simulate every turn of a steady rotation (SimConfig::fast_forward off)
  std::string traces = "auto";  // on, off, auto (off above kAutoTraceJobs jobs)
  std::string allocation = "auto";  // allocation.csv: on, off, auto (off past kAutoSegmentGiB of segments, main.cpp)
  bool quiet = false;
  std::string log_spec;
  SimConfig sim;
  double report_every_s = -1;   // < 0: automatic (see options.cpp)
};

enum ExitCode : int { kExitOk = 0, kExitOutputFailed = 1, kExitBadInput = 2 };

struct ParsedOptions {
  std::optional<Options> options;  // nullopt: exit with `code` (help, version, list, or an error)
  int code = kExitOk;
};

ParsedOptions parse_options(int argc, char** argv);

// The simulator's settings as JSON, for summary.json's "params" (so a run states how it was simulated).
nlohmann::json describe(const Options& o);

}  // namespace cosched::sim
