// The bridge between the OMPT callbacks / explicit API and the SelfAnalyzer, and the publication of its
// reports into the arena. Everything here runs on the initial thread; region calls are on the hot path.
#pragma once

#include <cstdint>

#include "cosched/protocol.hpp"
#include "options.hpp"

namespace cosched::rt {

void measure_init(const Options& opt, proto::Arena* arena);

// The team size to use for the next outermost region given the RM's grant (the SelfAnalyzer asks for the
// baseline allocation during its baseline phase).
int measure_team_for(int granted) noexcept;

// An outermost region begins with `team` threads (hot path).
void measure_region(std::uintptr_t region_id, int team) noexcept;

// Explicit API (relinked codes).
void measure_iteration_begin(long id) noexcept;
void measure_iteration_end(long id) noexcept;

}  // namespace cosched::rt
