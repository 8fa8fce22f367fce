// libcosched's OMPT tool: the entry point libomp calls (ompt_start_tool) and the callbacks.
//
// The one hot path is on_parallel_begin for an outermost region: it reads the granted CPUs from the arena,
// lets the SelfAnalyzer say what it wants (the baseline, or the grant), lets team_control choose the team
// the program's guarantees allow and set it (libomp sizes the region that is beginning after this callback
// returns — see docs/architecture.md), and feeds the SelfAnalyzer; in the common case where all of that
// would repeat the previous region's decisions, measure_region_repeat only advances counters. It makes no
// syscall (clock_gettime is served by the vDSO), takes no lock and allocates nothing. A client OMPT tool
// (ompt_client.hpp) is served by separate chained_* functions, registered only when it wants the same
// event: the functions below are the same with or without one.
#include <omp-tools.h>

#include <atomic>
#include <cstring>
#include <span>

#include "cpu_wait.hpp"
#include "measure.hpp"
#include "ompt_client.hpp"
#include "options.hpp"
#include "rm_client.hpp"
#include "team_control.hpp"
#include "tool_state.hpp"

namespace cosched::rt {
namespace {

bool g_debug = false;  // COSCHED_DEBUG=1: a summary of the measurement at program end

// Implicit tasks this thread is inside (regions it is a member of): 0 on a thread outside any parallel region.
// Kept from the implicit-task callbacks, which cosched needs anyway (rule 5), because omp_get_level() costs
// about 50 instructions per call in libomp, a third of the hot path.
__attribute__((tls_model("initial-exec"))) thread_local int tl_depth = 0;

// The full path: out of line, so that the common case below needs no stack frame.
__attribute__((noinline)) void begin_region(std::uintptr_t region_id, int granted) {
  const int team = team_for_region(measure_wanted(granted));
  measure_region(region_id, team, granted);
}

// noinline (this and the other two callbacks): the chained functions call them, and gcc would otherwise
// split them for partial inlining there, which puts a jump in front of the hot path that libomp calls.
__attribute__((noinline)) void on_parallel_begin(ompt_data_t* /*encountering_task*/, const ompt_frame_t* /*frame*/,
                       ompt_data_t* /*parallel_data*/, unsigned int /*requested*/, int /*flags*/,
                       const void* codeptr_ra) {
  if (tl_depth != 0) return;  // nested regions keep what the outer team decided
  const int granted = granted_team();
  const auto region_id = reinterpret_cast<std::uintptr_t>(codeptr_ra);
  if (measure_region_repeat(region_id, granted)) return;  // the previous region's decisions again
  begin_region(region_id, granted);
}

// Every member of a team enters and leaves its implicit task here (the nesting depth above); the master of a
// team that just formed learns its real size (rule 5: measure the team that ran).
__attribute__((noinline)) void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t* /*parallel_data*/, ompt_data_t* /*task_data*/,
                      unsigned int actual_parallelism, unsigned int index, int flags) {
  if ((flags & ompt_task_initial) != 0) return;
  if (endpoint != ompt_scope_begin) {
    --tl_depth;
    return;
  }
  if (++tl_depth == 1 && index == 0) measure_team_formed(static_cast<int>(actual_parallelism));
}

__attribute__((noinline)) void on_thread_begin(ompt_thread_t type, ompt_data_t* /*thread_data*/) {
  // libomp resets the affinity of threads it creates; under the affinity backend the job applies the RM's
  // mask itself (one syscall per new thread, not per region).
  if (type == ompt_thread_worker) {
    apply_arena_mask_to_self();
    cpu_wait_add_self();  // its run-queue delay joins the outside-load check
  }
}

// With a client tool that wants an event libcosched handles, libomp calls these instead (ompt_client.hpp):
// ours first where something begins, the client's first where something ends, so that each tool's view
// nests inside the other's as the tools' initialize and finalize do. Never on the path without a client.
void chained_parallel_begin(ompt_data_t* encountering_task, const ompt_frame_t* frame, ompt_data_t* parallel_data,
                            unsigned int requested, int flags, const void* codeptr_ra) {
  on_parallel_begin(encountering_task, frame, parallel_data, requested, flags, codeptr_ra);
  if (auto fn = client_callback<ompt_callback_parallel_begin_t>(ompt_callback_parallel_begin)) {
    fn(encountering_task, frame, parallel_data, requested, flags, codeptr_ra);
  }
}

void chained_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data, ompt_data_t* task_data,
                           unsigned int actual_parallelism, unsigned int index, int flags) {
  auto fn = client_callback<ompt_callback_implicit_task_t>(ompt_callback_implicit_task);
  if (endpoint == ompt_scope_begin) {
    on_implicit_task(endpoint, parallel_data, task_data, actual_parallelism, index, flags);
    if (fn != nullptr) fn(endpoint, parallel_data, task_data, actual_parallelism, index, flags);
  } else {
    if (fn != nullptr) fn(endpoint, parallel_data, task_data, actual_parallelism, index, flags);
    on_implicit_task(endpoint, parallel_data, task_data, actual_parallelism, index, flags);
  }
}

void chained_thread_begin(ompt_thread_t type, ompt_data_t* thread_data) {
  on_thread_begin(type, thread_data);
  if (auto fn = client_callback<ompt_callback_thread_begin_t>(ompt_callback_thread_begin)) fn(type, thread_data);
}

template <typename Fn>
ompt_callback_t as_callback(Fn fn) {
  return reinterpret_cast<ompt_callback_t>(fn);
}

const OwnCallback kOwnCallbacks[] = {
    {ompt_callback_parallel_begin, as_callback(&on_parallel_begin), as_callback(&chained_parallel_begin)},
    {ompt_callback_implicit_task, as_callback(&on_implicit_task), as_callback(&chained_implicit_task)},
    {ompt_callback_thread_begin, as_callback(&on_thread_begin), as_callback(&chained_thread_begin)},
};

bool g_managed = false;  // our initialize registered libcosched's callbacks (finalize has our part to do)

// Registers with the RM and installs libcosched's callbacks; false when the job runs natively (the tool
// then does nothing, though a client tool may still run).
bool initialize_ours(ompt_function_lookup_t lookup) {
  Options opt = read_options();
  if (opt.disabled) return false;
  g_debug = opt.debug;
  if (!rm_register(opt, false)) return false;
  team_init(opt, reinterpret_cast<void*>(lookup));
  measure_init(opt, g_tool.arena);
  auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (set_callback == nullptr) return false;
  for (const auto& cb : kOwnCallbacks) set_callback(cb.event, cb.own);
  rm_start_watcher();
  return true;
}

// Ours first, then the client's (ompt_client.hpp): the client's callbacks for events we handle chain
// behind ours, which must be in place.
int tool_initialize(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t* /*tool_data*/) {
  g_managed = initialize_ours(lookup);
  const bool client = client_initialize(lookup, initial_device_num,
                                        g_managed ? std::span<const OwnCallback>(kOwnCallbacks)
                                                  : std::span<const OwnCallback>());
  return g_managed || client ? 1 : 0;  // 0: libomp turns OMPT off (native, no client)
}

// The client's finalize first: it may still run OpenMP code or query the runtime while the job is managed.
void tool_finalize(ompt_data_t* /*tool_data*/) {
  client_finalize();
  if (!g_managed) return;
  if (g_debug) measure_summary();
  rm_disconnect();
}

}  // namespace
}  // namespace cosched::rt

// One libcosched tool per process: a client that tried to start libcosched as its own client (or a second
// copy of the program's libraries) gets NULL, never a second set of callbacks.
extern "C" __attribute__((visibility("default"))) ompt_start_tool_result_t* ompt_start_tool(
    unsigned int omp_version, const char* runtime_version) {
  static std::atomic<bool> started{false};
  if (started.exchange(true)) return nullptr;
  static ompt_start_tool_result_t result = {&cosched::rt::tool_initialize, &cosched::rt::tool_finalize, {0}};
  cosched::rt::client_start(omp_version, runtime_version);
  return &result;
}
