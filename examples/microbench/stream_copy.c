/* stream-copy: a STREAM-like copy (McCalpin), a[i] = b[i] over two arrays each 4 times the last-level cache
 * (at least 64 MiB, at most 1 GiB), split over the OpenMP threads: what the memory sustains. STREAM counts
 * 16 bytes per element (read b, write a); the memory also reads each line of a before it is written
 * (write-allocate), so this program reports 24 bytes per element, the traffic the memory really carries,
 * and prints both. One iteration is one copy. Work (cosched_report_work): one unit per element copied. */
#include "microbench.h"

struct copy {
  double* a;
  double* b;
  long n;
};

static double copy_once(long it, void* ctx) {
  (void)it;
  struct copy* c = ctx;
  double* restrict a = c->a;
  const double* restrict b = c->b;
#pragma omp parallel for schedule(static)
  for (long b0 = 0; b0 < c->n; b0 += MB_WORK_BLOCK) {
    const long end = b0 + MB_WORK_BLOCK < c->n ? b0 + MB_WORK_BLOCK : c->n;
    for (long i = b0; i < end; ++i) a[i] = b[i];
    cosched_report_work((uint64_t)(end - b0));
  }
  return (double)c->n * 24.0;
}

int main(int argc, char** argv) {
  struct mb_options o;
  int rc = mb_parse(argc, argv, &o, "stream-copy", "a[i] = b[i], the bandwidth the memory sustains",
                    "size of each array (default 4 x the last-level cache, at least 64 MiB, at most 1 GiB)");
  if (rc != 0) return rc;
  struct copy c;
  double size = o.size_bytes > 0 ? o.size_bytes : mb_memory_array_bytes();
  c.n = (long)(size / sizeof(double));
  c.a = mb_alloc((size_t)c.n * sizeof(double));
  c.b = mb_alloc((size_t)c.n * sizeof(double));
#pragma omp parallel for schedule(static)
  for (long i = 0; i < c.n; ++i) {
    c.a[i] = 0;
    c.b[i] = (double)i;
  }
  const double t0 = mb_now();
  mb_run("stream-copy", &o, (double)c.n * sizeof(double), copy_once, &c);
  (void)t0;
  if (!o.quiet) printf("stream-copy: STREAM's convention (16 bytes per element) is 2/3 of the gbps above\n");
  free(c.a);
  free(c.b);
  return 0;
}
