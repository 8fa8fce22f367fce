/* exit_in_region: a job that ends by calling exit() from inside a parallel region while the other threads of
 * the team are still working, as codes do on a fatal error found by one thread. The process must end with
 * the status it chose (not hang in a runtime or tool shutdown, not crash), and the RM must free its CPUs
 * (tests/integration/test_faults.py).
 *
 *   exit_in_region [--iterations N] [--status S]
 * runs N short iterations of a parallel loop, then a region in which thread 0 calls exit(S) while the others
 * spin on shared work; prints "exiting S" just before.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double work(int n) {
  double s = 0;
  for (int i = 1; i <= n; ++i) s += 1.0 / ((double)i * i);
  return s;
}

int main(int argc, char **argv) {
  int iterations = 50;
  int status = 3;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--status") && i + 1 < argc) status = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: exit_in_region [--iterations N] [--status S]\n");
      return 0;
    } else {
      fprintf(stderr, "exit_in_region: unknown argument '%s' (see --help)\n", argv[i]);
      return 2;
    }
  }
  double total = 0;
  for (int it = 0; it < iterations; ++it) {
#pragma omp parallel for reduction(+ : total)
    for (int k = 0; k < 64; ++k) total += work(20000);
  }
  printf("iterations done %.6f\n", total);
  fflush(stdout);
  volatile int spin = 1;
#pragma omp parallel
  {
    if (omp_get_thread_num() == 0) {
      printf("exiting %d\n", status);
      fflush(stdout);
      exit(status);
    }
    double mine = 0;
    while (spin) mine += work(1000);  /* the others are mid-work when the process ends */
    if (mine < 0) printf("unreachable\n");
  }
  return 0;
}
