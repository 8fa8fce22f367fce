/* clause: an iterative OpenMP program whose regions all carry a `num_threads(N)` clause (a plain parallel
 * region, a dynamically scheduled parallel loop, and parallel sections), printing the team sizes seen
 * inside them. The clause overrides omp_set_num_threads(), so it is the case libcosched's wrappers
 * (wrappers/num_threads.c) exist for: under cosched the teams must not exceed the granted allocation.
 *
 *   clause [--threads N] [--iterations I] [--work-ms W]
 *   each line: iter I teams A B C   (parallel, parallel for, parallel sections)
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile double g_seed = 1.0;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double spin(double seconds) {
  double x = g_seed, t0 = now_s();
  while (now_s() - t0 < seconds)
    for (int k = 0; k < 1000; ++k) x = x * 0.999999 + 1e-7;
  return x;
}

int main(int argc, char **argv) {
  int threads = 2, iterations = 50;
  double work_ms = 5;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--work-ms") && i + 1 < argc) work_ms = atof(argv[++i]);
    else {
      fprintf(stderr, "usage: clause [--threads N] [--iterations I] [--work-ms W]\n");
      return strcmp(argv[i], "--help") ? 2 : 0;
    }
  }
  if (threads < 1 || iterations < 1 || work_ms < 0) return 2;
  double sink = 0;
  for (int it = 0; it < iterations; ++it) {
    int a = 0, b = 0, c = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    {
#pragma omp master
      a = omp_get_num_threads();
      sink += spin(work_ms * 1e-3 / omp_get_num_threads());
    }
#pragma omp parallel for schedule(dynamic) num_threads(threads) reduction(+ : sink)
    for (int k = 0; k < 8; ++k) {
      if (k == 0) b = omp_get_num_threads();
      sink += spin(work_ms * 1e-3 / 8);
    }
#pragma omp parallel sections num_threads(threads)
    {
#pragma omp section
      c = omp_get_num_threads();
#pragma omp section
      sink += 0;
    }
    printf("iter %d teams %d %d %d\n", it, a, b, c);
    fflush(stdout);
  }
  printf("done %d\n", sink > 0);
  return 0;
}
