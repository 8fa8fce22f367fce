/* nbbma: the non-Bus-Bandwidth-Monopolising Application of Antonopoulos et al. (§3): the same writes, row by
 * row, over an array half the size of L2: after the first pass every access hits. It reports the bytes of
 * that first pass (the compulsory misses) and 0 afterwards — "this program moves nothing" is a reading too.
 * One iteration is --passes passes over the array (default 64); OpenMP threads split the lines. Work
 * (cosched_report_work): one unit per write, reported after each pass. */
#include "microbench.h"

struct nbbma {
  double* a;
  long n;  /* doubles */
  long passes;
};

static double passes(long it, void* ctx) {
  struct nbbma* b = ctx;
  double* a = b->a;
  for (long p = 0; p < b->passes; ++p) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < b->n; ++i) a[i] += 1.0;
    cosched_report_work((uint64_t)b->n);
  }
  return it == 0 ? (double)b->n * sizeof(double) : 0.0;
}

int main(int argc, char** argv) {
  long npasses = 64;
  /* --passes P is ours; the rest are the shared options. */
  for (int i = 1; i + 1 < argc; ++i) {
    if (!strcmp(argv[i], "--passes")) {
      npasses = atol(argv[i + 1]);
      memmove(&argv[i], &argv[i + 2], (size_t)(argc - i - 2) * sizeof *argv);
      argc -= 2;
      break;
    }
  }
  struct mb_options o;
  int rc = mb_parse(argc, argv, &o, "nbbma", "row-wise writes over a cache-resident array (also --passes P per "
                    "iteration, default 64)", "array size (default half of L2)");
  if (rc != 0) return rc;
  struct nbbma b;
  const double size = o.size_bytes > 0 ? o.size_bytes : (double)mb_l2() / 2.0;
  b.n = (long)(size / sizeof(double));
  if (b.n < 1) b.n = 1;
  b.passes = npasses > 0 ? npasses : 1;
  b.a = mb_alloc((size_t)b.n * sizeof(double));
  memset(b.a, 0, (size_t)b.n * sizeof(double));
  if (!o.quiet) printf("nbbma: %.1f KiB (L2 %.1f KiB), %ld passes per iteration\n", (double)b.n * 8 / 1024.0,
                       (double)mb_l2() / 1024.0, b.passes);
  mb_run("nbbma", &o, (double)b.n * sizeof(double), passes, &b);
  free(b.a);
  return 0;
}
