/* amdahl: an iterative OpenMP program whose speedup curve is known.
 *
 * Each iteration runs a serial part (fraction F of the work, on the initial thread) and then the parallel
 * part (1 - F) split evenly over the team, in --regions parallel regions. The work is register-bound
 * arithmetic, so on an idle machine T(p) = T1 * (F + (1 - F) / p): Amdahl's law with parallel fraction
 * f = 1 - F. The cosched tests and demos use it to check the SelfAnalyzer's speedup against the truth.
 *
 * Built four ways: clang/libomp and gcc/libgomp, each plain (for cosched-run) and relinked (-DCOSCHED_RELINK:
 * marks iterations with the explicit SelfAnalyzer API). -DAMDAHL_NONPERIODIC builds the non-iterative
 * variant: the regions come from several call sites in a random order, so there is no period to find.
 */
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

/* `units` units of register-bound work; the result is returned so the compiler cannot drop it. */
static double burn(long units, double seed) {
  double x = seed;
  for (long i = 0; i < units; ++i) {
    for (int k = 0; k < 64; ++k) x = x * 0.999999 + 0.5e-6;
  }
  return x;
}

/* Units per millisecond on one thread, measured once. */
static double calibrate(void) {
  long units = 1000;
  for (;;) {
    double t0 = now_s();
    volatile double sink = burn(units, 1.0);
    (void)sink;
    double dt = now_s() - t0;
    if (dt > 0.05) return (double)units / (dt * 1e3);
    units *= 2;
  }
}

static void usage(void) {
  printf("usage: amdahl [--serial-fraction F] [--iterations N] [--work-ms W] [--regions K] [--quiet]\n"
         "  --serial-fraction F  fraction of each iteration that runs serially, 0..1 (default 0)\n"
         "  --iterations N       outer iterations (default 100)\n"
         "  --work-ms W          work per iteration on one CPU, in ms (default 50)\n"
         "  --regions K          parallel regions per iteration, 1..8 (default 1)\n"
         "  --print-every P      print a line every P iterations (default 1)\n"
         "  --quiet              only the final line\n"
         "Each line: iter I team T time S  (T = threads seen inside the regions of that iteration)\n");
}

/* One parallel region working on `units`; records the team size seen inside it. Each call site of this
 * macro is a distinct region (its own codeptr), which is what the periodicity detector sees. */
#define PARALLEL_PART(units, team_out, sink)                              \
  do {                                                                    \
    _Pragma("omp parallel")                                               \
    {                                                                     \
      int nt = omp_get_num_threads();                                     \
      long mine = (units) / nt + (omp_get_thread_num() < (units) % nt);   \
      double r = burn(mine, 1.0 + omp_get_thread_num());                  \
      _Pragma("omp atomic") (sink) += r;                                  \
      _Pragma("omp master") (team_out) = nt;                              \
    }                                                                     \
  } while (0)

int main(int argc, char **argv) {
  double serial = 0.0, work_ms = 50.0;
  int iterations = 100, regions = 1, print_every = 1, quiet = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--serial-fraction") && i + 1 < argc) serial = atof(argv[++i]);
    else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--work-ms") && i + 1 < argc) work_ms = atof(argv[++i]);
    else if (!strcmp(argv[i], "--regions") && i + 1 < argc) regions = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--print-every") && i + 1 < argc) print_every = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--quiet")) quiet = 1;
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { usage(); return 0; }
    else { fprintf(stderr, "amdahl: unknown argument '%s' (see --help)\n", argv[i]); return 2; }
  }
  if (serial < 0 || serial > 1 || iterations < 1 || work_ms <= 0 || regions < 1 || regions > 8 || print_every < 1) {
    fprintf(stderr, "amdahl: argument out of range (see --help)\n");
    return 2;
  }
  double per_ms = calibrate();
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
    sink += burn(serial_units, 0.5);
    for (int r = 0; r < regions; ++r) {
#ifdef AMDAHL_NONPERIODIC
      rng = rng * 1103515245u + 12345u;
      switch ((rng >> 16) % 5) {
        case 0: PARALLEL_PART(parallel_units, team, sink); break;
        case 1: PARALLEL_PART(parallel_units, team, sink); break;
        case 2: PARALLEL_PART(parallel_units, team, sink); break;
        case 3: PARALLEL_PART(parallel_units, team, sink); break;
        default: PARALLEL_PART(parallel_units, team, sink); break;
      }
#else
      PARALLEL_PART(parallel_units, team, sink);
#endif
      if (team < team_min) team_min = team;
      if (team > team_max) team_max = team;
    }
    ITER_END();
    if (!quiet && (it % print_every == 0 || it == iterations - 1)) {
      if (team_min == team_max) printf("iter %d team %d time %.6f\n", it, team_max, now_s() - t0);
      else printf("iter %d team %d-%d time %.6f\n", it, team_min, team_max, now_s() - t0);
      fflush(stdout);
    }
  }
  printf("done iterations %d time %.3f checksum %.3f\n", iterations, now_s() - t_start, sink > 0 ? 1.0 : 0.0);
  return 0;
}
