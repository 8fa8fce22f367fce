#include "rm_client.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <dirent.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cosched/wire.hpp"
#include "tool_state.hpp"
#include "tool_thread.hpp"

namespace cosched::rt {

ToolState g_tool;

namespace {

cpu_set_t g_original_mask;  // the process mask before the RM confined it, restored when the RM goes away

std::string own_command_line() {
  std::string cmd;
  int fd = ::open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "?";
  char buf[proto::kCommandMax];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return "?";
  for (ssize_t i = 0; i < n; ++i) cmd.push_back(buf[i] == '\0' ? ' ' : buf[i]);
  while (!cmd.empty() && cmd.back() == ' ') cmd.pop_back();
  return cmd;
}

void set_mask_of_all_threads(const cpu_set_t& mask) {
  DIR* d = ::opendir("/proc/self/task");
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    pid_t tid = static_cast<pid_t>(std::atoi(e->d_name));
    ::sched_setaffinity(tid, sizeof mask, &mask);  // best effort: a thread may have just exited
  }
  ::closedir(d);
}

// The RM is gone (closed the socket or died): native behaviour from the next region on.
void go_native(const char* why) {
  // A new thread inherits its creator's mask. The masks go back before the native allocation is published,
  // so that a team growing at the next region is started by threads already restored; the second pass
  // catches a thread started during the first one by a thread not yet restored (readdir may miss it).
  set_mask_of_all_threads(g_original_mask);
  g_tool.native_alloc.store(g_tool.request, std::memory_order_relaxed);
  g_tool.alloc_src.store(&g_tool.native_alloc, std::memory_order_release);
  g_tool.rm_alive.store(false, std::memory_order_release);
  set_mask_of_all_threads(g_original_mask);
  warn(g_tool.quiet, "%s; continuing natively with %d threads", why, g_tool.request);
}

void* watcher_main(void*) {
  // Never let a signal meant for the program land on this thread.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  // No receive timeout here: this thread only waits for the RM to go away.
  timeval none{0, 0};
  ::setsockopt(g_tool.rm_fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
  for (;;) {
    wire::Frame f;
    auto st = wire::recv_frame(g_tool.rm_fd, f, proto::kMaxRequestPayload);
    if (f.passed_fd >= 0) ::close(f.passed_fd);
    if (st == wire::RecvStatus::ok) continue;  // no RM → job messages defined yet; ignore
    if (st == wire::RecvStatus::error && errno == EINTR) continue;
    break;
  }
  if (g_tool.rm_alive.load(std::memory_order_acquire)) go_native("the resource manager went away");
  return nullptr;
}

bool validate_arena(const proto::Arena* a, std::uint32_t job_id) {
  return a->header.magic == proto::kMagic && a->header.version == proto::kVersion &&
         a->header.arena_size == proto::kArenaSize && a->header.job_id == job_id;
}

bool register_once(const Options& opt, bool explicit_api);

// Registration's outcome, also read by the report at exit (exit/exit_report.cpp).
std::atomic<int> g_registration{0};  // 0 never tried, 1 registered, 2 failed (native)

}  // namespace

bool rm_register(const Options& opt, bool explicit_api) {
  // Once per process: the OpenMP tool and the MPI wrappers (MPI_Init) both call this, whichever comes first;
  // the second finds the registration in place.
  if (int s = g_registration.load(std::memory_order_acquire); s != 0) return s == 1;
  const bool ok = register_once(opt, explicit_api);
  g_registration.store(ok ? 1 : 2, std::memory_order_release);
  return ok;
}

Registration rm_registration() {
  switch (g_registration.load(std::memory_order_acquire)) {
    case 1: return Registration::registered;
    case 2: return Registration::failed;
    default: return Registration::never_tried;
  }
}

namespace {

bool register_once(const Options& opt, bool explicit_api) {
  g_tool.request = opt.request;
  g_tool.quiet = opt.quiet;
  g_tool.explicit_api = explicit_api;
  CPU_ZERO(&g_original_mask);
  ::sched_getaffinity(0, sizeof g_original_mask, &g_original_mask);

  std::string err;
  int fd = wire::connect_unix(opt.socket, opt.connect_timeout_ms, err);
  if (fd < 0) {
    warn(opt.quiet, "no resource manager (%s); running natively", err.c_str());
    return false;
  }
  proto::RegisterBody body{};
  body.request = opt.request;
  body.flags = explicit_api ? std::uint32_t{proto::reg_explicit_api} : 0U;
  if (std::getenv("COSCHED_GOMP") != nullptr) body.flags |= proto::reg_gomp;
  std::string cmd = own_command_line();
  std::strncpy(body.command, cmd.c_str(), sizeof body.command - 1);

  // A process of a job of several (an MPI rank) names the job, so the RM makes all of them one gang.
  proto::RegisterRankBody rank_body{};
  rank_body.base = body;
  std::strncpy(rank_body.job_key, opt.job_key.c_str(), sizeof rank_body.job_key - 1);
  rank_body.rank = opt.rank;
  rank_body.local_ranks = opt.local_ranks;
  const bool is_rank = !opt.job_key.empty();

  wire::Frame reply;
  wire::RecvStatus st = wire::RecvStatus::error;
  if (is_rank ? wire::send_frame(fd, proto::MsgType::register_rank, &rank_body, sizeof rank_body)
              : wire::send_frame(fd, proto::MsgType::register_job, &body, sizeof body)) {
    st = wire::recv_frame(fd, reply, proto::kMaxRequestPayload);
  }
  auto fail = [&](const std::string& why) {
    if (reply.passed_fd >= 0) ::close(reply.passed_fd);
    ::close(fd);
    warn(opt.quiet, "resource manager at %s: %s; running natively", opt.socket.c_str(), why.c_str());
    return false;
  };
  if (st != wire::RecvStatus::ok) return fail(std::string("no registration reply: ") + wire::to_string(st));
  if (reply.type == proto::MsgType::refused) return fail("refused: " + reply.payload);
  proto::RegisterOkBody ok{};
  if (reply.type != proto::MsgType::register_ok || reply.payload.size() != sizeof ok || reply.passed_fd < 0) {
    return fail("malformed registration reply");
  }
  std::memcpy(&ok, reply.payload.data(), sizeof ok);
  if (ok.arena_size != proto::kArenaSize) return fail("arena size mismatch");
  void* p = ::mmap(nullptr, proto::kArenaSize, PROT_READ | PROT_WRITE, MAP_SHARED, reply.passed_fd, 0);
  ::close(reply.passed_fd);
  reply.passed_fd = -1;
  if (p == MAP_FAILED) return fail(std::string("cannot map arena: ") + std::strerror(errno));
  auto* arena = static_cast<proto::Arena*>(p);
  if (!validate_arena(arena, ok.job_id)) {
    ::munmap(p, proto::kArenaSize);
    return fail("arena magic/version mismatch");
  }
  g_tool.arena = arena;
  g_tool.rm_fd = fd;
  g_tool.job_id = ok.job_id;
  g_tool.alloc_src.store(&arena->rm.allocation, std::memory_order_release);
  g_tool.rm_alive.store(true, std::memory_order_release);
  g_tool.managed.store(true, std::memory_order_release);
  return true;
}

}  // namespace

void rm_start_watcher() {
  static std::atomic<bool> started{false};
  if (started.exchange(true)) return;  // the OpenMP tool and the MPI wrappers may both ask
  if (!start_tool_thread(watcher_main, nullptr, 64 * 1024, "cosched-watcher")) {
    warn(g_tool.quiet, "cannot start the RM watcher thread; running natively");
    go_native("no watcher thread");
  }
}

void apply_arena_mask_to_self() {
  proto::Arena* a = g_tool.arena;
  if (a == nullptr || !g_tool.rm_alive.load(std::memory_order_acquire)) return;
  if ((a->rm.flags.load(std::memory_order_relaxed) & proto::rm_apply_mask) == 0) return;
  cpu_set_t set;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::uint32_t s0 = a->rm.seq.load(std::memory_order_acquire);
    if (s0 & 1U) continue;
    CPU_ZERO(&set);
    for (int w = 0; w < proto::kMaskWords; ++w) {
      std::uint64_t bits = a->rm.cpu_mask[w].load(std::memory_order_relaxed);
      for (int b = 0; b < 64 && bits != 0; ++b, bits >>= 1) {
        if ((bits & 1U) != 0 && w * 64 + b < CPU_SETSIZE) CPU_SET(w * 64 + b, &set);
      }
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    if (a->rm.seq.load(std::memory_order_relaxed) == s0) {
      if (CPU_COUNT(&set) > 0) ::sched_setaffinity(0, sizeof set, &set);
      return;
    }
  }
}

void rm_disconnect() {
  if (g_tool.rm_fd >= 0) {
    g_tool.rm_alive.store(false, std::memory_order_release);
    ::shutdown(g_tool.rm_fd, SHUT_RDWR);
  }
}

}  // namespace cosched::rt
