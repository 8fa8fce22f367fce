#include "constructs.hpp"

#include <new>

namespace cosched::rt {

ConstructsShared g_constructs;

void constructs_init(int max_period, int confirm_repeats, int min_matches) noexcept {
  alignas(sa::ConstructStream) static unsigned char storage[sizeof(sa::ConstructStream)];
  g_constructs.stream = new (storage) sa::ConstructStream(max_period, confirm_repeats, min_matches);
  tl_frames.measuring = true;
}

__attribute__((noinline)) void construct_in_long_region(const void* codeptr) noexcept {
  sa::ConstructStream& s = *g_constructs.stream;
  const std::uint64_t before = s.iterations();
  s.on_long_region_construct(reinterpret_cast<std::uintptr_t>(codeptr));
  if (s.iterations() != before) g_constructs.iterations.store(s.iterations(), std::memory_order_relaxed);
  if (s.period() != g_constructs.published_period) {
    g_constructs.published_period = s.period();
    g_constructs.period.store(s.period(), std::memory_order_relaxed);
  }
}

}  // namespace cosched::rt
