#include "work_state.hpp"

namespace cosched::rt {

StateSlot g_state_slots[kMaxStateSlots];
std::atomic<int> g_state_slot_count{0};
constinit __attribute__((tls_model("initial-exec"))) thread_local ThreadFrames tl_frames;

void work_state_add_self(bool root) noexcept {
  ThreadFrames& f = tl_frames;
  if (f.excluded || f.slot != nullptr) return;
  f.base = root ? 1 : 0;
  f.depth = f.base;
  f.waits = 0;
  f.working = false;
  const int slot = g_state_slot_count.fetch_add(1, std::memory_order_relaxed);
  if (slot < kMaxStateSlots) f.slot = &g_state_slots[slot];
  work_state_apply(f);
}

}  // namespace cosched::rt
