#include "tool_thread.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cerrno>

namespace cosched::rt {

namespace {
// The smallest stack that started a thread here: the static TLS does not change after start-up, so later
// threads (parked roots come and go) start from it instead of failing the same sizes again.
std::atomic<std::size_t> g_fits{0};
}  // namespace

bool start_tool_thread(void* (*fn)(void*), void* arg, std::size_t stack, const char* name) noexcept {
  constexpr std::size_t kMaxStack = std::size_t{64} << 20;  // our choice: far above any static TLS seen
  for (std::size_t size = std::max(stack, g_fits.load(std::memory_order_relaxed)); size <= kMaxStack; size *= 2) {
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return false;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, size);
    pthread_t t;
    const int rc = pthread_create(&t, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    if (rc == 0) {
      if (size > stack) g_fits.store(size, std::memory_order_relaxed);
      pthread_setname_np(t, name);
      return true;
    }
    if (rc != EINVAL) return false;  // EAGAIN, EPERM: no bigger stack helps
  }
  return false;
}

}  // namespace cosched::rt
