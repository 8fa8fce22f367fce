#include "work_state.hpp"

#include <algorithm>

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

__attribute__((noinline)) void work_state_change(ThreadFrames& f, bool working) noexcept {
  f.working = working;
  StateSlot* slot = f.slot;
  if (slot == nullptr) return;
  const std::uint64_t now = coarse_now_ns();
  if (working) {
    f.since_ns = now;
  } else if (now > f.since_ns) {
    f.busy_ns += now - f.since_ns;
  }
  const std::uint32_t q = slot->seq.load(std::memory_order_relaxed);
  slot->seq.store(q + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  slot->busy_ns.store(f.busy_ns, std::memory_order_relaxed);
  slot->since_ns.store(f.since_ns, std::memory_order_relaxed);
  slot->working.store(working ? 1 : 0, std::memory_order_relaxed);
  slot->seq.store(q + 2, std::memory_order_release);
}

std::uint64_t work_state_busy_ns(std::uint64_t now_ns) noexcept {
  const int n = std::min(g_state_slot_count.load(std::memory_order_acquire), kMaxStateSlots);
  std::uint64_t total = 0;
  for (int i = 0; i < n; ++i) {
    const StateSlot& slot = g_state_slots[i];
    // A few tries: a thread changes state at most every few hundred nanoseconds, and the sampler reads
    // between its changes; a thread that keeps the counter odd (it was stopped mid-write) keeps its last total.
    std::uint64_t busy = slot.busy_ns.load(std::memory_order_relaxed);
    for (int attempt = 0; attempt < 4; ++attempt) {
      const std::uint32_t q = slot.seq.load(std::memory_order_acquire);
      if ((q & 1U) != 0) continue;
      busy = slot.busy_ns.load(std::memory_order_relaxed);
      const std::uint64_t since = slot.since_ns.load(std::memory_order_relaxed);
      const bool working = slot.working.load(std::memory_order_relaxed) != 0;
      std::atomic_thread_fence(std::memory_order_acquire);
      if (slot.seq.load(std::memory_order_relaxed) != q) continue;
      if (working && now_ns > since) busy += now_ns - since;
      break;
    }
    total += busy;
  }
  return total;
}

}  // namespace cosched::rt
