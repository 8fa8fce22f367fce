/* tasks: task-parallel OpenMP programs in the shape real codes use, one parallel region around a time loop
 * whose steps are task graphs made by a `single` producer (docs/selfanalyzer.md, "Where the iterations are").
 *
 *   --mode fib   each step computes fib(--size) with recursive tasks down to a cutoff (fib(n - 1) as a task,
 *                fib(n - 2) inline, then a taskwait): enough work per task to scale
 *   --mode fine  each step creates --size tasks of a few dozen instructions each: too fine to scale, the
 *                tasks cost less than handing them to another thread, so more threads make it slower
 *
 * Output: "done steps N time T checksum C" (C is the same whatever the team: the sum of every step's result),
 * or an error line and exit 2 for a bad option.
 */
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

enum { kCutoff = 18 }; /* below this, fib is computed without tasks: about 10 us of work per leaf task */

static long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

static long fib_tasks(int n) {
  if (n < kCutoff) return fib_serial(n);
  long a = 0;
#pragma omp task shared(a) firstprivate(n)
  a = fib_tasks(n - 1);
  const long b = fib_tasks(n - 2);
#pragma omp taskwait
  return a + b;
}

static volatile unsigned long g_seed = 12345; /* read through a volatile: the work is not folded away */

/* A task's few dozen instructions: a short integer hash of its index. */
static unsigned long tiny_work(long i) {
  unsigned long x = g_seed + (unsigned long)i;
  for (int k = 0; k < 8; ++k) x = x * 6364136223846793005UL + 1442695040888963407UL;
  return x >> 33;
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: tasks [--mode fib|fine] [--steps N] [--size S] [--quiet]\n"
          "  --mode fib|fine  recursive tasks that scale (default fib), or tasks too fine to scale\n"
          "  --steps N        time steps, one task graph each (default 50)\n"
          "  --size S         fib: the argument (default 32); fine: tasks per step (default 50000)\n"
          "  --quiet          no per-step lines\n");
}

int main(int argc, char **argv) {
  int fine = 0, steps = 50, quiet = 0;
  long size = -1;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
      ++i;
      if (!strcmp(argv[i], "fine")) fine = 1;
      else if (strcmp(argv[i], "fib") != 0) {
        fprintf(stderr, "tasks: --mode '%s': expected fib or fine\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
      steps = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
      size = atol(argv[++i]);
    } else if (!strcmp(argv[i], "--quiet")) {
      quiet = 1;
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else {
      fprintf(stderr, "tasks: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  if (size < 0) size = fine ? 50000 : 32;
  if (steps < 1 || size < 1 || (!fine && size > 45)) {
    fprintf(stderr, "tasks: --steps must be >= 1 and --size in [1, 45] for fib, >= 1 for fine\n");
    return 2;
  }
  unsigned long *results = fine ? calloc((size_t)size, sizeof *results) : NULL;
  if (fine && results == NULL) {
    fprintf(stderr, "tasks: out of memory for %ld results\n", size);
    return 2;
  }
  unsigned long checksum = 0;
  const double t0 = now_s();
#pragma omp parallel
  {
    for (int step = 0; step < steps; ++step) {
#pragma omp single
      {
        unsigned long result = 0;
        if (fine) {
          for (long i = 0; i < size; ++i) {
#pragma omp task firstprivate(i)
            results[i] = tiny_work(i + step);
          }
#pragma omp taskwait
          for (long i = 0; i < size; ++i) result += results[i];
        } else {
          result = (unsigned long)fib_tasks((int)size);
        }
        checksum += result;
        if (!quiet) printf("step %d result %lu\n", step, result);
      }
    }
  }
  const double t = now_s() - t0;
  printf("done steps %d time %.3f checksum %lu\n", steps, t, checksum);
  free(results);
  return 0;
}
