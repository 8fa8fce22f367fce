// Workload loading: SWF jobs + catalog → the list of jobs to replay, each with its command line, its
// arrival time in the run and its CPU request on this machine. Everything that can be wrong with the input
// is found here, before any process starts (exit status 2, "nothing started").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cosched/error.hpp"
#include "qs/catalog.hpp"
#include "qs/swf.hpp"

namespace cosched::qsubmit {

struct PlannedJob {
  std::int64_t id = 0;            // SWF job number (field 1)
  std::int64_t line = 0;          // where it is in the SWF file, for messages
  std::string app;                // catalog name
  std::string app_class;          // catalog class, else the app name
  double submit = 0;              // seconds after the run began: SWF submit time x time scale
  std::int64_t trace_request = 1; // CPUs asked for in the trace (field 8, else field 5)
  int request = 1;                // CPUs asked for on this machine (scale_requests)
  std::vector<std::string> argv;  // the command, @programs resolved
  std::string team;               // catalog `team`: "", "malleable" or "fixed" (cosched-run's option)
  std::int64_t preceding = -1;    // SWF field 17: arrives when that job ends (closed workloads), -1: none
  double think = 0;               // SWF field 18 x time scale: seconds after the preceding job ends
  double ideal = -1;              // SWF field 4: run time on a dedicated machine (normalised throughput)
};

struct LoadedWorkload {
  std::string swf_path;
  std::string catalog_path;
  std::int64_t trace_procs = 0;   // machine size of the trace (--max-procs, else the header); 0 unknown
  std::vector<PlannedJob> jobs;   // in SWF order (non-decreasing submit)
  std::vector<std::string> warnings;  // lenient mode: skipped lines (the first swf::Workload::kMaxWarnings)
  std::vector<std::string> notes;     // about the file as a whole (swf::workload_notes)
  std::int64_t skipped_lines = 0;     // lenient mode: all of them
};

struct LoadSettings {
  std::string swf_path;
  std::string catalog_path;       // empty: default_catalog_path(swf_path)
  double time_scale = 1.0;
  std::int64_t max_procs = 0;     // 0: take the SWF header's
  bool lenient = false;
  swf::ExtraFields extra_fields = swf::ExtraFields::error;
};

// catalog.yaml in the directory of the SWF file.
std::string default_catalog_path(const std::string& swf_path);

// Reads and checks everything. Errors (Errc::parse_error, not_found, io_error) name the file, the line and
// the field or the program that is wrong.
Result<LoadedWorkload> load_workload(const LoadSettings& settings, const catalog::ProgramLookup& lookup);

struct Options;

// The workload `options` names (--workload, --catalog, --time-scale, --max-procs, --lenient, --extra-fields),
// loaded the same way for every backend; its skipped lines and notes go to stderr.
Result<LoadedWorkload> load_workload(const Options& options);

// A job's SWF fields → its PlannedJob (without request scaling). Exposed for tests.
Result<PlannedJob> plan_job(const swf::Job& job, const catalog::Catalog& catalog,
                            const catalog::ProgramLookup& lookup, double time_scale);

// Sets every job's `request` for a machine of `machine_cpus` (swf::scale_request from trace_procs).
void scale_requests(LoadedWorkload& workload, int machine_cpus);

}  // namespace cosched::qsubmit
