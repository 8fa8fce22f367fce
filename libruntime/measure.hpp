// The bridge between the OMPT callbacks / explicit API and the SelfAnalyzer, and the publication of its
// reports into the arena. Everything here runs on the initial thread; region calls are on the hot path.
#pragma once

#include <cstdint>

#include "cosched/protocol.hpp"
#include "options.hpp"

namespace cosched::rt {

void measure_init(const Options& opt, proto::Arena* arena);

// An outermost region begins (hot path), step 1: follows what the RM changed and returns the team the
// SelfAnalyzer wants given the RM's grant (the baseline allocation during its baseline phase). Threads
// other than the measured one get `granted` back untouched.
int measure_wanted(int granted) noexcept;

// The same without following the RM (any thread; what a malleable program's read of the team size sees).
int measure_wanted_peek(int granted) noexcept;

// Step 2: feeds the SelfAnalyzer with the region and the CPUs its team can use: min(team, granted CPUs)
// (a team of 2 sharing 1 CPU is measured as 1 CPU). `team` is the team libomp will form.
void measure_region(std::uintptr_t region_id, int team, int granted) noexcept;

// Steps 1 and 2 together, and team_for_region between them, in the common case where they would only
// repeat the previous region's decisions and advance counters: the analyzer's steady state, nothing changed
// by the RM or the program since, no timed sample ending here. Returns true when done so; false (nothing
// changed) when the caller must take the three steps. Threads other than the measured one get false.
bool measure_region_repeat(std::uintptr_t region_id, int granted) noexcept;

// Step 3, from the master's implicit-task-begin callback: the team libomp actually formed (OMPT). Stored
// for the RM; an iteration whose team differs from the one measure_region was told is not a clean sample.
void measure_team_formed(int actual) noexcept;

// One summary line on stderr at program end when COSCHED_DEBUG=1: what the SelfAnalyzer saw.
void measure_summary() noexcept;

// Explicit API (relinked codes).
void measure_iteration_begin(long id) noexcept;
void measure_iteration_end(long id) noexcept;

}  // namespace cosched::rt
