#include "constructs.hpp"

#include <new>

namespace cosched::rt {

ConstructsShared g_constructs;

void constructs_init(int max_period, int confirm_repeats, int min_matches) noexcept {
  alignas(sa::ConstructStream) static unsigned char storage[sizeof(sa::ConstructStream)];
  g_constructs.stream = new (storage) sa::ConstructStream(max_period, confirm_repeats, min_matches);
  tl_frames.measuring = true;
}

}  // namespace cosched::rt
