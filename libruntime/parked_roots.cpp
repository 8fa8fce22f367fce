#include "parked_roots.hpp"
#include "runtime_symbol.hpp"
#include "tool_thread.hpp"
#include "tool_state.hpp"
#include "work_state.hpp"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdlib>

namespace cosched::rt {
namespace {

using GlobalThreadNumFn = int (*)(void*);
using NumProcsFn = int (*)();

GlobalThreadNumFn g_register_root = nullptr;
NumProcsFn g_num_procs = nullptr;

// Our choice: the most parked threads a job keeps, whatever its machine (each is a sleeping thread with a
// small stack and libomp's root bookkeeping); a team of 2 narrowed to 1 CPU of a 256-CPU machine needs 255.
constexpr int kMaxParked = 256;
constexpr std::size_t kParkedStack = 256 * 1024;  // registration runs libomp's and the tools' callbacks
// Our choice: how often the keeper looks at the team the region's thread stored. The region's path makes no
// syscall, so nothing wakes the keeper; 20 ms is a fifth of the RM's default quantum, at which grants change.
constexpr long kKeeperPollNs = 20'000'000;

std::atomic<int> g_team{0};    // the oversubscribed team, 0: not oversubscribed (stored by the region's thread)
std::atomic<int> g_procs{0};   // libomp's processors, read by the region's thread (see parked_roots_follow)
std::atomic<int> g_alive{0};   // parked threads started and not yet leaving
std::atomic<int> g_wanted{0};  // parked threads the keeper last asked for
std::atomic<int> g_seq{0};     // futex word of the parked threads: changes with every new count and departure

void futex_wait(std::atomic<int>& word, int seen, const timespec* timeout) {
  ::syscall(SYS_futex, reinterpret_cast<int*>(&word), FUTEX_WAIT_PRIVATE, seen, timeout, nullptr, 0);
}

void wake_all() {
  g_seq.fetch_add(1, std::memory_order_acq_rel);
  ::syscall(SYS_futex, reinterpret_cast<int*>(&g_seq), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

void block_signals() {
  // Never let a signal meant for the program land on these threads.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
}

void* parked_main(void* arg) {
  const int index = static_cast<int>(reinterpret_cast<std::intptr_t>(arg));
  block_signals();
  work_state_exclude_self();  // libomp registers it as a root, but it only sleeps: never counted as working
  g_register_root(nullptr);  // libomp registers this thread as a root: one more thread in its count
  for (;;) {
    const int seen = g_seq.load(std::memory_order_acquire);
    if (index >= g_wanted.load(std::memory_order_acquire)) break;
    futex_wait(g_seq, seen, nullptr);
  }
  g_alive.fetch_sub(1, std::memory_order_acq_rel);
  wake_all();
  return nullptr;  // thread exit: libomp's thread-specific destructor unregisters the root
}

// Whether the RM placed another running job on some of this job's CPUs (proto::rm_cpus_shared). Then a
// waiter that yields hands its CPU to that job's thread for a whole scheduler slice at every barrier, where
// one that sleeps on a futex is woken at once: a team of 2 on 1 CPU beside a CPU-bound job took 13.9 s with
// parked roots against 0.26 s without (20 steps of team-patterns steps; 0.08 s with one thread; Linux 6.18,
// docs/performance.md "Oversubscribed regions beside another job"). A flag the RM no longer keeps (it
// died) counts as not shared.
bool cpus_shared() {
  const proto::Arena* arena = g_tool.arena;
  if (arena == nullptr || !g_tool.rm_alive.load(std::memory_order_acquire)) return false;
  return (arena->rm.flags.load(std::memory_order_acquire) & proto::rm_cpus_shared) != 0;
}

// Never calls into libomp: one more root of its own would keep libomp oversubscribed for good.
void* keeper_main(void*) {
  block_signals();
  const timespec poll{0, kKeeperPollNs};
  for (;;) {
    const int seen = g_seq.load(std::memory_order_acquire);
    const int team = g_team.load(std::memory_order_acquire);
    const int procs = g_procs.load(std::memory_order_acquire);
    // libomp counts the initial thread and the team's workers: team threads in use. One more than its
    // processors makes it yield; on CPUs shared with another job it must sleep instead (cpus_shared).
    const bool park = team > 0 && procs > 0 && !cpus_shared();
    const int wanted = park ? std::clamp(procs - team + 1, 0, kMaxParked) : 0;
    if (g_wanted.exchange(wanted, std::memory_order_acq_rel) != wanted) {
      wake_all();  // those past the new count leave
      continue;
    }
    const int alive = g_alive.load(std::memory_order_acquire);
    if (alive < wanted) {
      g_alive.fetch_add(1, std::memory_order_acq_rel);
      if (!start_tool_thread(parked_main, reinterpret_cast<void*>(static_cast<std::intptr_t>(alive)), kParkedStack,
                          "cosched-parked")) {
        g_alive.fetch_sub(1, std::memory_order_acq_rel);
        return nullptr;  // no more threads: libomp keeps its own view, as without us
      }
      continue;
    }
    futex_wait(g_seq, seen, &poll);
  }
}

}  // namespace

void parked_roots_init(void* runtime_handle, bool enabled) noexcept {
  if (!enabled) return;
  if (std::getenv("KMP_DEVICE_THREAD_LIMIT") != nullptr || std::getenv("KMP_ALL_THREADS") != nullptr) return;
  g_register_root = runtime_symbol<GlobalThreadNumFn>(runtime_handle, "__kmpc_global_thread_num");
  g_num_procs = runtime_symbol<NumProcsFn>(runtime_handle, "omp_get_num_procs");
  if (g_register_root == nullptr || g_num_procs == nullptr) return;
  if (!start_tool_thread(keeper_main, nullptr, 64 * 1024, "cosched-keeper")) g_register_root = nullptr;
}

void parked_roots_follow(int oversubscribed_team) noexcept {
  if (g_register_root == nullptr) return;
  // omp_get_num_procs returns the count libomp found at start-up (no syscall); read here, by a thread libomp
  // knows, once the runtime is initialised, because the keeper must not call into it.
  if (oversubscribed_team > 0 && g_procs.load(std::memory_order_relaxed) == 0) {
    g_procs.store(g_num_procs(), std::memory_order_release);
  }
  g_team.store(std::max(oversubscribed_team, 0), std::memory_order_release);
}

}  // namespace cosched::rt
