// The sampler thread: every 4 ms by default (COSCHED_SAMPLE_MS; 16 ms once the estimate is current), with a
// random jitter of a quarter of that, it reads the job's threads' working time (work_state.hpp), feeds it to
// the EfficiencyMeter with the CPUs the job holds and its iterations so far, and publishes the waiting-time
// efficiency in the arena (proto::EfficiencyBlock; docs/selfanalyzer.md, "Waiting-time efficiency"). It also
// says how the program repeats (proto::Structure). It measures nothing itself (the threads keep their own
// time), so its wake-ups, which preempt a thread of the job, disturb no measurement.
//
// It runs off the program's path: nothing the OpenMP threads do waits for it, and it reads only atomics they
// write. Cost: a wake-up every 4 to 16 ms (docs/performance.md), one pread per thread per interval (the
// outside-load check). It is stopped with the job (SIGSTOP and the freezer stop every thread), and discards
// an interval that spans a stop or a move of the job's CPUs.
#pragma once

#include "cosched/protocol.hpp"

namespace cosched::rt {

// Starts the thread (once), ticking every `tick_ms` (0: never starts). Called by measure_init after the arena
// is mapped.
void efficiency_sampler_start(proto::Arena* arena, int tick_ms) noexcept;

}  // namespace cosched::rt
