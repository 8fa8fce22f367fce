#include "spin_control.hpp"
#include "parked_roots.hpp"
#include "runtime_symbol.hpp"

#include <dlfcn.h>

#include <climits>
#include <cstring>

namespace cosched::rt {
namespace {

using SetBlocktimeFn = void (*)(int);
using GetBlocktimeFn = int (*)();

SetBlocktimeFn g_set_blocktime = nullptr;
GetBlocktimeFn g_get_blocktime = nullptr;

// Per thread: the blocktime ICV is per task, and each thread that begins outermost regions (the initial
// thread, or any root thread of the program) owns its own.
struct SpinState {
  bool lowered;     // this thread's blocktime is ours (0), not the program's
  int saved;        // the value to restore (milliseconds)
  int parked_team;  // the oversubscribed team parked_roots follows for it, 0: none
};
__attribute__((tls_model("initial-exec"))) thread_local SpinState tl_spin = {false, 0, 0};

}  // namespace

void spin_init(void* runtime_handle, bool enabled, bool parked_roots) noexcept {
  if (!enabled) return;
  parked_roots_init(runtime_handle, parked_roots);
  g_set_blocktime = runtime_symbol<SetBlocktimeFn>(runtime_handle, "kmp_set_blocktime");
  g_get_blocktime = runtime_symbol<GetBlocktimeFn>(runtime_handle, "kmp_get_blocktime");
  if (g_set_blocktime == nullptr || g_get_blocktime == nullptr) g_set_blocktime = nullptr;
}

void spin_follow(int team, int granted) noexcept {
  const bool oversubscribed = team > granted;
  if (const int over = oversubscribed ? team : 0; over != tl_spin.parked_team) {
    tl_spin.parked_team = over;
    parked_roots_follow(over);
  }
  if (oversubscribed == tl_spin.lowered || g_set_blocktime == nullptr) return;
  if (oversubscribed) {
    // Read now, not at initialisation: the program may have set its own value since, and the runtime may
    // not be called from inside ompt_initialize.
    const int current = g_get_blocktime();
    // 0: waiting threads already sleep at once. INT_MAX: KMP_BLOCKTIME=infinite / OMP_WAIT_POLICY=active,
    // where libomp spins whatever the ICV says; the user's choice is left alone.
    if (current <= 0 || current == INT_MAX) return;
    tl_spin.saved = current;
    g_set_blocktime(0);
    tl_spin.lowered = true;
  } else {
    g_set_blocktime(tl_spin.saved);
    tl_spin.lowered = false;
  }
}

}  // namespace cosched::rt
