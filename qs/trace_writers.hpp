// Trace files of a Run, as text: Paraver (.prv/.pcf/.row) and Chrome/Perfetto Trace Event JSON. Both draw
// the same Placement (qs/trace_placement.hpp): one row per CPU, one coloured piece per job segment, as in the
// PDPA paper's Fig. 5, plus the multiprogramming level over time (Fig. 8).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "qs/results.hpp"
#include "qs/trace_placement.hpp"

namespace cosched::results {

// Event types in trace.prv (documented in trace.pcf and docs/results.md).
inline constexpr long kParaverJobEvent = 90000001;      // value: job position + 1, as the state (0 = ends)
inline constexpr long kParaverAppEvent = 90000002;      // value: application index + 1 (0 = segment ends)
inline constexpr long kParaverRunningEvent = 90000003;  // value: running jobs (on row 1 only)
inline constexpr long kParaverQueuedEvent = 90000004;   // value: queued jobs (on row 1 only)

struct ParaverTrace {
  std::string prv;
  std::string pcf;
  std::string row;
};

// State value of a job's pieces = its position in run.jobs + 1 (0 is Paraver's "Idle"); the .pcf names each
// value "job <id> <app>" and colours it by application, one hue per application. A run with nothing to draw
// still gets a valid trace: one ML sample (0 running, 0 queued) at time 0, in a trace 1 ns long.
ParaverTrace paraver_trace(const Run& run, const Placement& placement, const std::vector<MlSample>& ml);

// Trace Event Format: pid 1, tid = row; an "X" event per piece, a "C" counter for the ML, and metadata
// events naming the process and each row. Times in microseconds as the format requires; no
// "displayTimeUnit" key (see trace_chrome.cpp).
std::string chrome_trace(const Run& run, const Placement& placement, const std::vector<MlSample>& ml);

// Applications in order of first appearance in run.jobs, and each job's index into that list.
struct AppIndex {
  std::vector<std::string> names;
  std::vector<int> of_job;
};
AppIndex index_apps(const Run& run);

// A name as the line-based .pcf and .row can hold it: control characters (newline, tab, DEL, ...) become
// their C escapes (\n, \t, \x7f), so that a name always stays one line. Other bytes are kept as they are.
std::string paraver_label(std::string_view name);

// The label of a trace row: "CPU 3", or "oversubscribed 2" for rows past the machine's CPUs.
std::string row_label(const Placement& placement, int row);

}  // namespace cosched::results
