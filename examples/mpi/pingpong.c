/* pingpong: an MPI streaming ping-pong between ranks 2k and 2k+1 that keeps the interconnect busy (here
 * Open MPI's shared-memory loopback), for the network-heavy side of MemBUS tests and the wrapper's cost per
 * message (docs/performance.md).
 *
 *   mpirun -np 2 pingpong [BYTES] [SECONDS] [WINDOW]
 *
 * Rounds until SECONDS have passed (rank 0 decides, tells the others with the last message of a round): in
 * each round rank 2k posts WINDOW nonblocking sends of BYTES to 2k+1 and waits for one BYTES reply. With
 * BYTES = 8 it measures the per-message cost, with large BYTES the bandwidth. Prints, per rank:
 *   "pingpong rank <r> bytes_out <n> bytes_in <n> messages <n> seconds <t> MB/s <x> us_per_message <y>"
 * (bytes as the program sent and received them, for comparison with the PMPI wrappers' counts). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  const int bytes = argc > 1 ? atoi(argv[1]) : 1 << 20;
  const double seconds = argc > 2 ? atof(argv[2]) : 2.0;
  const int window = argc > 3 ? atoi(argv[3]) : 8;
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int partner = rank ^ 1;
  if (partner >= size || window < 1 || window > 1024 || bytes < 1) {
    if (rank == 0) fprintf(stderr, "pingpong: needs an even number of ranks, 1 <= WINDOW <= 1024, BYTES >= 1\n");
    MPI_Finalize();
    return 2;
  }
  char *buf = calloc((size_t)bytes * (size_t)window, 1);
  char *reply = calloc((size_t)bytes, 1);
  MPI_Request req[1024];
  long long out = 0, in = 0, messages = 0, rounds = 0;
  int go = 1;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  while (go) {
    ++rounds;
    if ((rank & 1) == 0) {
      for (int w = 0; w < window; ++w) {
        MPI_Isend(buf + (size_t)w * (size_t)bytes, bytes, MPI_BYTE, partner, w, MPI_COMM_WORLD, &req[w]);
      }
      MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
      MPI_Recv(reply, bytes, MPI_BYTE, partner, window, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      out += (long long)window * bytes;
      in += bytes;
      messages += window;
      go = MPI_Wtime() - t0 < seconds;
      MPI_Send(&go, 1, MPI_INT, partner, window + 1, MPI_COMM_WORLD);
      out += (long long)sizeof go;
      messages += 1;
    } else {
      for (int w = 0; w < window; ++w) {
        MPI_Recv(buf + (size_t)w * (size_t)bytes, bytes, MPI_BYTE, partner, w, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      MPI_Send(reply, bytes, MPI_BYTE, partner, window, MPI_COMM_WORLD);
      MPI_Recv(&go, 1, MPI_INT, partner, window + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      in += (long long)window * bytes + (long long)sizeof go;
      out += bytes;
      messages += 1;
    }
  }
  const double t = MPI_Wtime() - t0;
  /* A round carries WINDOW + 2 messages between the pair: the time per message of either rank. */
  printf("pingpong rank %d bytes_out %lld bytes_in %lld messages %lld seconds %.3f MB/s %.1f us_per_message %.3f\n",
         rank, out, in, messages, t, (double)(out + in) / t / 1e6, t * 1e6 / (double)(rounds * (window + 2)));
  free(buf);
  free(reply);
  MPI_Finalize();
  return 0;
}
