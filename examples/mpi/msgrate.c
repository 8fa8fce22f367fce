/* msgrate: the cost of one small message inside one rank (a send to itself and its receive), for the PMPI
 * wrappers' cost per message side by side with a run without them (bench/mpi/wrapper_cost.sh). One process:
 * no partner to wait for, so the figure is CPU time per message, free of the scheduler's noise.
 *
 *   mpirun -np 1 msgrate [MESSAGES] [BYTES]
 * Prints "msgrate messages <n> bytes <b> ns_per_message <t>" (one MPI_Isend + MPI_Recv + MPI_Wait each). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  const long messages = argc > 1 ? atol(argv[1]) : 2000000;
  const int bytes = argc > 2 ? atoi(argv[2]) : 8;
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char *out = calloc((size_t)bytes + 1, 1), *in = calloc((size_t)bytes + 1, 1);
  MPI_Request req;
  for (long i = 0; i < messages / 10; ++i) {  /* warm up */
    MPI_Isend(out, bytes, MPI_BYTE, rank, 0, MPI_COMM_WORLD, &req);
    MPI_Recv(in, bytes, MPI_BYTE, rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  const double t0 = MPI_Wtime();
  for (long i = 0; i < messages; ++i) {
    MPI_Isend(out, bytes, MPI_BYTE, rank, 0, MPI_COMM_WORLD, &req);
    MPI_Recv(in, bytes, MPI_BYTE, rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  const double t = MPI_Wtime() - t0;
  if (rank == 0) printf("msgrate messages %ld bytes %d ns_per_message %.1f\n", messages, bytes, t * 1e9 / (double)messages);
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
