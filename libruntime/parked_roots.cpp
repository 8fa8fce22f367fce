#include "parked_roots.hpp"
#include "runtime_symbol.hpp"

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

std::atomic<int> g_team{0};      // the oversubscribed team, 0: not oversubscribed
std::atomic<int> g_alive{0};     // parked threads started and not yet leaving
std::atomic<int> g_wanted{0};    // parked threads the keeper last asked for
std::atomic<int> g_seq{0};       // futex word: changes with every request and every departure
std::atomic<bool> g_keeper{false};
// libomp's processors (omp_get_num_procs: the count it found at start-up), read by the thread that begins
// the first oversubscribed region: a thread libomp knows already, never the keeper, which must stay unknown
// to it (one more root of its own would keep libomp oversubscribed for good).
std::atomic<int> g_procs{0};

void futex_wait(std::atomic<int>& word, int seen) {
  ::syscall(SYS_futex, reinterpret_cast<int*>(&word), FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr, 0);
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
  g_register_root(nullptr);  // libomp registers this thread as a root: one more thread in its count
  for (;;) {
    const int seen = g_seq.load(std::memory_order_acquire);
    if (index >= g_wanted.load(std::memory_order_acquire)) break;
    futex_wait(g_seq, seen);
  }
  g_alive.fetch_sub(1, std::memory_order_acq_rel);
  wake_all();
  return nullptr;  // thread exit: libomp's thread-specific destructor unregisters the root
}

bool start_parked(int index) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, kParkedStack);
  pthread_t t;
  const bool ok = pthread_create(&t, &attr, parked_main, reinterpret_cast<void*>(static_cast<std::intptr_t>(index))) == 0;
  pthread_attr_destroy(&attr);
  if (ok) pthread_setname_np(t, "cosched-parked");
  return ok;
}

void* keeper_main(void*) {
  block_signals();
  const int procs = g_procs.load(std::memory_order_acquire);
  for (;;) {
    const int seen = g_seq.load(std::memory_order_acquire);
    const int team = g_team.load(std::memory_order_acquire);
    // libomp counts the initial thread and the team's workers: team threads in use. One more than its
    // processors makes it yield.
    const int wanted = team > 0 ? std::clamp(procs - team + 1, 0, kMaxParked) : 0;
    if (g_wanted.exchange(wanted, std::memory_order_acq_rel) != wanted) {
      wake_all();  // those past the new count leave
      continue;
    }
    const int alive = g_alive.load(std::memory_order_acquire);
    if (alive < wanted) {
      g_alive.fetch_add(1, std::memory_order_acq_rel);
      if (!start_parked(alive)) {
        g_alive.fetch_sub(1, std::memory_order_acq_rel);
        return nullptr;  // no more threads: libomp keeps its own view, as without us
      }
      continue;
    }
    futex_wait(g_seq, seen);
  }
}

void forget_in_child() {
  // fork(): the child has none of these threads; it starts its own keeper if it ever needs one.
  g_keeper.store(false, std::memory_order_relaxed);
  g_alive.store(0, std::memory_order_relaxed);
  g_wanted.store(0, std::memory_order_relaxed);
  g_team.store(0, std::memory_order_relaxed);
}

}  // namespace

void parked_roots_init(void* runtime_handle, bool enabled) noexcept {
  if (!enabled) return;
  if (std::getenv("KMP_DEVICE_THREAD_LIMIT") != nullptr || std::getenv("KMP_ALL_THREADS") != nullptr) return;
  g_register_root = runtime_symbol<GlobalThreadNumFn>(runtime_handle, "__kmpc_global_thread_num");
  g_num_procs = runtime_symbol<NumProcsFn>(runtime_handle, "omp_get_num_procs");
  if (g_num_procs == nullptr) g_register_root = nullptr;
  if (g_register_root != nullptr) pthread_atfork(nullptr, nullptr, forget_in_child);
}

void parked_roots_follow(int oversubscribed_team) noexcept {
  if (g_register_root == nullptr) return;
  g_team.store(std::max(oversubscribed_team, 0), std::memory_order_release);
  if (!g_keeper.load(std::memory_order_acquire)) {
    if (oversubscribed_team <= 0) return;  // nothing parked yet
    if (g_keeper.exchange(true, std::memory_order_acq_rel)) {  // another root thread starts it
      wake_all();
      return;
    }
    g_procs.store(g_num_procs(), std::memory_order_release);  // before the keeper exists
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_t t;
    if (pthread_create(&t, &attr, keeper_main, nullptr) == 0) pthread_setname_np(t, "cosched-keeper");
    pthread_attr_destroy(&attr);
    return;
  }
  wake_all();
}

}  // namespace cosched::rt
