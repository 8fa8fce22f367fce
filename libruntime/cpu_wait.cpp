#include "cpu_wait.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "selfanalyzer/analyzer.hpp"

namespace cosched::rt {
namespace {

constexpr int kMaxThreads = 256;  // threads followed; later ones are not (their waits are left out)

std::atomic<int> g_count{0};
std::atomic<int> g_fds[kMaxThreads];
std::atomic<bool> g_oversubscribed{false};

// The second field of a schedstat line ("run_ns wait_ns slices"); false when the thread is gone.
bool read_wait(int fd, std::uint64_t& out) {
  char buf[96];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return false;
  buf[n] = '\0';
  char* end = nullptr;
  std::strtoull(buf, &end, 10);
  if (end == buf) return false;
  char* end2 = nullptr;
  out = std::strtoull(end, &end2, 10);
  return end2 != end;
}

}  // namespace

void cpu_wait_add_self() noexcept {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%ld/schedstat", static_cast<long>(::syscall(SYS_gettid)));
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  const int slot = g_count.fetch_add(1, std::memory_order_relaxed);
  if (slot >= kMaxThreads) {
    ::close(fd);
    return;
  }
  g_fds[slot].store(fd, std::memory_order_release);
}

void cpu_wait_set_oversubscribed(bool oversubscribed) noexcept {
  g_oversubscribed.store(oversubscribed, std::memory_order_relaxed);
}

std::uint64_t cpu_wait_ns() noexcept {
  if (g_oversubscribed.load(std::memory_order_relaxed)) return sa::kWaitUnknown;
  const int n = std::min(g_count.load(std::memory_order_acquire), kMaxThreads);
  std::uint64_t total = 0;
  bool any = false;
  for (int i = 0; i < n; ++i) {
    const int fd = g_fds[i].load(std::memory_order_acquire);
    if (fd <= 0) continue;  // not published yet (0), or gone (-1)
    std::uint64_t w = 0;
    if (read_wait(fd, w)) {
      total += w;
      any = true;
    }
  }
  // A thread that exited takes its waits with it; the Analyzer treats a total that went down as unknown.
  return any ? total : sa::kWaitUnknown;
}

}  // namespace cosched::rt
