// Which team size each outermost parallel region gets, keeping every guarantee a program can observe
// (docs/architecture.md, "Team sizes a program can observe"; docs/usage.md, "What cosched guarantees").
//
// The OpenMP runtime gives a region (dyn-var false) exactly its num_threads clause, or else the nthreads-var
// that omp_get_max_threads() reports, and keeps threadprivate data only across regions of one size. A
// program may have cached any of this, so cosched resizes a region only where nothing is at stake:
//   1. serial code reading the team size sees the program's own value (never the grant), and no region is
//      ever larger than that;
//   2. a region that follows such a read gets exactly the value read;
//   3. a num_threads clause or omp_set_num_threads(n) gets n: the job's team is then the program's;
//   4. threadprivate data means one team size for the whole run;
//   7. a region the program is entitled to run with several threads is never given one (unless opted in).
// Reads and requests are seen through libcosched_wrap's interposers (wrappers/team_size.c), which call the
// cosched_team_* functions below; without them nothing can be seen, so nothing is resized.
//
// Threading: the read/request hooks run on any thread of the program; the hot-path functions on the
// thread beginning an outermost region. Shared state is atomic (relaxed: each value stands alone).
#pragma once

#include <cstdint>

#include "cosched/protocol.hpp"
#include "options.hpp"

namespace cosched::rt {

// Called once from ompt_initialize, before any region. `lookup_fn` is any function of the OpenMP runtime
// (the OMPT lookup): the runtime's own omp_* entry points are found through its library, so that calls
// made by libcosched never go through the interposers meant for the program.
void team_init(const Options& opt, void* lookup_fn);

// Hot path, outermost region begin on the calling thread. Chooses the team for the region given the
// analyzer's wish (`wanted`, the grant or the baseline), sets nthreads-var when it must change, and
// returns the team libomp will form (a pending num_threads clause included). No syscall, lock or allocation.
int team_for_region(int wanted) noexcept;

// Hot path, the fast case: the team team_for_region(wanted) would return on this thread now when it would
// change nothing (no hook ran since this thread's last team_for_region, which had the same wish and
// nothing one-shot: no latched read, no clause, not the first region); 0 otherwise, and then the caller
// calls team_for_region. Changes nothing.
int team_for_region_again(int wanted) noexcept;

// The smallest team cosched may choose now: 1 when malleable, the program's value when the team is fixed,
// else min(2, program value). The SelfAnalyzer's baseline never goes below it.
int team_floor() noexcept;

proto::TeamMode team_mode() noexcept;

}  // namespace cosched::rt
