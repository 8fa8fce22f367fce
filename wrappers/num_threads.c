/* Interposers for the case OMPT cannot cover: a `num_threads(N)` clause.
 *
 * The clause overrides omp_set_num_threads(), so the team size libcosched sets in its parallel_begin
 * callback would be ignored for such regions. These wrappers sit in front of the OpenMP runtime
 * (LD_PRELOAD, put there by cosched-run) and lower N to the team cosched grants for the region about to
 * begin; a clause asking for fewer threads than granted is kept. Clang emits __kmpc_push_num_threads before
 * __kmpc_fork_call; gcc passes N to GOMP_parallel and its loop/sections variants, which LLVM's libomp
 * implements (gcc binaries run on libomp under cosched).
 *
 * Cost per region with a clause: one call into libcosched (a few loads) and the forwarded call. The real
 * entry point is looked up once (dlsym(RTLD_NEXT)); a race on that first lookup is benign (same value).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* From libcosched: the team size granted to the next outermost region, 0 when cosched does not steer it. */
extern int cosched_team_limit(void);

static unsigned clamp(unsigned requested) {
  if (requested == 0) return 0; /* no clause: the ICV (set by libcosched) decides */
  int limit = cosched_team_limit();
  return limit > 0 && (unsigned)limit < requested ? (unsigned)limit : requested;
}

static void *next_symbol(void **cache, const char *name) {
  void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
  if (f == NULL) {
    f = dlsym(RTLD_NEXT, name);
    if (f == NULL) {
      fprintf(stderr, "cosched: %s not found in the OpenMP runtime\n", name);
      abort();
    }
    __atomic_store_n(cache, f, __ATOMIC_RELEASE);
  }
  return f;
}

/* POSIX guarantees dlsym's object pointer converts to a function pointer; memcpy says so without a cast that
 * ISO C frowns upon. */
#define FORWARD(type, name, ...)                        \
  static void *cache;                                   \
  void *sym_ = next_symbol(&cache, #name);              \
  type real_;                                           \
  memcpy(&real_, &sym_, sizeof real_);                  \
  real_(__VA_ARGS__)

#define EXPORT __attribute__((visibility("default")))

/* clang / libomp */
typedef struct ident ident_t;
EXPORT void __kmpc_push_num_threads(ident_t *loc, int32_t gtid, int32_t num_threads) {
  typedef void (*fn_t)(ident_t *, int32_t, int32_t);
  int32_t n = num_threads > 0 ? (int32_t)clamp((unsigned)num_threads) : num_threads;
  FORWARD(fn_t, __kmpc_push_num_threads, loc, gtid, n);
}

/* gcc's GOMP entry points that carry a thread count */
typedef void (*body_t)(void *);

EXPORT void GOMP_parallel(body_t fn, void *data, unsigned num_threads, unsigned flags) {
  typedef void (*fn_t)(body_t, void *, unsigned, unsigned);
  FORWARD(fn_t, GOMP_parallel, fn, data, clamp(num_threads), flags);
}

EXPORT void GOMP_parallel_sections(body_t fn, void *data, unsigned num_threads, unsigned count, unsigned flags) {
  typedef void (*fn_t)(body_t, void *, unsigned, unsigned, unsigned);
  FORWARD(fn_t, GOMP_parallel_sections, fn, data, clamp(num_threads), count, flags);
}

/* GOMP_parallel_loop_<schedule>(fn, data, num_threads, start, end, incr, chunk, flags) */
#define LOOP_WITH_CHUNK(sched)                                                                          \
  EXPORT void GOMP_parallel_loop_##sched(body_t fn, void *data, unsigned num_threads, long start, long end, \
                                         long incr, long chunk, unsigned flags) {                      \
    typedef void (*fn_t)(body_t, void *, unsigned, long, long, long, long, unsigned);                  \
    FORWARD(fn_t, GOMP_parallel_loop_##sched, fn, data, clamp(num_threads), start, end, incr, chunk, flags); \
  }
/* GOMP_parallel_loop_<runtime schedule>(fn, data, num_threads, start, end, incr, flags) */
#define LOOP_RUNTIME(sched)                                                                             \
  EXPORT void GOMP_parallel_loop_##sched(body_t fn, void *data, unsigned num_threads, long start, long end, \
                                         long incr, unsigned flags) {                                  \
    typedef void (*fn_t)(body_t, void *, unsigned, long, long, long, unsigned);                        \
    FORWARD(fn_t, GOMP_parallel_loop_##sched, fn, data, clamp(num_threads), start, end, incr, flags);  \
  }

LOOP_WITH_CHUNK(static)
LOOP_WITH_CHUNK(dynamic)
LOOP_WITH_CHUNK(guided)
LOOP_WITH_CHUNK(nonmonotonic_dynamic)
LOOP_WITH_CHUNK(nonmonotonic_guided)
LOOP_RUNTIME(runtime)
LOOP_RUNTIME(nonmonotonic_runtime)
LOOP_RUNTIME(maybe_nonmonotonic_runtime)
