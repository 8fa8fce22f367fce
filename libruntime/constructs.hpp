// The construct stream of the measuring thread (selfanalyzer/construct_stream.hpp): the worksharing loops,
// barriers, taskwaits and task creations the master meets inside long regions, and the iterations found in
// them, published for the sampler thread (efficiency_sampler.hpp).
#pragma once

#include <atomic>
#include <cstdint>

#include "selfanalyzer/construct_stream.hpp"
#include "work_state.hpp"

namespace cosched::rt {

struct ConstructsShared {
  sa::ConstructStream* stream = nullptr;  // nullptr: not measuring
  int published_period = 0;               // the measuring thread's copy of `period`
  std::atomic<std::uint64_t> iterations{0};  // read by the sampler
  std::atomic<int> period{0};
};
extern ConstructsShared g_constructs;

// Caller: measure_init, on the measuring thread. Sizes the detector (allocates once).
void constructs_init(int max_period, int confirm_repeats, int min_matches) noexcept;

// Caller: the measuring thread's OMPT callbacks, for a construct it meets (its code pointer). O(1) for
// every other thread, and for the measuring thread in short regions or in the detector's steady state.
// A construct of a long region: the detector, and what the sampler reads. Out of line, so that the common
// case below needs no stack frame.
void construct_in_long_region(const void* codeptr) noexcept;

inline void construct_seen(const void* codeptr) noexcept {
  if (!tl_frames.measuring) return;
  if (g_constructs.stream->skip_in_short_region()) [[likely]] return;
  construct_in_long_region(codeptr);
}

// Caller: the measuring thread when it begins the implicit task of an outermost region.
inline void constructs_region_begin() noexcept {
  if (tl_frames.measuring) g_constructs.stream->on_region_begin();
}

}  // namespace cosched::rt
