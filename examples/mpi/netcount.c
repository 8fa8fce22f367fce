/* netcount: one call of every kind the PMPI wrappers count (docs/usage.md, "Network bytes"), with sizes that
 * differ by rank, and this program's own count of its payload by the rules that section states; for the test
 * that the RM's status shows exactly these bytes (tests/integration/test_mpi.py).
 *
 *   mpirun -np N cosched-run -- netcount [HOLD_S]        (N >= 2; 3 gives every rooted call a distinct root)
 *
 * Prints "rank <r> out <bytes> in <bytes>" and holds HOLD_S seconds (default 0) before MPI_Finalize, so that a
 * test can read the RM's view. Point to point: sends count at the call, blocking receives what arrived,
 * nonblocking receives the posted count (here always the message's size). Collectives: the logical
 * point-to-point payload between this rank and the n-1 others. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t out_bytes, in_bytes;

static void count(uint64_t out, uint64_t in) {
  out_bytes += out;
  in_bytes += in;
}

int main(int argc, char **argv) {
  const double hold_s = argc > 1 ? atof(argv[1]) : 0.0;
  MPI_Init(&argc, &argv);
  int r = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const int right = (r + 1) % n, left = (r + n - 1) % n;
  const uint64_t others = (uint64_t)(n - 1);
  char *buf = calloc(1 << 16, 1), *buf2 = calloc(1 << 16, 1);
  double *d = calloc(1 << 13, sizeof(double)), *d2 = calloc(1 << 13, sizeof(double));
  int *counts = calloc((size_t)n, sizeof(int)), *counts2 = calloc((size_t)n, sizeof(int));
  int *displs = calloc((size_t)n, sizeof(int)), *displs2 = calloc((size_t)n, sizeof(int));
  MPI_Datatype *types = calloc((size_t)n, sizeof(MPI_Datatype));
  MPI_Request req[8];
#define S(rank) (1000 + 100 * (rank)) /* bytes rank `rank` sends to its right */

  /* ---- point to point ---- */
  MPI_Isend(buf, S(r), MPI_BYTE, right, 1, MPI_COMM_WORLD, &req[0]);
  MPI_Irecv(buf2, S(left), MPI_BYTE, left, 1, MPI_COMM_WORLD, &req[1]);
  MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  count(S(r), S(left));
  MPI_Sendrecv(buf, 10 + r, MPI_INT, right, 2, buf2, 10 + left, MPI_INT, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  count(4 * (uint64_t)(10 + r), 4 * (uint64_t)(10 + left));
  MPI_Sendrecv_replace(d, 16, MPI_DOUBLE, right, 3, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  count(128, 128);
  MPI_Isend(buf, 7 * (r + 1), MPI_CHAR, right, 4, MPI_COMM_WORLD, &req[0]);
  MPI_Message msg;
  MPI_Status st;
  MPI_Mprobe(left, 4, MPI_COMM_WORLD, &msg, &st);
  MPI_Mrecv(buf2, 1 << 16, MPI_CHAR, &msg, MPI_STATUS_IGNORE); /* a larger buffer: what arrived counts */
  MPI_Wait(&req[0], MPI_STATUS_IGNORE);
  count(7 * (uint64_t)(r + 1), 7 * (uint64_t)(left + 1));
  MPI_Send(buf, 300, MPI_BYTE, right, 5, MPI_COMM_WORLD);  /* eager at this size: the ring cannot deadlock */
  MPI_Recv(buf2, 1 << 16, MPI_BYTE, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  count(300, 300);

  /* ---- blocking collectives ---- */
  MPI_Bcast(buf, 500, MPI_BYTE, 0, MPI_COMM_WORLD);
  count(r == 0 ? 500 * others : 0, r == 0 ? 0 : 500);
  const int reduce_root = 1 % n;
  MPI_Reduce(d, d2, 8, MPI_DOUBLE, MPI_SUM, reduce_root, MPI_COMM_WORLD);
  count(r == reduce_root ? 0 : 64, r == reduce_root ? 64 * others : 0);
  MPI_Allreduce(d, d2, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  count(32 * others, 32 * others);
  /* Gatherv to 0, the root in place: rank i gives 5 + i ints. */
  uint64_t gathered = 0;
  for (int i = 0; i < n; ++i) {
    counts[i] = 5 + i;
    displs[i] = i == 0 ? 0 : displs[i - 1] + counts[i - 1];
    if (i != 0) gathered += 4 * (uint64_t)counts[i];
  }
  MPI_Gatherv(r == 0 ? MPI_IN_PLACE : (void *)buf, 5 + r, MPI_INT, buf2, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
  count(r == 0 ? 0 : 4 * (uint64_t)(5 + r), r == 0 ? gathered : 0);
  /* Scatterv from the last rank: rank i gets 7 + 2i doubles. */
  const int scatter_root = n - 1;
  uint64_t scattered = 0;
  for (int i = 0; i < n; ++i) {
    counts[i] = 7 + 2 * i;
    displs[i] = i == 0 ? 0 : displs[i - 1] + counts[i - 1];
    if (i != scatter_root) scattered += 8 * (uint64_t)counts[i];
  }
  MPI_Scatterv(d, counts, displs, MPI_DOUBLE, d2, 7 + 2 * r, MPI_DOUBLE, scatter_root, MPI_COMM_WORLD);
  count(r == scatter_root ? scattered : 0, r == scatter_root ? 0 : 8 * (uint64_t)(7 + 2 * r));
  /* Allgatherv in place: rank i gives 3 + i ints. */
  uint64_t from_others = 0;
  for (int i = 0; i < n; ++i) {
    counts[i] = 3 + i;
    displs[i] = i == 0 ? 0 : displs[i - 1] + counts[i - 1];
    if (i != r) from_others += 4 * (uint64_t)counts[i];
  }
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf2, counts, displs, MPI_INT, MPI_COMM_WORLD);
  count(4 * (uint64_t)(3 + r) * others, from_others);
  /* Alltoallv: rank i sends 1 + i + 2j bytes to rank j. */
  uint64_t to_all = 0, from_all = 0;
  for (int j = 0; j < n; ++j) {
    counts[j] = 1 + r + 2 * j;
    counts2[j] = 1 + j + 2 * r;
    displs[j] = j == 0 ? 0 : displs[j - 1] + counts[j - 1];
    displs2[j] = j == 0 ? 0 : displs2[j - 1] + counts2[j - 1];
    if (j != r) {
      to_all += (uint64_t)counts[j];
      from_all += (uint64_t)counts2[j];
    }
  }
  MPI_Alltoallv(buf, counts, displs, MPI_BYTE, buf2, counts2, displs2, MPI_BYTE, MPI_COMM_WORLD);
  count(to_all, from_all);
  /* Alltoallw: one int to and from everybody, each with its own type argument. */
  for (int j = 0; j < n; ++j) {
    counts[j] = 1;
    displs[j] = 4 * j;
    types[j] = MPI_INT;
  }
  MPI_Alltoallw(buf, counts, displs, types, buf2, counts, displs, types, MPI_COMM_WORLD);
  count(4 * others, 4 * others);
  /* Reduce_scatter: block i (2 + i doubles) ends at rank i. */
  uint64_t blocks_out = 0;
  for (int i = 0; i < n; ++i) {
    counts[i] = 2 + i;
    if (i != r) blocks_out += 8 * (uint64_t)counts[i];
  }
  MPI_Reduce_scatter(d, d2, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  count(blocks_out, 8 * (uint64_t)(2 + r) * others);
  MPI_Reduce_scatter_block(d, d2, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  count(16 * others, 16 * others);
  MPI_Scan(d, d2, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  count(24 * (uint64_t)(n - 1 - r), 24 * (uint64_t)r);
  MPI_Exscan(d, d2, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  count(8 * (uint64_t)(n - 1 - r), 8 * (uint64_t)r);
  MPI_Barrier(MPI_COMM_WORLD); /* no payload */

  /* ---- nonblocking collectives: the same rules, counted when posted ---- */
  int k = 0;
  MPI_Ibcast(buf, 100, MPI_BYTE, reduce_root, MPI_COMM_WORLD, &req[k++]);
  count(r == reduce_root ? 100 * others : 0, r == reduce_root ? 0 : 100);
  MPI_Iallreduce(buf, buf2, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[k++]);
  count(8 * others, 8 * others);
  MPI_Ireduce(d, d2, 5, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD, &req[k++]);
  count(r == 0 ? 0 : 40, r == 0 ? 40 * others : 0);
  MPI_Iallgather(buf, 6, MPI_BYTE, buf2, 6, MPI_BYTE, MPI_COMM_WORLD, &req[k++]);
  count(6 * others, 6 * others);
  MPI_Iscan(d, d2, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req[k++]);
  count(16 * (uint64_t)(n - 1 - r), 16 * (uint64_t)r);
  MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
  k = 0;
  for (int j = 0; j < n; ++j) {
    counts[j] = 1 + r + 2 * j;
    counts2[j] = 1 + j + 2 * r;
    displs[j] = j == 0 ? 0 : displs[j - 1] + counts[j - 1];
    displs2[j] = j == 0 ? 0 : displs2[j - 1] + counts2[j - 1];
  }
  MPI_Ialltoallv(buf, counts, displs, MPI_BYTE, buf2, counts2, displs2, MPI_BYTE, MPI_COMM_WORLD, &req[k++]);
  count(to_all, from_all);
  MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
  k = 0;
  for (int i = 0; i < n; ++i) {
    counts[i] = 5 + i;
    displs[i] = i == 0 ? 0 : displs[i - 1] + counts[i - 1];
  }
  MPI_Igatherv(buf, 5 + r, MPI_INT, buf2, counts, displs, MPI_INT, 0, MPI_COMM_WORLD, &req[k++]);
  count(r == 0 ? 0 : 4 * (uint64_t)(5 + r), r == 0 ? gathered : 0); /* the root's own block stays */
  MPI_Waitall(k, req, MPI_STATUSES_IGNORE);

  printf("rank %d out %llu in %llu\n", r, (unsigned long long)out_bytes, (unsigned long long)in_bytes);
  fflush(stdout);
  if (hold_s > 0) usleep((useconds_t)(hold_s * 1e6));
  free(buf);
  free(buf2);
  free(d);
  free(d2);
  free(counts);
  free(counts2);
  free(displs);
  free(displs2);
  free(types);
  MPI_Finalize();
  return 0;
}
