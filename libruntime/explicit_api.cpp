// The explicit SelfAnalyzer API (include/cosched/selfanalyzer.h) for relinked codes.
#include "cosched/selfanalyzer.h"

#include "measure.hpp"
#include "tool_state.hpp"

extern "C" {

__attribute__((visibility("default"))) void cosched_iter_begin(long id) { cosched::rt::measure_iteration_begin(id); }
__attribute__((visibility("default"))) void cosched_iter_end(long id) { cosched::rt::measure_iteration_end(id); }
__attribute__((visibility("default"))) void cosched_iter_begin_(const long* id) { cosched_iter_begin(id != nullptr ? *id : 0); }
__attribute__((visibility("default"))) void cosched_iter_end_(const long* id) { cosched_iter_end(id != nullptr ? *id : 0); }

__attribute__((visibility("default"))) int cosched_allocation(void) {
  if (!cosched::rt::g_tool.managed.load(std::memory_order_acquire)) return 0;
  return cosched::rt::granted_team();
}

}  // extern "C"
