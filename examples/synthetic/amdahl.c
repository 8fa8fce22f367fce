/* amdahl: an iterative OpenMP program whose speedup curve is known.
 *
 * Each iteration runs a serial part (fraction F of the work, on the initial thread) and then the parallel
 * part (1 - F) split evenly over the team, in --regions parallel regions. The work is register-bound
 * arithmetic, so on an idle machine T(p) = T1 * (F + (1 - F) / p): Amdahl's law with parallel fraction
 * f = 1 - F. The cosched tests and demos use it to check the SelfAnalyzer's speedup against the truth.
 *
 * Built four ways: clang/libomp and gcc/libgomp, each plain (for cosched-run) and relinked (-DCOSCHED_RELINK:
 * marks iterations with the explicit SelfAnalyzer API). -DAMDAHL_NONPERIODIC builds the non-iterative
 * variant: each region is drawn at random from eight call sites, so there is no period to find.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef COSCHED_RELINK
#include <cosched/selfanalyzer.h>
#define ITER_BEGIN() cosched_iter_begin(1)
#define ITER_END() cosched_iter_end(1)
#else
#define ITER_BEGIN() ((void)0)
#define ITER_END() ((void)0)
#endif

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Seeds are read through a volatile so the compiler cannot constant-fold the work loop (0.5, for example,
 * is a fixed point of the recurrence: with a literal seed the whole loop folds away). */
static volatile double g_seed = 1.0;

/* `units` units of register-bound work; the result is returned so the compiler cannot drop it. */
static double burn(long units, double offset) {
  double x = g_seed + offset;
  for (long i = 0; i < units; ++i) {
    for (int k = 0; k < 64; ++k) x = x * 0.999999 + 0.5e-6;
  }
  return x;
}

static void nap_ms(double ms) {
  struct timespec nap = {(time_t)(ms / 1e3), (long)(fmod(ms, 1e3) * 1e6)};
  nanosleep(&nap, NULL);
}

/* Units per millisecond on one thread. Being descheduled only ever makes a trial slower, so on a busy
 * machine the fastest of several short trials is the best estimate of the CPU's real rate. */
static double calibrate(void) {
  long units = 1000;
  double dt;
  for (;;) {
    double t0 = now_s();
    volatile double sink = burn(units, 0.0);
    (void)sink;
    dt = now_s() - t0;
    if (dt > 0.01) break;
    units *= 2;
  }
  for (int trial = 0; trial < 7; ++trial) {
    double t0 = now_s();
    volatile double sink = burn(units, 0.0);
    (void)sink;
    double t = now_s() - t0;
    if (t < dt) dt = t;
  }
  return (double)units / (dt * 1e3);
}

static void usage(void) {
  printf("usage: amdahl [--serial-fraction F] [--iterations N] [--work-ms W] [--regions K] [--sleep-ms S]\n"
         "              [--setup-ms M] [--quiet]\n"
         "  --serial-fraction F  fraction of each iteration that runs serially, 0..1 (default 0)\n"
         "  --iterations N       outer iterations (default 100)\n"
         "  --work-ms W          work per iteration on one CPU, in ms (default 50)\n"
         "  --regions K          distinct parallel regions per iteration, 1..8 (default 1)\n"
         "  --print-every P      print a line every P iterations (default 1)\n"
         "  --units-per-ms U     work units per ms on one CPU (default: calibrated at start)\n"
         "  --sleep-ms S         sleep S ms after each iteration, outside the regions (a light job; default 0)\n"
         "  --setup-ms M         sleep M ms before anything else, the OpenMP runtime not started yet (a program\n"
         "                       reading its input; default 0)\n"
         "  --quiet              only the final line\n"
         "Each line: iter I team T time S  (T = threads seen inside the regions of that iteration)\n");
}

/* The parallel regions. Each is a separate function with its own constant, so that every one is a distinct
 * call site (a distinct OMPT codeptr, which is what the periodicity detector sees): identical code could be
 * merged by the compiler (tail merging, identical-code folding) into a single region. */
#define DEFINE_REGION(k)                                                        \
  static __attribute__((noinline)) void region_##k(long units, int *team, double *sink) { \
    double acc = 0.0;                                                           \
    int seen = 0;                                                               \
    _Pragma("omp parallel reduction(+ : acc)")                                  \
    {                                                                           \
      int nt = omp_get_num_threads();                                           \
      long mine = units / nt + (omp_get_thread_num() < units % nt);             \
      acc += burn(mine, 0.125 * omp_get_thread_num() + (k) * 0.0078125);        \
      _Pragma("omp master") seen = nt;                                          \
    }                                                                           \
    *sink += acc;                                                               \
    *team = seen;                                                               \
  }
DEFINE_REGION(0)
DEFINE_REGION(1)
DEFINE_REGION(2)
DEFINE_REGION(3)
DEFINE_REGION(4)
DEFINE_REGION(5)
DEFINE_REGION(6)
DEFINE_REGION(7)
typedef void (*region_fn)(long, int *, double *);
static region_fn const kRegions[8] = {region_0, region_1, region_2, region_3,
                                      region_4, region_5, region_6, region_7};

int main(int argc, char **argv) {
  double serial = 0.0, work_ms = 50.0, sleep_ms = 0.0, setup_ms = 0.0;
  int iterations = 100, regions = 1, print_every = 1, quiet = 0;
  double units_per_ms = 0; /* 0: calibrate */
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--serial-fraction") && i + 1 < argc) serial = atof(argv[++i]);
    else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--work-ms") && i + 1 < argc) work_ms = atof(argv[++i]);
    else if (!strcmp(argv[i], "--regions") && i + 1 < argc) regions = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--print-every") && i + 1 < argc) print_every = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--units-per-ms") && i + 1 < argc) units_per_ms = atof(argv[++i]);
    else if (!strcmp(argv[i], "--sleep-ms") && i + 1 < argc) sleep_ms = atof(argv[++i]);
    else if (!strcmp(argv[i], "--setup-ms") && i + 1 < argc) setup_ms = atof(argv[++i]);
    else if (!strcmp(argv[i], "--quiet")) quiet = 1;
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { usage(); return 0; }
    else { fprintf(stderr, "amdahl: unknown argument '%s' (see --help)\n", argv[i]); return 2; }
  }
  if (serial < 0 || serial > 1 || iterations < 1 || work_ms <= 0 || regions < 1 || regions > 8 || print_every < 1 ||
      sleep_ms < 0 || setup_ms < 0) {
    fprintf(stderr, "amdahl: argument out of range (see --help)\n");
    return 2;
  }
  if (setup_ms > 0) nap_ms(setup_ms);
  double per_ms = units_per_ms > 0 ? units_per_ms : calibrate();
  long serial_units = (long)(serial * work_ms * per_ms);
  long parallel_units = (long)((1.0 - serial) * work_ms * per_ms) / regions;
  double sink = 0.0, t_start = now_s();
#ifdef AMDAHL_NONPERIODIC
  unsigned rng = 12345u;
#endif
  for (int it = 0; it < iterations; ++it) {
    double t0 = now_s();
    int team_min = 1 << 30, team_max = 0, team = 0;
    ITER_BEGIN();
    sink += burn(serial_units, 0.25);
    for (int r = 0; r < regions; ++r) {
#ifdef AMDAHL_NONPERIODIC
      rng = rng * 1103515245u + 12345u;
      kRegions[(rng >> 16) % 8](parallel_units, &team, &sink);
#else
      kRegions[r](parallel_units, &team, &sink);
#endif
      if (team < team_min) team_min = team;
      if (team > team_max) team_max = team;
    }
    ITER_END();
    if (sleep_ms > 0) nap_ms(sleep_ms);
    if (!quiet && (it % print_every == 0 || it == iterations - 1)) {
      if (team_min == team_max) printf("iter %d team %d time %.6f\n", it, team_max, now_s() - t0);
      else printf("iter %d team %d-%d time %.6f\n", it, team_min, team_max, now_s() - t0);
      fflush(stdout);
    }
  }
  printf("done iterations %d time %.3f units_per_ms %.1f checksum %.3f\n", iterations, now_s() - t_start, per_ms,
         sink > 0 ? 1.0 : 0.0);
  return 0;
}
