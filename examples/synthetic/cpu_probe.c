/* cpu_probe: an iterative OpenMP program that says, each iteration, how many threads its region had and on
 * which CPUs they ran (sched_getcpu inside the region), and checks its own result at the end.
 *
 * Used by the Slurm tests (tests/integration/test_slurm.py) to see, from inside a batch job, what cosched
 * gave it: "iter 3 team 1 cpus 0" per iteration, then "verified" when the parallel sums equal the serial
 * one (integer arithmetic: exact for any team size), else "FAILED" and exit status 1.
 *
 * --stop-file PATH ends the loop after the iteration during which PATH appeared: a test that has seen what it
 * needs ends a long run early, and still gets "verified" (the check covers the iterations that ran).
 *
 * --blocktime adds a line per iteration, "blocktime iter 3 team 2 allowed 1 ms 0": libomp's blocktime as the
 * region's master reads it inside the region (kmp_get_blocktime, found at run time; -1 on a runtime without
 * it) and how many CPUs the master may run on there (tests/integration/test_oversubscribed_yield.py).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One term of the checked sum. */
static unsigned long long term(long i) { return (unsigned long long)((i * 2654435761L) % 1000003L); }

int main(int argc, char** argv) {
  int iterations = 20;
  double work_ms = 100;
  int show_blocktime = 0;
  const char* stop_file = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--blocktime") == 0) show_blocktime = 1;
    else if (strcmp(argv[i], "--stop-file") == 0 && i + 1 < argc) stop_file = argv[++i];
    else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) iterations = atoi(argv[++i]);
    else if (strcmp(argv[i], "--work-ms") == 0 && i + 1 < argc) work_ms = atof(argv[++i]);
    else {
      fprintf(stderr, "usage: cpu_probe [--iterations N] [--work-ms W] [--blocktime] [--stop-file PATH]\n");
      return 2;
    }
  }
  if (iterations < 1 || work_ms <= 0) {
    fprintf(stderr, "cpu_probe: --iterations and --work-ms must be positive\n");
    return 2;
  }
  /* Terms per iteration: about work_ms of one CPU's time. */
  long n = 1000;
  for (;;) {
    double t0 = now_s();
    volatile unsigned long long s = 0;
    for (long i = 0; i < n; ++i) s += term(i);
    (void)s;
    if (now_s() - t0 > 0.005) {
      n = (long)((double)n * work_ms / ((now_s() - t0) * 1e3));
      break;
    }
    n *= 2;
  }
  /* libomp's own entry point (libgomp has none): looked up, so that both builds link. */
  int (*get_blocktime)(void) = NULL;
  void* sym = dlsym(RTLD_DEFAULT, "kmp_get_blocktime");
  memcpy(&get_blocktime, &sym, sizeof get_blocktime);
  unsigned long long parallel_total = 0;
  for (int it = 0; it < iterations; ++it) {
    unsigned long long sum = 0;
    int team = 0;
    int blocktime = -1;
    int allowed = 0;
    unsigned long long cpu_bits = 0; /* CPUs 0-63 the team's threads ran on */
#pragma omp parallel reduction(+ : sum)
    {
#pragma omp for schedule(static)
      for (long i = 0; i < n; ++i) sum += term(i + (long)it);
      int cpu = sched_getcpu();
      if (omp_get_thread_num() == 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        if (sched_getaffinity(0, sizeof set, &set) == 0) allowed = CPU_COUNT(&set);
        if (get_blocktime != NULL) blocktime = get_blocktime();
      }
#pragma omp critical
      {
        if (cpu >= 0 && cpu < 64) cpu_bits |= 1ULL << cpu;
        team = omp_get_num_threads();
      }
    }
    parallel_total += sum;
    printf("iter %d team %d cpus", it, team);
    for (int c = 0; c < 64; ++c) {
      if (cpu_bits & (1ULL << c)) printf(" %d", c);
    }
    printf("\n");
    if (show_blocktime) printf("blocktime iter %d team %d allowed %d ms %d\n", it, team, allowed, blocktime);
    fflush(stdout);
    if (stop_file != NULL && access(stop_file, F_OK) == 0) {
      iterations = it + 1;  /* the serial check below covers the iterations that ran */
      printf("stopped after %d iterations: %s exists\n", iterations, stop_file);
    }
  }
  unsigned long long serial_total = 0;
  for (int it = 0; it < iterations; ++it) {
    for (long i = 0; i < n; ++i) serial_total += term(i + (long)it);
  }
  if (serial_total != parallel_total) {
    printf("FAILED %llu != %llu\n", parallel_total, serial_total);
    return 1;
  }
  printf("verified\n");
  return 0;
}
