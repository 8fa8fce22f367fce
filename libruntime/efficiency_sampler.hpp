// The sampler thread: every 2 ms by default (COSCHED_SAMPLE_MS), with a random jitter of ±a quarter of that (±0.5 ms, so that no loop of a fixed period is
// sampled at the same phase each time), it counts the job's threads that are working (work_state.hpp),
// feeds the count to the EfficiencyMeter with the CPUs the job holds and its iterations so far, and
// publishes the waiting-time efficiency in the arena (proto::EfficiencyBlock; docs/selfanalyzer.md,
// "Waiting-time efficiency"). It also says how the program repeats (proto::Structure).
//
// It runs off the program's path: nothing the OpenMP threads do waits for it, and it reads only relaxed
// atomics they write. Cost: a wake-up every 2 ms (about 500 a second: docs/performance.md), one pread per
// thread per interval (the outside-load check). It is stopped with the job (SIGSTOP and the freezer stop
// every thread), and discards an interval that spans a stop or a move of the job's CPUs.
#pragma once

#include "cosched/protocol.hpp"

namespace cosched::rt {

// Starts the thread (once), ticking every `tick_ms` (0: never starts). Called by measure_init after the arena
// is mapped.
void efficiency_sampler_start(proto::Arena* arena, int tick_ms) noexcept;

}  // namespace cosched::rt
