/* bbma: the Bus-Bandwidth-Monopolising Application of Antonopoulos et al. (§3): a two-dimensional array whose
 * rows are one cache line each, written column by column — the first element of every line, then the
 * second, ... Stored row-wise (C), so every write touches another line; the array is 4 times the last-level
 * cache, within 64 MiB to 1 GiB (the paper: twice its L2, which was its last level), so each line has been
 * evicted by the time its next element is written. Every write therefore costs a line from memory and a
 * dirty line written back: 2 × 64 bytes, reported with cosched_report_bytes. One iteration is one column
 * over all lines; OpenMP threads split the lines. Work (cosched_report_work): one unit per write. */
#include "microbench.h"

struct bbma {
  double* a;
  long lines;
  long per_line;  /* doubles per line */
  double line;
};

static double column(long it, void* ctx) {
  struct bbma* b = ctx;
  const long j = it % b->per_line;
  double* a = b->a;
  const long per_line = b->per_line;
  const long lines = b->lines;
  /* Blocks of lines, each reported as work when written (MB_WORK_BLOCK writes: a precise progress rate). */
#pragma omp parallel for schedule(static)
  for (long b0 = 0; b0 < lines; b0 += MB_WORK_BLOCK) {
    const long end = b0 + MB_WORK_BLOCK < lines ? b0 + MB_WORK_BLOCK : lines;
    for (long i = b0; i < end; ++i) a[i * per_line + j] += 1.0;
    cosched_report_work((uint64_t)(end - b0));
  }
  return (double)b->lines * 2.0 * b->line;
}

int main(int argc, char** argv) {
  struct mb_options o;
  int rc = mb_parse(argc, argv, &o, "bbma", "column-wise writes, one new line from memory per write",
                    "array size (default 4 x the last-level cache, at least 64 MiB, at most 1 GiB)");
  if (rc != 0) return rc;
  struct bbma b;
  b.line = (double)mb_line();
  b.per_line = (long)(b.line / sizeof(double));
  double size = o.size_bytes > 0 ? o.size_bytes : mb_memory_array_bytes();
  b.lines = (long)(size / b.line);
  if (b.lines < 1) b.lines = 1;
  b.a = mb_alloc((size_t)b.lines * (size_t)b.line);
#pragma omp parallel for schedule(static)
  for (long i = 0; i < b.lines * b.per_line; ++i) b.a[i] = 0;  /* first touch, by the threads that write */
  if (!o.quiet) {
    printf("bbma: %.1f MiB, %ld lines of %.0f bytes, last-level cache %.1f MiB\n", (double)b.lines * b.line / 1048576.0,
           b.lines, b.line, (double)mb_llc() / 1048576.0);
  }
  mb_run("bbma", &o, (double)b.lines * b.line, column, &b);
  free(b.a);
  return 0;
}
