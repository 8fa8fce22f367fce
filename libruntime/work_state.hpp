// How long each thread of the job has worked, as opposed to waited: the input of the waiting-time efficiency
// (selfanalyzer/efficiency_meter.hpp), read by the sampler thread (efficiency_sampler.hpp).
//
// A thread waits while it is inside a sync_region_wait (barriers, taskwait, taskgroup, the join barrier a
// worker sits in between regions: libomp reports that wait until the next fork) and is not running a task
// there; it works inside an implicit task, inside an explicit task, and, for a root thread (the initial
// thread), in serial code between regions. Time spinning in libomp's wait loops is waiting. Threads that
// are in no team (a worker before its first region) are idle. The state is a stack of frames (implicit task,
// explicit task, wait): each callback pushes or pops one, and a thread works when its innermost frame is a
// task.
//
// Working time is measured on the kernel's coarse clock (CLOCK_MONOTONIC_COARSE: a vDSO read of about 4 ns,
// no syscall, advanced by the timer tick, every 4 ms here): at each change between working and waiting the
// thread adds the coarse time since its last change to its total. Over many ticks that total counts exactly
// the ticks that fell while the thread worked, times the tick: the states sampled at every tick of the
// kernel, which interrupts every CPU natively, so measuring disturbs nothing. (A sampler thread reading the
// states itself did: its wake-up preempts one of the job's threads, and on codes of microsecond regions the
// others were waiting for it at a barrier by the time it looked. team-patterns' steps, 2.7 µs per region,
// read 0.30 at 2 CPUs that way, against 0.72 from exact timings of the same waits.) A change costs one coarse
// clock read and one store on the thread's own cache line; no syscall, no lock.
//
// Lock and critical-section waits count as work (libomp's mutex callbacks would cost every lock), and so
// does a root thread blocked outside OpenMP (I/O, sleep, an MPI receive): both make the efficiency an upper
// bound, as work inflation does (docs/selfanalyzer.md, "Waiting-time efficiency").
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>

namespace cosched::rt {

// Threads followed; later ones are not sampled (their work is left out: the efficiency reads low).
inline constexpr int kMaxStateSlots = 256;

// Written by its thread only, read by the sampler (work_state_busy_ns). One word, so that one store publishes
// a change and a reader needs no retry: bit 0 says whether the thread works; the rest is its working time so
// far (closed intervals, on the coarse clock) while it waits, or that minus the start of the open interval
// while it works (modulo 2^64), so that adding the time now gives its working time up to now. The coarse
// clock's values are multiples of its tick, so bit 0 of a time is always 0.
struct alignas(64) StateSlot {
  std::atomic<std::uint64_t> word{0};
};

// The vDSO's own clock_gettime, looked up once (work_state_init): 2.5 ns a call here against 4.5 through
// libc's wrapper, which matters at two calls per thread per region. nullptr: libc's.
using ClockGettimeFn = int (*)(clockid_t, timespec*);
extern ClockGettimeFn g_vdso_clock_gettime;

inline std::uint64_t coarse_now_ns() noexcept {
  timespec ts;
  if (g_vdso_clock_gettime != nullptr) {
    g_vdso_clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  } else {
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);  // vDSO too: no syscall
  }
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Caller: tool initialisation, before any thread is followed. Finds the vDSO's clock_gettime.
void work_state_init() noexcept;

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
  std::uint64_t busy_ns = 0;  // the slot's values, kept here so that a change reads nothing shared
  std::uint64_t since_ns = 0;
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

// The change itself, out of line: most callbacks change nothing (a wait inside a wait, a task inside a task).
void work_state_change(ThreadFrames& f, bool working) noexcept;

inline void work_state_apply(ThreadFrames& f) noexcept {
  const bool top_waits = f.depth > 0 && f.depth <= 64 && ((f.waits >> (f.depth - 1)) & 1U) != 0;
  const bool working = f.depth > 0 && !top_waits;
  if (working != f.working) work_state_change(f, working);
}

// Caller: the sampler. The working time of every followed thread so far, on the coarse clock at `now_ns`
// (open intervals counted up to it).
std::uint64_t work_state_busy_ns(std::uint64_t now_ns) noexcept;

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
//
// A worker's state is left as it is at the end: it has just left the join barrier's wait, which libomp ends
// at the next fork, and begins its next implicit task some 100 ns later; going idle and back in between would
// cost two clock reads per region for nothing. A worker left out of the next team stays in that wait.
inline void work_state_outermost_task(bool begin) noexcept {
  ThreadFrames& f = tl_frames;
  f.depth = f.base + (begin ? 1 : 0);
  if (!begin) return;
  if (f.depth <= 64) f.waits &= ~(std::uint64_t{1} << (f.depth - 1));
  work_state_apply(f);
}

}  // namespace cosched::rt
