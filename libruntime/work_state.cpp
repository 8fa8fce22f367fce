#include "work_state.hpp"

#include <dlfcn.h>

#include <algorithm>

namespace cosched::rt {

StateSlot g_state_slots[kMaxStateSlots];
std::atomic<int> g_state_slot_count{0};
constinit __attribute__((tls_model("initial-exec"))) thread_local ThreadFrames tl_frames;

ClockGettimeFn g_vdso_clock_gettime = nullptr;

void work_state_init() noexcept {
  // Already mapped in every process (RTLD_NOLOAD); glibc names it linux-vdso.so.1 on x86-64.
  void* vdso = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (vdso == nullptr) return;
  auto fn = reinterpret_cast<ClockGettimeFn>(dlsym(vdso, "__vdso_clock_gettime"));
  timespec probe;
  if (fn != nullptr && fn(CLOCK_MONOTONIC_COARSE, &probe) == 0) g_vdso_clock_gettime = fn;
}

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
  const std::uint64_t now = coarse_now_ns() & ~std::uint64_t{1};
  std::uint64_t word;
  if (working) {
    f.since_ns = now;
    word = ((f.busy_ns - now) & ~std::uint64_t{1}) | 1U;
  } else {
    if (now > f.since_ns) f.busy_ns += now - f.since_ns;
    word = f.busy_ns & ~std::uint64_t{1};
  }
  slot->word.store(word, std::memory_order_relaxed);
}

std::uint64_t work_state_busy_ns(std::uint64_t now_ns) noexcept {
  const int n = std::min(g_state_slot_count.load(std::memory_order_acquire), kMaxStateSlots);
  const std::uint64_t now = now_ns & ~std::uint64_t{1};
  std::uint64_t total = 0;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t word = g_state_slots[i].word.load(std::memory_order_relaxed);
    const std::uint64_t value = word & ~std::uint64_t{1};
    // Working: busy − since + now, modulo 2^64. A thread whose open interval began after `now` on another
    // CPU's view of the coarse clock (a tick apart at most) would read as a wrap: counted as its closed time.
    const std::uint64_t busy = (word & 1U) != 0 ? value + now : value;
    total += (word & 1U) != 0 && static_cast<std::int64_t>(busy) < 0 ? 0 : busy;
  }
  return total;
}

}  // namespace cosched::rt
