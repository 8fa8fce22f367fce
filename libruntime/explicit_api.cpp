// The explicit SelfAnalyzer API (include/cosched/selfanalyzer.h) for relinked codes.
#include "cosched/selfanalyzer.h"

#include <omp.h>

#include "measure.hpp"
#include "tool_state.hpp"

#pragma weak omp_get_level

extern "C" {

__attribute__((visibility("default"))) void cosched_iter_begin(long id) { cosched::rt::measure_iteration_begin(id); }
__attribute__((visibility("default"))) void cosched_iter_end(long id) { cosched::rt::measure_iteration_end(id); }
__attribute__((visibility("default"))) void cosched_iter_begin_(const long* id) { cosched_iter_begin(id != nullptr ? *id : 0); }
__attribute__((visibility("default"))) void cosched_iter_end_(const long* id) { cosched_iter_end(id != nullptr ? *id : 0); }

// For wrappers/ (libcosched_wrap): the team the next outermost region gets, to cap a num_threads clause;
// 0 = cosched does not steer it (no RM, RM gone, or a nested region).
__attribute__((visibility("default"))) int cosched_team_limit(void) {
  using namespace cosched::rt;
  if (!g_tool.rm_alive.load(std::memory_order_acquire)) return 0;
  if (omp_get_level == nullptr || omp_get_level() != 0) return 0;
  return measure_team_peek(granted_team());
}

__attribute__((visibility("default"))) int cosched_allocation(void) {
  if (!cosched::rt::g_tool.managed.load(std::memory_order_acquire)) return 0;
  return cosched::rt::granted_team();
}

}  // extern "C"
