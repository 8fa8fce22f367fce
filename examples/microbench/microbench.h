/* What the memory microbenchmarks share: options, the clock, the cache geometry, iterations marked with the
 * explicit SelfAnalyzer API and memory traffic reported with cosched_report_bytes (both no-ops without a
 * resource manager), and one result line.
 *
 *   bbma         Bus-Bandwidth-Monopolising Application (Antonopoulos et al. §3): column-wise writes over an
 *                array much larger than the last-level cache, every write a new line from memory
 *   nbbma        its opposite: row-wise writes over an array half the size of L2, ~100 % hits
 *   stream-copy  a STREAM-like copy a[i] = b[i] over two large arrays: what the memory sustains
 *
 * Bytes are counted as the memory sees them: a line fetched, a dirty line written back. Work is reported with
 * cosched_report_work in elements written, in blocks of MB_WORK_BLOCK (a few per millisecond), so that the
 * co-scheduling policies' progress rate is precise over a 100 ms quantum. */
#ifndef COSCHED_MICROBENCH_H
#define COSCHED_MICROBENCH_H

#include <cosched/selfanalyzer.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Writes per cosched_report_work call: one atomic add per 16 Ki writes costs nothing measurable. */
#define MB_WORK_BLOCK 16384L

static inline double mb_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of the whole process (all its threads): on a loaded machine bytes / CPU time is the rate while
 * running, which wall time hides. */
static inline double mb_cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline long mb_sysconf(int name, long fallback) {
  long v = sysconf(name);
  return v > 0 ? v : fallback;
}

/* Size in bytes of CPU 0's unified or data cache of `level`, from sysfs (glibc's sysconf can be far off
 * in a VM: 320 MiB of L3 for a 32 MiB one here); 0 when there is none. */
static inline long mb_sysfs_cache(int level) {
  for (int i = 0; i < 16; ++i) {
    char path[128];
    int lv = 0;
    char type[32] = "";
    char size[32] = "";
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    FILE* f = fopen(path, "r");
    if (f == NULL) break;
    if (fscanf(f, "%d", &lv) != 1) lv = 0;
    fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
    if ((f = fopen(path, "r")) != NULL) {
      if (fscanf(f, "%31s", type) != 1) type[0] = 0;
      fclose(f);
    }
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    if ((f = fopen(path, "r")) != NULL) {
      if (fscanf(f, "%31s", size) != 1) size[0] = 0;
      fclose(f);
    }
    if (lv != level || !strcmp(type, "Instruction")) continue;
    char* end = NULL;
    long v = strtol(size, &end, 10);
    if (end != NULL && (*end == 'K' || *end == 'k')) v <<= 10;
    if (end != NULL && *end == 'M') v <<= 20;
    if (v > 0) return v;
  }
  return 0;
}

static inline long mb_line(void) { return mb_sysconf(_SC_LEVEL1_DCACHE_LINESIZE, 64); }
static inline long mb_l2(void) {
  long v = mb_sysfs_cache(2);
  return v > 0 ? v : mb_sysconf(_SC_LEVEL2_CACHE_SIZE, 256L << 10);
}
/* The last-level cache: L3 where there is one. */
static inline long mb_llc(void) {
  long v = mb_sysfs_cache(3);
  return v > 0 ? v : mb_sysconf(_SC_LEVEL3_CACHE_SIZE, mb_l2());
}

/* The default size of an array that must live in memory, not in the cache: 4 times the last-level cache, at
 * least 64 MiB, and at most 1 GiB (our choice: a 2-vCPU firecracker guest without sysfs cache entries reports
 * a 508 MiB L3 through sysconf, and 4 times that made every start of bbma allocate and touch 2 GiB, 3.4 s,
 * which cosched-rm --calibrate pays at each of its runs; 1 GiB still exceeds that L3 twice). */
static inline double mb_memory_array_bytes(void) {
  const double mib = 1048576.0;
  double size = 4.0 * (double)mb_llc();
  if (size < 64 * mib) size = 64 * mib;
  if (size > 1024 * mib) size = 1024 * mib;
  return size;
}

struct mb_options {
  double size_bytes;  /* 0: the program's default */
  double seconds;     /* run this long (default 10) unless iterations > 0 */
  long iterations;
  int threads;        /* 0: OMP_NUM_THREADS / the runtime's default */
  int verbose;        /* a line per iteration */
  int quiet;
};

static inline void mb_usage(const char* prog, const char* what, const char* size_help) {
  printf("usage: %s [--size-mb M | --size-kb K] [--seconds S | --iterations N] [--threads T] [--verbose] [--quiet]\n"
         "  %s\n"
         "  --size-mb M, --size-kb K  %s\n"
         "  --seconds S       run S seconds (default 10)\n"
         "  --iterations N    run N iterations instead\n"
         "  --threads T       OpenMP threads (omp_set_num_threads: under cosched this fixes the team; prefer\n"
         "                    OMP_NUM_THREADS or cosched-run --request)\n"
         "  --verbose         one line per iteration: iter I time S\n"
         "  --quiet           only the result line\n"
         "Result line: result PROG threads T size_bytes B iterations N seconds S iter_ms M bytes X cpu_s C\n"
         "  gbps_per_cpu R gbps G   (G: bytes per wall second; R: per CPU second of its threads)\n",
         prog, what, size_help);
}

static inline int mb_parse(int argc, char** argv, struct mb_options* o, const char* prog, const char* what,
                    const char* size_help) {
  memset(o, 0, sizeof *o);
  o->seconds = 10;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      mb_usage(prog, what, size_help);
      exit(0);
    } else if (!strcmp(a, "--verbose")) {
      o->verbose = 1;
    } else if (!strcmp(a, "--quiet")) {
      o->quiet = 1;
    } else if (v != NULL && !strcmp(a, "--size-mb")) {
      o->size_bytes = atof(v) * 1048576.0, ++i;
    } else if (v != NULL && !strcmp(a, "--size-kb")) {
      o->size_bytes = atof(v) * 1024.0, ++i;
    } else if (v != NULL && !strcmp(a, "--seconds")) {
      o->seconds = atof(v), ++i;
    } else if (v != NULL && !strcmp(a, "--iterations")) {
      o->iterations = atol(v), ++i;
    } else if (v != NULL && !strcmp(a, "--threads")) {
      o->threads = atoi(v), ++i;
    } else {
      fprintf(stderr, "%s: unknown or incomplete option '%s' (--help)\n", prog, a);
      return 2;
    }
  }
  if (o->seconds <= 0 && o->iterations <= 0) {
    fprintf(stderr, "%s: --seconds or --iterations must be positive\n", prog);
    return 2;
  }
  if (o->threads > 0) omp_set_num_threads(o->threads);
  return 0;
}

/* Arrays on 2 MiB boundaries, asking for transparent huge pages where the kernel gives them only on request
 * (enabled=madvise, Debian's default): touching a 1 GiB array page by page took 2.8 s of a 3-s bbma run on
 * a firecracker guest, and cosched-rm --calibrate starts nine such runs. Where THP is off this is a no-op. */
static inline void* mb_alloc(size_t bytes) {
  const size_t huge = (size_t)2 << 20;
  void* p = NULL;
  if (posix_memalign(&p, bytes >= huge ? huge : 4096, bytes) != 0) {
    fprintf(stderr, "cannot allocate %zu bytes\n", bytes);
    exit(1);
  }
#ifdef MADV_HUGEPAGE
  if (bytes >= huge) (void)madvise(p, bytes - bytes % huge, MADV_HUGEPAGE);
#endif
  return p;
}

/* Runs `step(iteration)` (which returns the bytes it moved) until the options say stop, marking each
 * iteration for the SelfAnalyzer and reporting its bytes; prints the result line. */
typedef double (*mb_step_fn)(long iteration, void* ctx);

static inline void mb_run(const char* prog, const struct mb_options* o, double size_bytes, mb_step_fn step, void* ctx) {
  const double t0 = mb_now();
  const double c0 = mb_cpu();
  double bytes = 0;
  long n = 0;
  int threads = 1;
#pragma omp parallel
  {
#pragma omp single
    threads = omp_get_num_threads();
  }
  for (;;) {
    if (o->iterations > 0 ? n >= o->iterations : mb_now() - t0 >= o->seconds) break;
    const double ti = mb_now();
    cosched_iter_begin(1);
    const double b = step(n, ctx);
    cosched_iter_end(1);
    cosched_report_bytes((uint64_t)b);
    bytes += b;
    ++n;
    if (o->verbose) printf("iter %ld time %.6f\n", n, mb_now() - ti);
  }
  const double t = mb_now() - t0;
  const double cpu = mb_cpu() - c0;
  /* gbps: over wall time; gbps_per_cpu: over the CPU time the threads got, per thread (the rate while running) */
  printf("result %s threads %d size_bytes %.0f iterations %ld seconds %.3f iter_ms %.3f bytes %.0f cpu_s %.3f "
         "gbps_per_cpu %.3f gbps %.3f\n",
         prog, threads, size_bytes, n, t, n > 0 ? t / (double)n * 1e3 : 0.0, bytes, cpu,
         cpu > 0 ? bytes / cpu / 1e9 : 0.0, t > 0 ? bytes / t / 1e9 : 0.0);
}

#endif
