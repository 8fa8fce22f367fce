/* tls_heavy: an iterative OpenMP job linked with a library that carries 256 KiB of static TLS
 * (tls_heavy_lib.c). libcosched must start its own threads in it and manage it like any other job
 * (tests/integration/test_tool_threads.py).
 *
 *   tls_heavy [--iterations N]
 * Each iteration is one parallel loop whose team reads omp_get_max_threads() first and sizes its partial
 * sums by it; prints "iter I team T" (T: the team seen inside the region), and at the end "verified" when
 * every iteration's sum equals the serial reference and every team equalled what was read.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned long tls_heavy_checksum(unsigned char seed);

static double term(int k) { return 1.0 / ((double)(k + 1) * (k + 1)); }

int main(int argc, char **argv) {
  int iterations = 100;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--iterations") && i + 1 < argc) {
      iterations = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: tls_heavy [--iterations N]\n");
      return 0;
    } else {
      fprintf(stderr, "tls_heavy: unknown argument '%s' (see --help)\n", argv[i]);
      return 2;
    }
  }
  enum { N = 400000 };
  double reference = 0;
  for (int k = 0; k < N; ++k) reference += term(k);
  const unsigned long tls_reference = tls_heavy_checksum(7);
  int ok = 1;
  for (int it = 0; it < iterations; ++it) {
    const int max = omp_get_max_threads();
    double *part = calloc((size_t)max, sizeof *part);
    int team = 0;
    unsigned long tls_bad = 0;
#pragma omp parallel
    {
      if (omp_get_thread_num() == 0) team = omp_get_num_threads();
      if (tls_heavy_checksum(7) != tls_reference) __atomic_add_fetch(&tls_bad, 1, __ATOMIC_RELAXED);
      double mine = 0;
#pragma omp for schedule(static)
      for (int k = 0; k < N; ++k) mine += term(k);
      part[omp_get_thread_num()] = mine;
    }
    double sum = 0;
    for (int t = 0; t < max; ++t) sum += part[t];
    free(part);
    if (team != max || tls_bad != 0 || sum < reference * (1 - 1e-12) || sum > reference * (1 + 1e-12)) ok = 0;
    printf("iter %d team %d sum %.15f\n", it, team, sum);
    fflush(stdout);
  }
  printf(ok ? "verified\n" : "FAILED\n");
  return ok ? 0 : 1;
}
