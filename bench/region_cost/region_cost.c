/* Per-region cost of outermost OpenMP parallel regions (EPCC syncbench "PARALLEL" style): runs
 * --regions empty regions, --reps times, and prints the median time per region in microseconds.
 * The same binary runs natively and under cosched (bench/region_cost/run.py compares them). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  long regions = 200000;
  int reps = 7;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--regions") && i + 1 < argc) regions = atol(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: region_cost [--regions N] [--reps R]\n");
      return 2;
    }
  }
  if (regions < 1 || reps < 1 || reps > 1000) return 2;
  double *t = calloc((size_t)reps, sizeof *t);
  volatile int sink = 0;
  int team = 0;
  /* warm up: thread creation, the tool's registration, the SelfAnalyzer's baseline phase */
  for (long i = 0; i < 10000; ++i) {
#pragma omp parallel
    { sink += 0; }
  }
  for (int r = 0; r < reps; ++r) {
    double t0 = now_s();
    for (long i = 0; i < regions; ++i) {
#pragma omp parallel
      {
        if (omp_get_thread_num() == 0) team = omp_get_num_threads();
      }
    }
    t[r] = (now_s() - t0) / (double)regions * 1e6;
  }
  qsort(t, (size_t)reps, sizeof *t, cmp);
  printf("region_us %.4f team %d min_us %.4f max_us %.4f\n", t[reps / 2], team, t[0], t[reps - 1]);
  free(t);
  return 0;
}
