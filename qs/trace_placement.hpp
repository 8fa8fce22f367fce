// Which trace row (CPU) shows which job when: the layout shared by the Paraver and the Chrome traces.
//
// Rule (docs/results.md, "Placement"):
//   1. Segments that name their CPUs (cpu_list) go on those rows, in order of (t0, job position).
//   2. Segments without a cpu_list (native runs: the OS chose) get `cpus` rows by first fit over time: in
//      order of (t0, job position, segment order), each takes the lowest-numbered rows free over its whole
//      [t0, t1). The result is deterministic and keeps a job on the same rows while they stay free.
//   3. A piece that finds its row busy (two jobs claiming one CPU at once) or finds fewer than `cpus` free
//      rows (a native run with more threads than CPUs) goes to "oversubscribed" rows numbered after the
//      machine's CPUs, first fit again. No row ever holds two overlapping pieces, so the traces stay valid,
//      and oversubscription is visible instead of hidden.
// Zero-length, reversed or non-finite segments are skipped (they held nothing); CPU numbers < 0 are dropped.
#pragma once

#include <cstddef>
#include <vector>

#include "qs/results.hpp"

namespace cosched::results {

struct PlacedPiece {
  std::size_t job_index = 0;  // position in Run::jobs
  int row = 0;                // 0 .. machine_rows-1 are CPUs; rows past them are oversubscribed
  double t0 = 0;
  double t1 = 0;
};

struct Placement {
  int machine_rows = 0;             // max(machine_cpus, highest named CPU + 1)
  int rows = 0;                     // machine_rows + oversubscribed rows
  std::vector<PlacedPiece> pieces;  // sorted by (t0, row)
};

Placement place_on_cpus(const Run& run);

// How many pieces place_on_cpus would draw: one per CPU of each drawable segment (its cpu_list, or `cpus`
// rows when it names none). The traces cost about 360 bytes per piece on disk (trace.prv and trace.json
// together, measured in docs/performance.md), so a caller can refuse a trace it cannot hold before building it.
std::size_t trace_pieces(const Run& run);

}  // namespace cosched::results
