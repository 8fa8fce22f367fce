// Process-wide state of the libcosched OMPT tool. One instance (g_tool), written during initialisation and
// by the RM watcher thread, read by the OMPT callbacks. The hot path (outermost parallel-region begin) reads
// it with relaxed atomic loads only: no syscall, no lock, no allocation.
#pragma once

#include <atomic>
#include <cstdint>

#include "cosched/protocol.hpp"

namespace cosched::rt {

struct ToolState {
  // Where the granted team size comes from: the arena's RM block while the RM lives, `native_alloc` once
  // the job runs natively again (RM gone). Swapped by the watcher thread, read on the hot path.
  std::atomic<const std::atomic<std::int32_t>*> alloc_src{nullptr};
  std::atomic<std::int32_t> native_alloc{0};

  std::atomic<bool> managed{false};  // registered with an RM (the tool acts at all)
  std::atomic<bool> rm_alive{false};

  proto::Arena* arena = nullptr;     // mapped shared with the RM; stays mapped after the RM dies
  int rm_fd = -1;
  std::uint32_t job_id = 0;
  int request = 1;                   // CPUs asked for (also the native team size)
  bool quiet = false;                // COSCHED_QUIET=1
  bool explicit_api = false;         // the program calls cosched_iter_begin/end
};

extern ToolState g_tool;

// The team size the RM grants right now (hot path: two relaxed loads).
inline int granted_team() noexcept {
  const auto* src = g_tool.alloc_src.load(std::memory_order_acquire);
  if (src != nullptr) [[likely]] return src->load(std::memory_order_relaxed);
  return g_tool.request;
}

}  // namespace cosched::rt
