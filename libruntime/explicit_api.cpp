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

// App-reported memory traffic (sensors/app_reported.cpp reads it). Any thread; one atomic add into the
// arena, nothing else (the arena stays mapped after the RM dies, so no check beyond `managed` is needed).
__attribute__((visibility("default"))) void cosched_report_bytes(uint64_t bytes) {
  if (!cosched::rt::g_tool.managed.load(std::memory_order_acquire)) return;
  auto& s = cosched::rt::g_tool.arena->sensors;
  s.bytes.fetch_add(bytes, std::memory_order_relaxed);
  if (s.reports_bytes.load(std::memory_order_relaxed) == 0) s.reports_bytes.store(1, std::memory_order_relaxed);
}
__attribute__((visibility("default"))) void cosched_report_bytes_(const uint64_t* bytes) {
  cosched_report_bytes(bytes != nullptr ? *bytes : 0);
}

// App-reported work (the co-scheduling policies' progress rate, rm/daemon/sensing.cpp reads it): as above.
__attribute__((visibility("default"))) void cosched_report_work(uint64_t units) {
  if (!cosched::rt::g_tool.managed.load(std::memory_order_acquire)) return;
  auto& s = cosched::rt::g_tool.arena->sensors;
  s.work.fetch_add(units, std::memory_order_relaxed);
  if (s.reports_work.load(std::memory_order_relaxed) == 0) s.reports_work.store(1, std::memory_order_relaxed);
}
__attribute__((visibility("default"))) void cosched_report_work_(const uint64_t* units) {
  cosched_report_work(units != nullptr ? *units : 0);
}

}  // extern "C"
