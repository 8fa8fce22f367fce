// Whether each thread of the job is working or waiting right now: the input of the waiting-time efficiency
// (selfanalyzer/efficiency_meter.hpp), sampled by the sampler thread (efficiency_sampler.hpp).
//
// A thread waits while it is inside a sync_region_wait (barriers, taskwait, taskgroup, the join barrier a
// worker sits in between regions: libomp reports that wait until the next fork) and is not running a task
// there; it works inside an implicit task, inside an explicit task, and, for a root thread (the initial
// thread), in serial code between regions. Time spinning in libomp's wait loops is waiting. Threads that
// are in no team (a worker before its first region) are idle. The state is a stack of frames (implicit task,
// explicit task, wait): each callback pushes or pops one, and a thread works when its innermost frame is a
// task. The callbacks cost a few instructions and one relaxed byte store when the state changes: no clock,
// no syscall, no lock (each thread's byte sits on its own cache line, so barriers do not bounce them).
//
// Lock and critical-section waits count as work (libomp's mutex callbacks would cost every lock), and so
// does a root thread blocked outside OpenMP (I/O, sleep, an MPI receive): both make the efficiency an upper
// bound, as work inflation does (docs/selfanalyzer.md, "Waiting-time efficiency").
#pragma once

#include <atomic>
#include <cstdint>

namespace cosched::rt {

// Threads followed; later ones are not sampled (their work is left out: the efficiency reads low).
inline constexpr int kMaxStateSlots = 256;

struct alignas(64) StateSlot {
  std::atomic<std::uint8_t> working{0};
};

extern StateSlot g_state_slots[kMaxStateSlots];
extern std::atomic<int> g_state_slot_count;  // slots handed out (may exceed kMaxStateSlots: the rest are unfollowed)

// The calling thread's frames. initial-exec: a plain %fs-relative access on every callback.
struct ThreadFrames {
  StateSlot* slot = nullptr;  // nullptr: not followed (a parked root, or past kMaxStateSlots)
  std::uint64_t waits = 0;    // bit d: frame d is a wait (0: a task)
  int depth = 0;              // frames on the stack; beyond 64 the bits are lost and frames count as tasks
  int base = 0;               // 1 for a root thread (its initial task works), 0 for a worker
  bool working = false;
  bool excluded = false;      // work_state_exclude_self: never followed
  bool measuring = false;     // the thread that initialised the tool: it feeds the construct stream
};
// constinit: no TLS wrapper call on access from other files (the initialiser is constant).
extern constinit __attribute__((tls_model("initial-exec"))) thread_local ThreadFrames tl_frames;

// Caller: OMPT thread_begin, and tool initialisation for the thread that runs it. A root thread (the
// initial thread, or one libomp registered as a root) works in its serial code; a worker is idle until its
// first implicit task. Once per thread.
void work_state_add_self(bool root) noexcept;
// Caller: a thread of libcosched's own that libomp registers as a root (the parked roots): never followed.
inline void work_state_exclude_self() noexcept { tl_frames.excluded = true; }

inline void work_state_apply(ThreadFrames& f) noexcept {
  const bool top_waits = f.depth > 0 && f.depth <= 64 && ((f.waits >> (f.depth - 1)) & 1U) != 0;
  const bool working = f.depth > 0 && !top_waits;
  if (working == f.working) return;
  f.working = working;
  if (f.slot != nullptr) f.slot->working.store(working ? 1 : 0, std::memory_order_relaxed);
}

inline void work_state_push(bool wait) noexcept {
  ThreadFrames& f = tl_frames;
  if (f.depth < 64) {
    const std::uint64_t bit = std::uint64_t{1} << f.depth;
    f.waits = wait ? (f.waits | bit) : (f.waits & ~bit);
  }
  ++f.depth;
  work_state_apply(f);
}

inline void work_state_pop() noexcept {
  ThreadFrames& f = tl_frames;
  if (f.depth > f.base) --f.depth;
  work_state_apply(f);
}

// An outermost implicit task begins (the thread works in it) or ends: the stack is reset to its base, so
// that an event libomp reports on another thread than the one that pushed its frame (an untied task resumed
// elsewhere) costs at most the rest of one region.
inline void work_state_outermost_task(bool begin) noexcept {
  ThreadFrames& f = tl_frames;
  f.depth = f.base + (begin ? 1 : 0);
  if (begin && f.depth <= 64) f.waits &= ~(std::uint64_t{1} << (f.depth - 1));
  work_state_apply(f);
}

}  // namespace cosched::rt
