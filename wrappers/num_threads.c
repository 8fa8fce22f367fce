/* Interposers for `num_threads(N)` clauses, which OMPT sees only as a requested size.
 *
 * A clause is the program's own request, and it gets exactly N threads (docs/architecture.md, "Team sizes a
 * program can observe", rule 3): these wrappers tell libcosched that the region about to begin carries a
 * clause (so the job's team becomes the program's, and the SelfAnalyzer knows the team that will run) and
 * forward N unchanged. Only a job that opted in to dynamic adjustment (malleable) has N lowered to its
 * grant, as OpenMP allows when dyn-var is true. Clang emits __kmpc_push_num_threads before
 * __kmpc_fork_call; gcc passes N to GOMP_parallel and its loop/sections variants, which LLVM's libomp
 * implements (gcc binaries run on libomp under cosched).
 *
 * Cost per region: nothing more than the forwarded call without a clause; one call into libcosched with one.
 */
#include "forward.h"

/* From libcosched: notes a clause of n threads for the calling thread's next region; returns what to forward. */
extern int cosched_team_clause(int n);

static unsigned clause(unsigned requested) {
  if (requested == 0) return 0; /* no clause: nthreads-var (set by libcosched) decides */
  return (unsigned)cosched_team_clause((int)requested);
}

/* clang / libomp */
typedef struct ident ident_t;
EXPORT void __kmpc_push_num_threads(ident_t *loc, int32_t gtid, int32_t num_threads) {
  typedef void (*fn_t)(ident_t *, int32_t, int32_t);
  int32_t n = num_threads > 0 ? (int32_t)clause((unsigned)num_threads) : num_threads;
  FORWARD(fn_t, __kmpc_push_num_threads, loc, gtid, n);
}

/* gcc's GOMP entry points that carry a thread count */
typedef void (*body_t)(void *);

EXPORT void GOMP_parallel(body_t fn, void *data, unsigned num_threads, unsigned flags) {
  typedef void (*fn_t)(body_t, void *, unsigned, unsigned);
  FORWARD(fn_t, GOMP_parallel, fn, data, clause(num_threads), flags);
}

EXPORT void GOMP_parallel_sections(body_t fn, void *data, unsigned num_threads, unsigned count, unsigned flags) {
  typedef void (*fn_t)(body_t, void *, unsigned, unsigned, unsigned);
  FORWARD(fn_t, GOMP_parallel_sections, fn, data, clause(num_threads), count, flags);
}

/* GOMP_parallel_loop_<schedule>(fn, data, num_threads, start, end, incr, chunk, flags) */
#define LOOP_WITH_CHUNK(sched)                                                                          \
  EXPORT void GOMP_parallel_loop_##sched(body_t fn, void *data, unsigned num_threads, long start, long end, \
                                         long incr, long chunk, unsigned flags) {                      \
    typedef void (*fn_t)(body_t, void *, unsigned, long, long, long, long, unsigned);                  \
    FORWARD(fn_t, GOMP_parallel_loop_##sched, fn, data, clause(num_threads), start, end, incr, chunk, flags); \
  }
/* GOMP_parallel_loop_<runtime schedule>(fn, data, num_threads, start, end, incr, flags) */
#define LOOP_RUNTIME(sched)                                                                             \
  EXPORT void GOMP_parallel_loop_##sched(body_t fn, void *data, unsigned num_threads, long start, long end, \
                                         long incr, unsigned flags) {                                  \
    typedef void (*fn_t)(body_t, void *, unsigned, long, long, long, unsigned);                        \
    FORWARD(fn_t, GOMP_parallel_loop_##sched, fn, data, clause(num_threads), start, end, incr, flags);  \
  }

LOOP_WITH_CHUNK(static)
LOOP_WITH_CHUNK(dynamic)
LOOP_WITH_CHUNK(guided)
LOOP_WITH_CHUNK(nonmonotonic_dynamic)
LOOP_WITH_CHUNK(nonmonotonic_guided)
LOOP_RUNTIME(runtime)
LOOP_RUNTIME(nonmonotonic_runtime)
LOOP_RUNTIME(maybe_nonmonotonic_runtime)
