// The bridge between the OMPT callbacks / explicit API and the SelfAnalyzer, and the publication of its
// reports into the arena. Everything here runs on the initial thread; region calls are on the hot path.
#pragma once

#include <cstdint>

#include "cosched/protocol.hpp"
#include "options.hpp"

namespace cosched::rt {

void measure_init(const Options& opt, proto::Arena* arena);

// An outermost region begins (hot path): feeds the SelfAnalyzer and returns the team size to use given the
// RM's grant (the baseline allocation during the SelfAnalyzer's baseline phase). Threads other than the
// measured one get `granted` back untouched.
int measure_region(std::uintptr_t region_id, int granted) noexcept;

// The team measure_region would choose for the next region given `granted`, without feeding anything.
int measure_team_peek(int granted) noexcept;

// One summary line on stderr at program end when COSCHED_DEBUG=1: what the SelfAnalyzer saw.
void measure_summary() noexcept;

// Explicit API (relinked codes).
void measure_iteration_begin(long id) noexcept;
void measure_iteration_end(long id) noexcept;

}  // namespace cosched::rt
