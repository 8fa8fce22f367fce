#include "team_control.hpp"

#include <dlfcn.h>
#include <link.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "measure.hpp"
#include "spin_control.hpp"
#include "tool_state.hpp"
#include "runtime_symbol.hpp"

#pragma weak omp_get_level

namespace cosched::rt {
namespace {

using SetIntFn = void (*)(int);
using GetIntFn = int (*)();

// The OpenMP runtime's own entry points (never the interposers in libcosched_wrap).
SetIntFn g_real_set_num_threads = nullptr;
GetIntFn g_real_get_max_threads = nullptr;
SetIntFn g_real_set_dynamic = nullptr;

std::atomic<bool> g_active{false};          // registered with an RM: cosched steers teams at all
std::atomic<bool> g_interposed{false};      // libcosched_wrap announced itself
std::atomic<bool> g_started{false};         // the program's nthreads-var has been captured
std::atomic<int> g_program_nthreads{0};     // nthreads-var as the program knows it (its value, never ours)
std::atomic<bool> g_program_dynamic{false}; // dyn-var as the program knows it
std::atomic<int> g_latched{0};              // a team size the program read since the last region (0: none)
std::atomic<bool> g_first_region{true};      // no outermost region has begun yet
std::atomic<std::uint32_t> g_mode{static_cast<std::uint32_t>(proto::TeamMode::unknown)};
// team_floor() of the current mode and program value, kept up to date where either changes: the hot path
// reads one word instead of deriving it per region.
std::atomic<int> g_floor{1};

// Causes that fix the team, set once and never cleared (the mode is derived from them: team_mode()).
std::atomic<bool> g_fixed_by_user{false};
std::atomic<bool> g_threadprivate{false};
std::atomic<bool> g_set_by_program{false};
std::atomic<bool> g_clause{false};
bool g_user_malleable = false;  // cosched-run --malleable (COSCHED_TEAM=malleable)

// Bumped (after their stores) by every hook below that changes what team_for_region depends on: the mode and
// its causes, the program's values, the floor, a latched read, a clause. A thread whose last team_for_region
// saw the same count, and nothing one-shot (a latch, a clause, the first region), would get the same team
// again without side effects: team_for_region_again.
std::atomic<std::uint64_t> g_epoch{0};
void bump_epoch() { g_epoch.fetch_add(1, std::memory_order_release); }

// This thread's last team_for_region when it may be repeated: the epoch it began at, the wish it was given
// and the team it returned (0: it may not be).
struct Repeat {
  std::uint64_t epoch;
  int wanted;
  int team;
};
__attribute__((tls_model("initial-exec"))) thread_local Repeat tl_repeat = {0, 0, 0};

// nthreads-var of this thread as cosched left it: 0 = untouched (it holds the program's value).
__attribute__((tls_model("initial-exec"))) thread_local int tl_icv = 0;
// The num_threads clause of the region this thread is about to begin (0: none).
__attribute__((tls_model("initial-exec"))) thread_local int tl_clause = 0;

bool is_fixed(proto::TeamMode m) {
  return m != proto::TeamMode::resizable && m != proto::TeamMode::malleable && m != proto::TeamMode::unknown;
}

proto::TeamMode derive_mode() {
  using M = proto::TeamMode;
  if (g_fixed_by_user.load(std::memory_order_relaxed)) return M::fixed_by_user;
  // Dynamic adjustment (opted in by the user or turned on by the program itself): the OpenMP spec then
  // promises neither team sizes nor threadprivate persistence, so every region may be resized.
  if (g_program_dynamic.load(std::memory_order_relaxed)) return M::malleable;
  if (g_threadprivate.load(std::memory_order_relaxed)) return M::threadprivate;
  if (g_set_by_program.load(std::memory_order_relaxed)) return M::set_by_program;
  if (g_clause.load(std::memory_order_relaxed)) return M::clause;
  if (!g_interposed.load(std::memory_order_relaxed)) return M::no_interposer;
  return M::resizable;
}

void refresh_floor() {
  const int v = std::max(1, g_program_nthreads.load(std::memory_order_relaxed));
  const auto m = static_cast<proto::TeamMode>(g_mode.load(std::memory_order_relaxed));
  int floor = std::min(2, v);
  if (m == proto::TeamMode::malleable) floor = 1;
  else if (is_fixed(m)) floor = v;
  g_floor.store(floor, std::memory_order_relaxed);
}

void update_mode() {
  const auto m = derive_mode();
  const auto before = g_mode.exchange(static_cast<std::uint32_t>(m), std::memory_order_relaxed);
  refresh_floor();
  if (g_tool.arena != nullptr) g_tool.arena->job.team_mode.store(static_cast<std::int32_t>(m), std::memory_order_relaxed);
  if (before != static_cast<std::uint32_t>(m) && before != static_cast<std::uint32_t>(proto::TeamMode::unknown) &&
      std::getenv("COSCHED_DEBUG") != nullptr) {
    warn(g_tool.quiet, "job %u: team mode %s", g_tool.job_id, proto::team_mode_name(m));
  }
}

bool env_true(const char* name) {
  const char* s = std::getenv(name);
  if (s == nullptr) return false;
  return std::strcmp(s, "1") == 0 || strcasecmp(s, "true") == 0 || strcasecmp(s, "yes") == 0;
}

// The program's executable carries thread-local storage: threadprivate variables (gcc always, clang by
// default) live there, and a later region of another size would see other threads' stale copies.
int find_tls(dl_phdr_info* info, size_t, void* out) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type == PT_TLS) *static_cast<bool*>(out) = true;
  }
  return 1;  // the first entry is the executable itself: stop there
}

// Captures the program's nthreads-var before cosched ever changes it, and keeps libomp's own dynamic
// adjustment off: the RM decides team sizes, and libomp's load-based cuts would fight it. Runs once, on
// the first read, request or region, in program context (never inside ompt_initialize).
void ensure_started() {
  if (g_started.load(std::memory_order_acquire)) return;
  if (g_started.exchange(true, std::memory_order_acq_rel)) return;
  if (g_real_get_max_threads != nullptr) g_program_nthreads.store(std::max(1, g_real_get_max_threads()), std::memory_order_relaxed);
  refresh_floor();
  if (g_real_set_dynamic != nullptr) g_real_set_dynamic(0);
  bump_epoch();
}

// The team a malleable job's next region would get: what a read returns (and then latches).
int malleable_choice() { return measure_wanted_peek(granted_team()); }

}  // namespace

proto::TeamMode team_mode() noexcept { return static_cast<proto::TeamMode>(g_mode.load(std::memory_order_relaxed)); }

void team_init(const Options& opt, void* lookup_fn) {
  // The runtime's library, found from a function it gave us: dlsym on its handle starts the search there,
  // past LD_PRELOAD'ed interposers.
  Dl_info info{};
  void* handle = nullptr;
  if (lookup_fn != nullptr && dladdr(lookup_fn, &info) != 0 && info.dli_fname != nullptr) {
    handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  }
  g_real_set_num_threads = runtime_symbol<SetIntFn>(handle, "omp_set_num_threads");
  g_real_get_max_threads = runtime_symbol<GetIntFn>(handle, "omp_get_max_threads");
  g_real_set_dynamic = runtime_symbol<SetIntFn>(handle, "omp_set_dynamic");
  spin_init(handle, opt.oversubscribed_yield, opt.parked_roots);
  // The handle stays open for the life of the process (the runtime is never unloaded before us).

  g_user_malleable = opt.team == TeamOption::malleable;
  g_fixed_by_user.store(opt.team == TeamOption::fixed, std::memory_order_relaxed);
  g_program_dynamic.store(g_user_malleable || env_true("OMP_DYNAMIC"), std::memory_order_relaxed);
  bool tls = env_true("COSCHED_THREADPRIVATE");  // cosched-run found __kmpc_threadprivate* imports
  dl_iterate_phdr(&find_tls, &tls);
  g_threadprivate.store(tls, std::memory_order_relaxed);
  g_active.store(g_real_set_num_threads != nullptr && g_real_get_max_threads != nullptr, std::memory_order_release);
  if (!g_active.load(std::memory_order_relaxed)) {
    warn(opt.quiet, "cannot find the OpenMP runtime's omp_set_num_threads; team sizes are left to the program");
    g_fixed_by_user.store(true, std::memory_order_relaxed);
  }
  update_mode();
}

int team_floor() noexcept { return g_floor.load(std::memory_order_relaxed); }

int team_for_region_again(int wanted) noexcept {
  const Repeat& r = tl_repeat;
  return r.epoch == g_epoch.load(std::memory_order_acquire) && r.wanted == wanted ? r.team : 0;
}

int team_for_region(int wanted) noexcept {
  if (!g_started.load(std::memory_order_acquire)) ensure_started();  // first region only
  // Read before anything it covers: a hook that runs from here on leaves the cache stale, never wrong.
  const std::uint64_t epoch = g_epoch.load(std::memory_order_acquire);
  tl_repeat.team = 0;
  const int clause = tl_clause;
  tl_clause = 0;
  const int v = std::max(1, g_program_nthreads.load(std::memory_order_relaxed));
  const auto m = team_mode();
  const bool first = g_first_region.load(std::memory_order_relaxed);
  if (first) g_first_region.store(false, std::memory_order_relaxed);
  if (!g_active.load(std::memory_order_relaxed) || is_fixed(m)) {
    // The program's team: hand nthreads-var back if cosched had changed it on this thread.
    if (tl_icv != 0 && g_real_set_num_threads != nullptr) {
      g_real_set_num_threads(v);
      tl_icv = 0;
    }
    if (clause > 0) return clause;
    tl_repeat = Repeat{epoch, wanted, v};  // again: v, nthreads-var already v
    return v;
  }
  int team;
  const int latched = g_latched.load(std::memory_order_relaxed);
  const bool once = latched != 0 || first || clause > 0;  // inputs the next region will not see again
  if (latched != 0) {
    g_latched.store(0, std::memory_order_relaxed);
    team = latched;  // rule 2: the region after a read gets exactly the value read
  } else if (first) {
    // The first region runs with the program's own value, whatever the grant: a job that is one long
    // region (EP) would otherwise keep, for its whole life, the one CPU that happened to be free when it
    // arrived. Its threads share the CPUs it holds until the RM grows its cpuset (docs/policies.md).
    team = v;
  } else {
    const int lo = m == proto::TeamMode::malleable ? 1 : std::min(2, v);  // rule 7
    team = std::clamp(wanted, lo, v);                                      // rule 1: never above v
  }
  const int icv = tl_icv != 0 ? tl_icv : v;
  if (team != icv) {
    g_real_set_num_threads(team);
    tl_icv = team == v ? 0 : team;
  }
  // again: the same clamp of the same wish, nthreads-var now equal to it (no call)
  if (!once) tl_repeat = Repeat{epoch, wanted, team};
  return clause > 0 ? clause : team;  // (a clause here is malleable's, already lowered by the wrapper)
}

}  // namespace cosched::rt

// --- called by libcosched_wrap's interposers (wrappers/team_size.c) --------------------------------------

extern "C" {

__attribute__((visibility("default"))) void cosched_team_interposed(void) {
  using namespace cosched::rt;
  g_interposed.store(true, std::memory_order_relaxed);
  if (g_active.load(std::memory_order_acquire)) update_mode();
  bump_epoch();
}

// omp_get_max_threads() returned `real` to the program: what the program should see instead.
__attribute__((visibility("default"))) int cosched_team_read(int real) {
  using namespace cosched::rt;
  if (!g_active.load(std::memory_order_acquire)) return real;
  ensure_started();
  if (omp_get_level() != 0) return real;  // inside a region: the team's own nthreads-var, consistent with it
  const int v = std::max(1, g_program_nthreads.load(std::memory_order_relaxed));
  const auto m = team_mode();
  if (is_fixed(m)) return tl_icv != 0 ? v : real;
  int value = v;  // rule 1: serial code sees the program's value, never the grant
  // Malleable: the team the next region will get (the program's value for the very first region).
  if (m == cosched::proto::TeamMode::malleable && !g_first_region.load(std::memory_order_relaxed)) {
    value = std::clamp(malleable_choice(), 1, v);
  }
  g_latched.store(value, std::memory_order_relaxed);  // rule 2
  bump_epoch();
  return value;
}

// The program called omp_set_num_threads(n) (already forwarded): it gets n from now on (rule 3).
__attribute__((visibility("default"))) void cosched_team_set(int n) {
  using namespace cosched::rt;
  if (!g_active.load(std::memory_order_acquire)) return;
  ensure_started();
  if (n >= 1 && omp_get_level() == 0) {
    g_program_nthreads.store(n, std::memory_order_relaxed);
    refresh_floor();
    tl_icv = 0;  // the forwarded call overwrites whatever cosched had set
    g_latched.store(0, std::memory_order_relaxed);
  }
  if (!g_set_by_program.exchange(true, std::memory_order_relaxed)) update_mode();
  bump_epoch();
}

// omp_set_dynamic(flag) (already forwarded): the program's view changes; libomp's own adjustment stays
// off. Returns the value libomp must hold.
__attribute__((visibility("default"))) int cosched_team_set_dynamic(int flag) {
  using namespace cosched::rt;
  if (!g_active.load(std::memory_order_acquire)) return flag;
  ensure_started();
  g_program_dynamic.store(flag != 0, std::memory_order_relaxed);
  update_mode();
  bump_epoch();
  return 0;
}

// omp_get_dynamic() returned `real`: the program sees its own setting.
__attribute__((visibility("default"))) int cosched_team_get_dynamic(int real) {
  using namespace cosched::rt;
  if (!g_active.load(std::memory_order_acquire)) return real;
  return g_program_dynamic.load(std::memory_order_relaxed) ? 1 : 0;
}

// A num_threads(n) clause for the region the calling thread is about to begin. Returns what to forward:
// n itself (rule 3) unless the job is malleable, where the clause is an upper bound.
__attribute__((visibility("default"))) int cosched_team_clause(int n) {
  using namespace cosched::rt;
  if (!g_active.load(std::memory_order_acquire) || n <= 0 || omp_get_level() != 0) return n;
  if (team_mode() == cosched::proto::TeamMode::malleable) {
    n = std::clamp(malleable_choice(), 1, n);
  } else if (!g_clause.exchange(true, std::memory_order_relaxed)) {
    update_mode();
  }
  tl_clause = n;
  bump_epoch();
  return n;
}

// The program uses the runtime's threadprivate support (clang without TLS): one team size from now on.
__attribute__((visibility("default"))) void cosched_team_threadprivate(void) {
  using namespace cosched::rt;
  if (!g_active.load(std::memory_order_acquire)) return;
  if (!g_threadprivate.exchange(true, std::memory_order_relaxed)) update_mode();
  bump_epoch();
}

}  // extern "C"
