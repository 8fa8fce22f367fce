// libcosched's OMPT tool: the entry point libomp calls (ompt_start_tool) and the callbacks.
//
// The one hot path is on_parallel_begin for an outermost region: it reads the granted CPUs from the arena,
// lets the SelfAnalyzer say what it wants (the baseline, or the grant), lets team_control choose the team
// the program's guarantees allow and set it (libomp sizes the region that is beginning after this callback
// returns — see docs/architecture.md), and feeds the SelfAnalyzer; in the common case where all of that
// would repeat the previous region's decisions, measure_region_repeat only advances counters. It makes no
// syscall (clock_gettime is served by the vDSO), takes no lock and allocates nothing.
#include <omp-tools.h>

#include <cstring>

#include "cpu_wait.hpp"
#include "measure.hpp"
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

void on_parallel_begin(ompt_data_t* /*encountering_task*/, const ompt_frame_t* /*frame*/,
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
void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t* /*parallel_data*/, ompt_data_t* /*task_data*/,
                      unsigned int actual_parallelism, unsigned int index, int flags) {
  if ((flags & ompt_task_initial) != 0) return;
  if (endpoint != ompt_scope_begin) {
    --tl_depth;
    return;
  }
  if (++tl_depth == 1 && index == 0) measure_team_formed(static_cast<int>(actual_parallelism));
}

void on_thread_begin(ompt_thread_t type, ompt_data_t* /*thread_data*/) {
  // libomp resets the affinity of threads it creates; under the affinity backend the job applies the RM's
  // mask itself (one syscall per new thread, not per region).
  if (type == ompt_thread_worker) {
    apply_arena_mask_to_self();
    cpu_wait_add_self();  // its run-queue delay joins the outside-load check
  }
}

int tool_initialize(ompt_function_lookup_t lookup, int /*initial_device_num*/, ompt_data_t* /*tool_data*/) {
  Options opt = read_options();
  if (opt.disabled) return 0;
  g_debug = opt.debug;
  if (!rm_register(opt, false)) return 0;  // native: deactivate the tool entirely
  team_init(opt, reinterpret_cast<void*>(lookup));
  measure_init(opt, g_tool.arena);
  auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (set_callback == nullptr) return 0;
  set_callback(ompt_callback_parallel_begin, reinterpret_cast<ompt_callback_t>(&on_parallel_begin));
  set_callback(ompt_callback_implicit_task, reinterpret_cast<ompt_callback_t>(&on_implicit_task));
  set_callback(ompt_callback_thread_begin, reinterpret_cast<ompt_callback_t>(&on_thread_begin));
  rm_start_watcher();
  return 1;
}

void tool_finalize(ompt_data_t* /*tool_data*/) {
  if (g_debug) measure_summary();
  rm_disconnect();
}

}  // namespace
}  // namespace cosched::rt

extern "C" __attribute__((visibility("default"))) ompt_start_tool_result_t* ompt_start_tool(
    unsigned int /*omp_version*/, const char* /*runtime_version*/) {
  static ompt_start_tool_result_t result = {&cosched::rt::tool_initialize, &cosched::rt::tool_finalize, {0}};
  return &result;
}
