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

#include "constructs.hpp"
#include "cpu_wait.hpp"
#include "measure.hpp"
#include "ompt_client.hpp"
#include "options.hpp"
#include "rm_client.hpp"
#include "team_control.hpp"
#include "tool_state.hpp"
#include "work_state.hpp"

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
    if (--tl_depth == 0) {
      work_state_outermost_task(false);
    } else {
      work_state_pop();
    }
    return;
  }
  if (++tl_depth != 1) {
    work_state_push(false);  // a nested region's task: the thread works in it
    return;
  }
  work_state_outermost_task(true);
  if (index == 0) {
    measure_team_formed(static_cast<int>(actual_parallelism));
    constructs_region_begin();
  }
}

// Waits (barriers, taskwait, taskgroup, and a worker's join barrier until the next fork) are what the
// waiting-time efficiency leaves out (work_state.hpp); on the measuring thread each one is also a construct
// of its stream (constructs.hpp), named by its code pointer.
__attribute__((noinline)) void on_sync_region_wait(ompt_sync_region_t /*kind*/, ompt_scope_endpoint_t endpoint,
                                                   ompt_data_t* /*parallel_data*/, ompt_data_t* /*task_data*/,
                                                   const void* codeptr_ra) {
  if (endpoint != ompt_scope_begin) {
    work_state_pop();
    return;
  }
  work_state_push(true);
  construct_seen(codeptr_ra);
}

// An explicit task starts or resumes on this thread (it works, even inside a barrier or a taskwait), or the
// one it ran ends (back to what the thread did before: a wait, or the task that created it).
__attribute__((noinline)) void on_task_schedule(ompt_data_t* /*prior_task*/, ompt_task_status_t prior_status,
                                                ompt_data_t* /*next_task*/) {
  switch (prior_status) {
    case ompt_task_complete:
    case ompt_task_cancel:
    case ompt_task_detach:
      work_state_pop();
      return;
    case ompt_task_early_fulfill:
    case ompt_task_late_fulfill:
      return;  // an event of a detached task's completion, on any thread: no frame moves
    default:
      work_state_push(false);  // ompt_task_switch, ompt_task_yield: the next task runs here
      return;
  }
}

// The measuring thread's worksharing constructs (loops, single, sections...) and task creations join its
// construct stream; any other thread returns at once.
__attribute__((noinline)) void on_work(ompt_work_t /*work_type*/, ompt_scope_endpoint_t endpoint,
                                       ompt_data_t* /*parallel_data*/, ompt_data_t* /*task_data*/,
                                       std::uint64_t /*count*/, const void* codeptr_ra) {
  if (endpoint == ompt_scope_begin) construct_seen(codeptr_ra);
}

__attribute__((noinline)) void on_task_create(ompt_data_t* /*encountering_task*/,
                                              const ompt_frame_t* /*encountering_frame*/, ompt_data_t* /*new_task*/,
                                              int flags, int /*has_dependences*/, const void* codeptr_ra) {
  if ((flags & ompt_task_explicit) != 0) construct_seen(codeptr_ra);
}

__attribute__((noinline)) void on_thread_begin(ompt_thread_t type, ompt_data_t* /*thread_data*/) {
  // libomp resets the affinity of threads it creates; under the affinity backend the job applies the RM's
  // mask itself (one syscall per new thread, not per region).
  if (type == ompt_thread_worker) {
    apply_arena_mask_to_self();
    cpu_wait_add_self();  // its run-queue delay joins the outside-load check
  }
  // Its work and waits join the waiting-time efficiency; a root libomp registered later (a thread of the
  // program that begins regions of its own) works in its serial code, as the initial thread does.
  if (type == ompt_thread_worker || type == ompt_thread_initial) work_state_add_self(type == ompt_thread_initial);
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

void chained_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data,
                              ompt_data_t* task_data, const void* codeptr_ra) {
  auto fn = client_callback<ompt_callback_sync_region_t>(ompt_callback_sync_region_wait);
  if (endpoint == ompt_scope_begin) {
    on_sync_region_wait(kind, endpoint, parallel_data, task_data, codeptr_ra);
    if (fn != nullptr) fn(kind, endpoint, parallel_data, task_data, codeptr_ra);
  } else {
    if (fn != nullptr) fn(kind, endpoint, parallel_data, task_data, codeptr_ra);
    on_sync_region_wait(kind, endpoint, parallel_data, task_data, codeptr_ra);
  }
}

void chained_task_schedule(ompt_data_t* prior_task, ompt_task_status_t prior_status, ompt_data_t* next_task) {
  on_task_schedule(prior_task, prior_status, next_task);
  if (auto fn = client_callback<ompt_callback_task_schedule_t>(ompt_callback_task_schedule)) {
    fn(prior_task, prior_status, next_task);
  }
}

void chained_work(ompt_work_t work_type, ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data,
                  ompt_data_t* task_data, std::uint64_t count, const void* codeptr_ra) {
  auto fn = client_callback<ompt_callback_work_t>(ompt_callback_work);
  if (endpoint == ompt_scope_begin) {
    on_work(work_type, endpoint, parallel_data, task_data, count, codeptr_ra);
    if (fn != nullptr) fn(work_type, endpoint, parallel_data, task_data, count, codeptr_ra);
  } else {
    if (fn != nullptr) fn(work_type, endpoint, parallel_data, task_data, count, codeptr_ra);
    on_work(work_type, endpoint, parallel_data, task_data, count, codeptr_ra);
  }
}

void chained_task_create(ompt_data_t* encountering_task, const ompt_frame_t* encountering_frame,
                         ompt_data_t* new_task, int flags, int has_dependences, const void* codeptr_ra) {
  on_task_create(encountering_task, encountering_frame, new_task, flags, has_dependences, codeptr_ra);
  if (auto fn = client_callback<ompt_callback_task_create_t>(ompt_callback_task_create)) {
    fn(encountering_task, encountering_frame, new_task, flags, has_dependences, codeptr_ra);
  }
}

template <typename Fn>
ompt_callback_t as_callback(Fn fn) {
  return reinterpret_cast<ompt_callback_t>(fn);
}

const OwnCallback kOwnCallbacks[] = {
    {ompt_callback_parallel_begin, as_callback(&on_parallel_begin), as_callback(&chained_parallel_begin)},
    {ompt_callback_implicit_task, as_callback(&on_implicit_task), as_callback(&chained_implicit_task)},
    {ompt_callback_thread_begin, as_callback(&on_thread_begin), as_callback(&chained_thread_begin)},
    {ompt_callback_sync_region_wait, as_callback(&on_sync_region_wait), as_callback(&chained_sync_region_wait)},
    {ompt_callback_task_schedule, as_callback(&on_task_schedule), as_callback(&chained_task_schedule)},
    {ompt_callback_work, as_callback(&on_work), as_callback(&chained_work)},
    {ompt_callback_task_create, as_callback(&on_task_create), as_callback(&chained_task_create)},
};

bool g_managed = false;  // our initialize registered libcosched's callbacks (finalize has our part to do)

// Registers with the RM and installs libcosched's callbacks; false when the job runs natively (the tool
// then does nothing, though a client tool may still run).
bool initialize_ours(ompt_function_lookup_t lookup) {
  Options opt = read_options();
  if (opt.disabled) return false;
  g_debug = opt.debug;
  if (!rm_register(opt, false)) return false;
  work_state_init();
  work_state_add_self(true);  // the initial thread: it works in its serial code
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
  write_cpu_report();
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
