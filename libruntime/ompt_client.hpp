// A client OMPT tool chained behind libcosched: the profiler the user named (Score-P, TAU, HPCToolkit...).
//
// libomp starts one tool, the first in OMP_TOOL_LIBRARIES whose ompt_start_tool returns non-NULL. cosched-run
// names libcosched there and moves the user's list to COSCHED_CLIENT_TOOL_LIBRARIES, so libcosched starts
// the user's tool itself and forwards to it (docs/architecture.md, "Client OMPT tools"):
//   - the client's initialize runs after ours and gets a lookup of ours: its ompt_set_callback and
//     ompt_get_callback go through client_set_callback/client_get_callback, every other entry point is
//     libomp's own;
//   - an event libcosched does not handle is registered with libomp directly with the client's function:
//     no forwarding at all;
//   - an event libcosched handles (OwnCallback) is registered with a chained function that calls ours and
//     the client's (client_callback); with no client, or a client that does not want that event, ours
//     stays registered alone, so the hot path is exactly what it is without chaining;
//   - the client's finalize runs before ours.
// Data words: libcosched keeps its state in globals and thread-locals and never reads or writes an
// ompt_data_t (a parallel's, a task's, a thread's or its tool_data), so every data word libomp hands out
// belongs to the client whole, and the entry points that return them (ompt_get_thread_data,
// ompt_get_parallel_info, ompt_get_task_info) pass through. The day libcosched needs a data word, the
// chained functions must give the client a separate one (as LLVM's ompt-multiplex.h does).
#pragma once

#include <omp-tools.h>

#include <atomic>
#include <span>

namespace cosched::rt {

// Events are numbered from 1; OpenMP 5.1 stops at 37 (ompt_callback_error). Room for later ones.
inline constexpr int kClientEvents = 64;

// One event libcosched registers itself: `own` alone, or `chained` (ours, then the client's) when the
// client wants the event too.
struct OwnCallback {
  ompt_callbacks_t event;
  ompt_callback_t own;
  ompt_callback_t chained;
};

// From libcosched's ompt_start_tool, before libomp calls our initialize: loads and starts the first client
// that accepts, from COSCHED_CLIENT_TOOL_LIBRARIES (':'-separated, as OMP_TOOL_LIBRARIES), else from
// OMP_TOOL_LIBRARIES minus libcosched itself (a program that links libcosched: libomp never reads that
// list then). One line on stderr for every library that cannot be chained. Returns whether one started.
bool client_start(unsigned int omp_version, const char* runtime_version);

// From our initialize, after ours registered `own` with libomp (empty when libcosched stays inactive):
// runs the client's initialize. Returns whether the client stays active.
bool client_initialize(ompt_function_lookup_t lookup, int initial_device_num, std::span<const OwnCallback> own);

// From our finalize, before ours: the client's finalize.
void client_finalize();

// The client's function for an event libcosched chains (null if it unregistered it meanwhile).
extern std::atomic<ompt_callback_t> g_client_callbacks[kClientEvents];

template <typename Fn>
Fn client_callback(ompt_callbacks_t event) noexcept {
  return reinterpret_cast<Fn>(g_client_callbacks[event].load(std::memory_order_relaxed));
}

}  // namespace cosched::rt
