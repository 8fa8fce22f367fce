/* team_patterns: OpenMP programs with the habits of real codes that rely on the team sizes OpenMP
 * guarantees, each checked against a serial reference. Run natively they always verify; under cosched they
 * must verify too (docs/architecture.md, "Team sizes a program can observe"; tests/integration/
 * test_correctness.py runs them under several policies while other jobs come and go).
 *
 *   slots          per-thread partial minima and sums in an array sized by omp_get_max_threads() right
 *                  before each region, reduced over all the slots (a hydrodynamics proxy's dt reduction)
 *   startup        per-thread buffers sized once at start-up by omp_get_max_threads(), written by
 *                  omp_get_thread_num() for the whole run (an integer sort's buckets)
 *   threadprivate  threadprivate bounds filled in one region and used in the next (only in the
 *                  team-threadprivate build)
 *   setnum         omp_set_num_threads(N) before every region; each region must have N threads
 *   roles          producer (thread 0) and consumer (thread 1) under num_threads(2)
 *   branch         regions skipped when the team read in serial code is 1, and a path taken inside a region
 *                  only when omp_get_num_threads() > 1
 *   steps          time steps of 490 regions in inner loops of periods 1 to 26, plus 2 regions taken only
 *                  when the team read in serial code is above 1 (a hydrodynamics proxy's structure)
 *   nested         two active levels: each outer thread sizes slots by omp_get_max_threads() read inside the
 *                  outer region, an inner region fills them by thread number, and the outer thread reduces
 *                  them; the inner team must equal that read and be at level 2
 *   property       random reads of omp_get_max_threads() between tiny regions; every region checks, from
 *                  inside, the guarantees: team <= the program's value, team == the value read when one was
 *                  read since the previous region, team >= 2 unless --allow-one (a malleable job)
 *
 * Output: "iter I team T" lines (unless --quiet), then "verified regions R teams T:K ..." (K iterations whose
 * checked region had T threads) or "FAILED: why" (exit 1).
 */
#include <math.h>
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 20000

static double g_data[N];
static int g_quiet = 0, g_allow_one = 0, g_threads = 2;
static long g_regions = 0, g_failures = 0;
static char g_why[256];

static void fail(const char *fmt, long a, long b) {
  if (g_failures++ == 0) snprintf(g_why, sizeof g_why, fmt, a, b);
}

/* A little work per element, so that a region takes tens of microseconds. */
static double work(int i, int it) { return sin(g_data[i] + 0.001 * it) * 0.5 + 1.0; }

static long g_team_count[65]; /* regions seen per team size (the last bucket: 64 or more) */

static void report(int it, int team) {
  g_team_count[team < 64 ? (team < 0 ? 0 : team) : 64]++;
  if (!g_quiet) printf("iter %d team %d\n", it, team);
}

/* Static decomposition by the team that runs, as real codes write it. */
static void chunk(int tid, int nt, int *lo, int *hi) {
  *lo = (int)((long)N * tid / nt);
  *hi = (int)((long)N * (tid + 1) / nt);
}

static void pattern_slots(int it) {
  double ref_min = INFINITY, ref_sum = 0;
  for (int i = 0; i < N; ++i) {
    double v = work(i, it);
    ref_sum += v;
    if (v < ref_min) ref_min = v;
  }
  int n = omp_get_max_threads();
  double *mins = malloc(sizeof(double) * (size_t)n), *sums = malloc(sizeof(double) * (size_t)n);
  for (int t = 0; t < n; ++t) mins[t] = sums[t] = NAN; /* a slot nobody fills poisons the result */
  int team = 0;
#pragma omp parallel
  {
    int tid = omp_get_thread_num(), nt = omp_get_num_threads(), lo, hi;
    if (tid == 0) team = nt;
    if (tid < n) {
      double m = INFINITY, s = 0;
      chunk(tid, nt, &lo, &hi);
      for (int i = lo; i < hi; ++i) {
        double v = work(i, it);
        s += v;
        if (v < m) m = v;
      }
      mins[tid] = m;
      sums[tid] = s;
    }
  }
  ++g_regions;
  double m = INFINITY, s = 0;
  for (int t = 0; t < n; ++t) {
    s += sums[t];
    if (!(mins[t] >= m)) m = mins[t]; /* NaN-propagating */
  }
  if (team > n) fail("slots: team %ld larger than omp_get_max_threads() %ld", team, n);
  if (!(fabs(s - ref_sum) < 1e-6 * ref_sum) || m != ref_min) fail("slots: wrong reduction (team %ld, slots %ld)", team, n);
  free(mins);
  free(sums);
  report(it, team);
}

static int g_startup_n = 0;
static double *g_buckets = NULL;

static void pattern_startup(int it) {
  if (g_buckets == NULL) {
    g_startup_n = omp_get_max_threads();
    g_buckets = calloc((size_t)g_startup_n, sizeof(double));
  }
  double ref = 0;
  for (int i = 0; i < N; ++i) ref += work(i, it);
  int team = 0;
#pragma omp parallel
  {
    int tid = omp_get_thread_num(), nt = omp_get_num_threads(), lo, hi;
    if (tid == 0) team = nt;
    if (tid >= g_startup_n) {
#pragma omp critical
      fail("startup: thread %ld writes past %ld buckets", tid, g_startup_n);
    } else {
      double s = 0;
      chunk(tid, nt, &lo, &hi);
      for (int i = lo; i < hi; ++i) s += work(i, it);
      g_buckets[tid] = s;
    }
  }
  ++g_regions;
  double s = 0;
  for (int t = 0; t < g_startup_n && t < team; ++t) s += g_buckets[t];
  if (!(fabs(s - ref) < 1e-6 * ref)) fail("startup: wrong sum (team %ld, buckets %ld)", team, g_startup_n);
  report(it, team);
}

#ifdef TEAM_PATTERNS_THREADPRIVATE
/* Only in the team-threadprivate build: a threadprivate variable anywhere in the executable makes its every
 * region keep one team size, which would hide what the other patterns check. */
static int tp_lo = -1, tp_hi = -1;
#pragma omp threadprivate(tp_lo, tp_hi)

static void pattern_threadprivate(int it) {
  double ref = 0;
  for (int i = 0; i < N; ++i) ref += work(i, it);
  int team_a = 0, team_b = 0;
#pragma omp parallel
  {
    if (omp_get_thread_num() == 0) team_a = omp_get_num_threads();
    chunk(omp_get_thread_num(), omp_get_num_threads(), &tp_lo, &tp_hi);
  }
  double s = 0;
#pragma omp parallel reduction(+ : s)
  {
    if (omp_get_thread_num() == 0) team_b = omp_get_num_threads();
    for (int i = tp_lo; i >= 0 && i < tp_hi; ++i) s += work(i, it);
  }
  g_regions += 2;
  if (team_a != team_b) fail("threadprivate: teams %ld then %ld", team_a, team_b);
  if (!(fabs(s - ref) < 1e-6 * ref)) fail("threadprivate: wrong sum (teams %ld, %ld)", team_a, team_b);
  report(it, team_b);
}
#endif

static void pattern_setnum(int it) {
  omp_set_num_threads(g_threads);
  int team = 0;
  double s = 0;
#pragma omp parallel reduction(+ : s)
  {
    int lo, hi;
    if (omp_get_thread_num() == 0) team = omp_get_num_threads();
    chunk(omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
    for (int i = lo; i < hi; ++i) s += work(i, it);
  }
  ++g_regions;
  if (team != g_threads) fail("setnum: omp_set_num_threads(%ld) gave a team of %ld", g_threads, team);
  report(it, team);
}

static void pattern_roles(int it) {
  enum { ITEMS = 200 };
  static _Atomic long slot; /* 0: empty; else value + 1 */
  long total = 0, expected = 0;
  int team = 0;
  for (long k = 1; k <= ITEMS; ++k) expected += k * (it + 1);
  atomic_store(&slot, 0);
#pragma omp parallel num_threads(2)
  {
    int tid = omp_get_thread_num();
    if (tid == 0) team = omp_get_num_threads();
    if (omp_get_num_threads() == 2) {
      for (long k = 1; k <= ITEMS; ++k) {
        if (tid == 0) {
          while (atomic_load(&slot) != 0) sched_yield();
          atomic_store(&slot, k * (it + 1) + 1);
        } else {
          long v;
          while ((v = atomic_load(&slot)) == 0) sched_yield();
          total += v - 1;
          atomic_store(&slot, 0);
        }
      }
    }
  }
  ++g_regions;
  if (team != 2) fail("roles: num_threads(2) gave a team of %ld (total %ld)", team, total);
  else if (total != expected) fail("roles: total %ld instead of %ld", total, expected);
  report(it, team);
}

static double chunk_sum(int lo, int hi, int it) {
  double s = 0;
  for (int i = lo; i < hi; ++i) s += work(i, it);
  return s;
}

static void pattern_branch(int it) {
  double ref = chunk_sum(0, N, it), s = 0, first = 0, second = 0;
  int nt_read = omp_get_max_threads(), team_first = 0, team = 0;
  if (nt_read > 1) {
    /* Regions taken only with a team (the sequence the periodicity detector sees depends on it). The first
     * follows the read, so it must have exactly nt_read threads. */
#pragma omp parallel reduction(+ : first)
    {
      int lo, hi, nt = omp_get_num_threads();
      if (omp_get_thread_num() == 0) team_first = nt;
      chunk(omp_get_thread_num(), nt, &lo, &hi);
      first += chunk_sum(lo / 2, hi / 2, it); /* [0, N/2) */
    }
#pragma omp parallel reduction(+ : second)
    {
      int lo, hi, nt = omp_get_num_threads();
      chunk(omp_get_thread_num(), nt, &lo, &hi);
      second += chunk_sum(N / 2 + lo / 2, N / 2 + hi / 2, it); /* [N/2, N) */
    }
    g_regions += 2;
  } else {
    first = chunk_sum(0, N / 2, it);
    second = chunk_sum(N / 2, N, it);
  }
  /* A path taken inside a region only when the team has several threads. */
#pragma omp parallel reduction(+ : s)
  {
    int lo, hi, nt = omp_get_num_threads();
    if (omp_get_thread_num() == 0) team = nt;
    if (nt > 1) {
      chunk(omp_get_thread_num(), nt, &lo, &hi);
      s += chunk_sum(lo, hi, it);
    } else {
      s += chunk_sum(0, N, it);
    }
  }
  ++g_regions;
  if (nt_read > 1 && team_first != nt_read) fail("branch: team %ld right after reading %ld", team_first, nt_read);
  if (!(fabs(s - ref) < 1e-6 * ref)) fail("branch: wrong sum in a region of %ld threads (read %ld)", team, nt_read);
  if (!(fabs(first + second - ref) < 1e-6 * ref)) fail("branch: halves wrong (teams %ld, %ld)", team_first, team);
  report(it, team);
}

/* Time steps of hundreds of regions (a hydrodynamics proxy: about 490 per step, mostly in inner loops of
 * periods 1, 2, 12, 14 and 26), plus two regions taken only when the team read in serial code is above 1.
 * Each region is its own call site (its own OMPT codeptr), as in a real code. */
static double g_step_sink = 0;
#define STEP_REGION(k)                                                                  \
  static __attribute__((noinline)) void step_region_##k(int it) {                      \
    double acc = 0;                                                                     \
    _Pragma("omp parallel reduction(+ : acc)")                                          \
    {                                                                                   \
      int lo, hi;                                                                       \
      chunk(omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);                     \
      for (int i = lo; i < hi; i += 64) acc += work(i, it + (k));                       \
    }                                                                                   \
    g_step_sink += acc;                                                                 \
    ++g_regions;                                                                        \
  }
#define STEP_REGIONS8(a, b, c, d, e, f, g, h) \
  STEP_REGION(a) STEP_REGION(b) STEP_REGION(c) STEP_REGION(d) STEP_REGION(e) STEP_REGION(f) STEP_REGION(g) STEP_REGION(h)
STEP_REGIONS8(0, 1, 2, 3, 4, 5, 6, 7)
STEP_REGIONS8(8, 9, 10, 11, 12, 13, 14, 15)
STEP_REGIONS8(16, 17, 18, 19, 20, 21, 22, 23)
STEP_REGIONS8(24, 25, 26, 27, 28, 29, 30, 31)
STEP_REGIONS8(32, 33, 34, 35, 36, 37, 38, 39)
STEP_REGIONS8(40, 41, 42, 43, 44, 45, 46, 47)
STEP_REGIONS8(48, 49, 50, 51, 52, 53, 54, 55)
STEP_REGIONS8(56, 57, 58, 59, 60, 61, 62, 63)
typedef void (*step_fn)(int);
static step_fn const kStep[64] = {
    step_region_0,  step_region_1,  step_region_2,  step_region_3,  step_region_4,  step_region_5,  step_region_6,
    step_region_7,  step_region_8,  step_region_9,  step_region_10, step_region_11, step_region_12, step_region_13,
    step_region_14, step_region_15, step_region_16, step_region_17, step_region_18, step_region_19, step_region_20,
    step_region_21, step_region_22, step_region_23, step_region_24, step_region_25, step_region_26, step_region_27,
    step_region_28, step_region_29, step_region_30, step_region_31, step_region_32, step_region_33, step_region_34,
    step_region_35, step_region_36, step_region_37, step_region_38, step_region_39, step_region_40, step_region_41,
    step_region_42, step_region_43, step_region_44, step_region_45, step_region_46, step_region_47, step_region_48,
    step_region_49, step_region_50, step_region_51, step_region_52, step_region_53, step_region_54, step_region_55,
    step_region_56, step_region_57, step_region_58, step_region_59, step_region_60, step_region_61, step_region_62,
    step_region_63};

/* One step: 490 regions (1 + 40 + 60 + 1 + 96 + 98 + 1 + 130 + 61 + 2), 492 when the team read is above 1. */
static void pattern_steps(int it) {
  int nt = omp_get_max_threads();
  kStep[0](it);                                           /* prologue */
  for (int k = 0; k < 40; ++k) kStep[1](it);              /* period 1 */
  for (int k = 0; k < 30; ++k) { kStep[2](it); kStep[3](it); } /* period 2 */
  kStep[4](it);
  for (int k = 0; k < 8; ++k) for (int r = 0; r < 12; ++r) kStep[5 + r](it);  /* period 12 */
  for (int k = 0; k < 7; ++k) for (int r = 0; r < 14; ++r) kStep[17 + r](it); /* period 14 */
  kStep[31](it);
  for (int k = 0; k < 5; ++k) for (int r = 0; r < 26; ++r) kStep[32 + r](it); /* period 26 */
  for (int k = 0; k < 61; ++k) kStep[1](it);              /* the period-1 loop again */
  if (nt > 1) { kStep[58](it); kStep[59](it); }           /* only with a team */
  kStep[60](it);
  kStep[61](it);
  report(it, nt);
}

static int g_program_value = 0;
static unsigned g_rng = 12345u;

static void pattern_nested(int it) {
  double ref = 0;
  for (int i = 0; i < N; ++i) ref += work(i, it);
  int outer_team = 0;
  double total = 0;
#pragma omp parallel reduction(+ : total)
  {
    int otid = omp_get_thread_num(), ont = omp_get_num_threads(), lo, hi;
    if (otid == 0) outer_team = ont;
    chunk(otid, ont, &lo, &hi);
    int n = omp_get_max_threads(); /* the inner team, as the program reads it */
    double *part = malloc(sizeof(double) * (size_t)n);
    for (int t = 0; t < n; ++t) part[t] = NAN; /* a slot nobody fills poisons the result */
    int inner_team = 0, level = 0;
#pragma omp parallel
    {
      int tid = omp_get_thread_num(), nt = omp_get_num_threads();
      if (tid == 0) {
        inner_team = nt;
        level = omp_get_active_level();
      }
      if (tid < n) {
        int a = lo + (int)((long)(hi - lo) * tid / nt), b = lo + (int)((long)(hi - lo) * (tid + 1) / nt);
        double s = 0;
        for (int i = a; i < b; ++i) s += work(i, it);
        part[tid] = s;
      }
    }
    double s = 0;
    for (int t = 0; t < n; ++t) s += part[t];
    total += s;
    free(part);
#pragma omp critical
    {
      if (inner_team != n) fail("nested: inner team %ld after a read of %ld inside the outer region", inner_team, n);
      if (n > 1 && level != 2) fail("nested: inner region at active level %ld (team %ld)", level, inner_team);
    }
  }
  ++g_regions;
  if (outer_team > g_program_value) fail("nested: outer team %ld above the program's value %ld", outer_team, g_program_value);
  if (!(fabs(total - ref) < 1e-6 * ref)) fail("nested: wrong sum (outer team %ld, iteration %ld)", outer_team, it);
  report(it, outer_team);
}


static void pattern_property(int it) {
  g_rng = g_rng * 1103515245u + 12345u;
  int read = (g_rng >> 16) % 3 == 0 ? omp_get_max_threads() : 0;
  if (read > g_program_value) fail("property: omp_get_max_threads() %ld above the program's value %ld", read, g_program_value);
  int team = 0, in_parallel = 1;
#pragma omp parallel
  {
    if (omp_get_thread_num() == 0) {
      team = omp_get_num_threads();
      in_parallel = omp_in_parallel();
    }
  }
  ++g_regions;
  if (team > g_program_value) fail("property: team %ld above the program's value %ld", team, g_program_value);
  if (read != 0 && team != read) fail("property: team %ld after a read of %ld", team, read);
  if (!g_allow_one && g_program_value > 1 && (team < 2 || !in_parallel))
    fail("property: team %ld (in_parallel %ld): an inactive region", team, in_parallel);
  g_team_count[team < 64 ? (team < 0 ? 0 : team) : 64]++;
  if (!g_quiet && it % 100 == 0) printf("iter %d team %d\n", it, team);
}

int main(int argc, char **argv) {
  const char *pattern = "slots";
  int iterations = 200;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--pattern") && i + 1 < argc) pattern = argv[++i];
    else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) g_threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--allow-one")) g_allow_one = 1;
    else if (!strcmp(argv[i], "--quiet")) g_quiet = 1;
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: team_patterns --pattern slots|startup|threadprivate|setnum|roles|branch|steps|nested|\n"
             "                              property\n"
             "                     [--iterations N] [--threads N (setnum)] [--allow-one (property)] [--quiet]\n");
      return 0;
    } else {
      fprintf(stderr, "team_patterns: unknown argument '%s' (see --help)\n", argv[i]);
      return 2;
    }
  }
  void (*fn)(int) = NULL;
  if (!strcmp(pattern, "slots")) fn = pattern_slots;
  else if (!strcmp(pattern, "startup")) fn = pattern_startup;
#ifdef TEAM_PATTERNS_THREADPRIVATE
  else if (!strcmp(pattern, "threadprivate")) fn = pattern_threadprivate;
#endif
  else if (!strcmp(pattern, "setnum")) fn = pattern_setnum;
  else if (!strcmp(pattern, "roles")) fn = pattern_roles;
  else if (!strcmp(pattern, "branch")) fn = pattern_branch;
  else if (!strcmp(pattern, "property")) fn = pattern_property;
  else if (!strcmp(pattern, "steps")) fn = pattern_steps;
  else if (!strcmp(pattern, "nested")) fn = pattern_nested;
  if (fn == NULL || iterations < 1 || g_threads < 1) {
    fprintf(stderr, "team_patterns: bad --pattern, --iterations or --threads (see --help)\n");
    return 2;
  }
  for (int i = 0; i < N; ++i) g_data[i] = 0.001 * i;
  if (fn == pattern_nested) omp_set_max_active_levels(2);
  if (fn != pattern_startup) g_program_value = omp_get_max_threads();
  for (int it = 0; it < iterations; ++it) fn(it);
  if (g_failures > 0) {
    printf("FAILED: %s (%ld failures in %ld regions)\n", g_why, g_failures, g_regions);
    return 1;
  }
  printf("verified regions %ld teams", g_regions);
  for (int t = 0; t <= 64; ++t) {
    if (g_team_count[t] > 0) printf(" %d:%ld", t, g_team_count[t]);
  }
  printf("\n");
  return 0;
}
