/* hybrid: an MPI + OpenMP program with known traffic, for tests and demos (docs/usage.md, "MPI jobs").
 *
 *   mpirun -np 2 cosched-run -- hybrid [ITERATIONS] [BYTES] [WORK_MS] [HOLD_S]
 *
 * Each iteration every rank runs one OpenMP region (each thread spins WORK_MS / team milliseconds, so an
 * iteration takes about WORK_MS / team) and prints the team it saw inside it, then exchanges BYTES with its
 * partner (MPI_Sendrecv, rank r with r^1) — the ranks are coupled, as in a real code. At the end one
 * MPI_Allreduce of a double; each rank prints the bytes it sent and received as the PMPI wrappers count them
 * (docs: collectives count their logical point-to-point payload), then holds HOLD_S seconds before
 * MPI_Finalize so that a test can read the RM's view.
 *
 * Lines: "iter <i> team <n> rank <r>" per iteration; "rank <r> out <bytes> in <bytes>" at the end. */
#include <mpi.h>
#include <omp.h>
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

static double spin(double seconds) {
  double t0 = now_s(), x = 0;
  while (now_s() - t0 < seconds) x += 1e-9;
  return x;
}

int main(int argc, char **argv) {
  const int iterations = argc > 1 ? atoi(argv[1]) : 50;
  const int bytes = argc > 2 ? atoi(argv[2]) : 65536;
  const double work_ms = argc > 3 ? atof(argv[3]) : 40.0;
  const double hold_s = argc > 4 ? atof(argv[4]) : 0.0;
  int provided = 0, rank = 0, size = 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char *sendbuf = calloc((size_t)bytes + 1, 1), *recvbuf = calloc((size_t)bytes + 1, 1);
  const int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
  double sum = 0;
  for (int it = 0; it < iterations; ++it) {
    int team = 0;
#pragma omp parallel reduction(+ : sum)
    {
#pragma omp single
      team = omp_get_num_threads();
      sum += spin(work_ms / 1000.0 / omp_get_num_threads());
    }
    printf("iter %d team %d rank %d\n", it, team, rank);
    fflush(stdout);
    if (partner != rank) {
      MPI_Sendrecv(sendbuf, bytes, MPI_BYTE, partner, it, recvbuf, bytes, MPI_BYTE, partner, it, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
    }
  }
  double total = 0;
  MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  /* What the wrappers must have counted: the exchanges and the Allreduce's 8 bytes to each other rank. */
  const long long exchanged = partner != rank ? (long long)iterations * bytes : 0;
  const long long reduced = 8LL * (size - 1);
  printf("rank %d out %lld in %lld\n", rank, exchanged + reduced, exchanged + reduced);
  fflush(stdout);
  if (hold_s > 0) usleep((useconds_t)(hold_s * 1e6));
  MPI_Barrier(MPI_COMM_WORLD);
  free(sendbuf);
  free(recvbuf);
  MPI_Finalize();
  return total > 0 ? 0 : 1;
}
