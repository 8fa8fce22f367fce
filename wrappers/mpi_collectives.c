/* libcosched_mpi: the collectives, blocking and nonblocking (docs/usage.md, "Network bytes").
 *
 * A collective counts its logical point-to-point payload: what this rank's buffers send to or receive from
 * the other n−1 ranks of the communicator, so that over a job the bytes out and the bytes in sum to the same
 * total. E.g. an Allreduce of c bytes is c(n−1) out and c(n−1) in; a Bcast is c(n−1) out at the root and c in
 * elsewhere; a Gatherv's root receives Σ_{i≠root} recvcounts[i]; a Scan at rank r sends c to the n−1−r ranks
 * above it and receives c from the r below. With MPI_IN_PLACE a rank's own contribution is the part of the
 * receive buffer the standard says it is. A nonblocking collective counts the same, at the call (its counts
 * are fixed when it is posted). Intracommunicators: on an intercommunicator the sizes are the local group's,
 * so the counts are not exact there. */
#include <mpi.h>
#include <stdint.h>

#include "mpi_count.h"

#define COSCHED_EXPORT __attribute__((visibility("default")))

/* Σ over i ≠ skip of counts[i] elements of `type` (a rank's exchange with everybody else). */
static uint64_t sum_except(const int counts[], MPI_Datatype type, int n, int skip) {
  uint64_t total = 0;
  for (int i = 0; i < n; ++i) {
    if (i != skip) total += bytes(counts[i], type);
  }
  return total;
}

/* The same with one type per peer (Alltoallw). */
static uint64_t sum_except_w(const int counts[], const MPI_Datatype types[], int n, int skip) {
  uint64_t total = 0;
  for (int i = 0; i < n; ++i) {
    if (i != skip) total += bytes(counts[i], types[i]);
  }
  return total;
}

/* ---- what each collective moves (shared by the blocking and the nonblocking call) ---- */

static void count_bcast(int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const uint64_t b = bytes(count, type);
  if (rank_in(comm) == root) collective(b * others(comm), 0);
  else collective(0, b);
}

static void count_reduce(int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const uint64_t b = bytes(count, type);
  if (rank_in(comm) == root) collective(0, b * others(comm));
  else collective(b, 0);
}

static void count_allreduce(int count, MPI_Datatype type, MPI_Comm comm) {
  const uint64_t b = bytes(count, type) * others(comm);
  collective(b, b);
}

static void count_gather(int sendcount, MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype, int root,
                         MPI_Comm comm) {
  if (rank_in(comm) == root) collective(0, bytes(recvcount, recvtype) * others(comm));
  else collective(bytes(sendcount, sendtype), 0);
}

static void count_gatherv(int sendcount, MPI_Datatype sendtype, const int recvcounts[], MPI_Datatype recvtype, int root,
                          MPI_Comm comm) {
  const int me = rank_in(comm);
  if (me == root) collective(0, sum_except(recvcounts, recvtype, comm_size(comm), root));
  else collective(bytes(sendcount, sendtype), 0);
}

static void count_scatter(int sendcount, MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype, int root,
                          MPI_Comm comm) {
  if (rank_in(comm) == root) collective(bytes(sendcount, sendtype) * others(comm), 0);
  else collective(0, bytes(recvcount, recvtype));
}

static void count_scatterv(const int sendcounts[], MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype, int root,
                           MPI_Comm comm) {
  const int me = rank_in(comm);
  if (me == root) collective(sum_except(sendcounts, sendtype, comm_size(comm), root), 0);
  else collective(0, bytes(recvcount, recvtype));
}

static void count_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
  const uint64_t n = others(comm);
  /* With MPI_IN_PLACE the contribution is recvcount elements of recvtype already in recvbuf. */
  const uint64_t out = sendbuf == MPI_IN_PLACE ? bytes(recvcount, recvtype) : bytes(sendcount, sendtype);
  collective(out * n, bytes(recvcount, recvtype) * n);
}

static void count_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, const int recvcounts[],
                             MPI_Datatype recvtype, MPI_Comm comm) {
  const int me = rank_in(comm), n = comm_size(comm);
  const uint64_t mine = sendbuf == MPI_IN_PLACE ? bytes(recvcounts[me], recvtype) : bytes(sendcount, sendtype);
  collective(mine * (uint64_t)(n - 1), sum_except(recvcounts, recvtype, n, me));
}

static void count_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm) {
  const uint64_t n = others(comm);
  const uint64_t out = sendbuf == MPI_IN_PLACE ? bytes(recvcount, recvtype) : bytes(sendcount, sendtype);
  collective(out * n, bytes(recvcount, recvtype) * n);
}

static void count_alltoallv(const void *sendbuf, const int sendcounts[], MPI_Datatype sendtype, const int recvcounts[],
                            MPI_Datatype recvtype, MPI_Comm comm) {
  const int me = rank_in(comm), n = comm_size(comm);
  const uint64_t in = sum_except(recvcounts, recvtype, n, me);
  /* In place, the send counts and type are ignored: each block goes back where the receive came from. */
  collective(sendbuf == MPI_IN_PLACE ? in : sum_except(sendcounts, sendtype, n, me), in);
}

static void count_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Datatype sendtypes[],
                            const int recvcounts[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  const int me = rank_in(comm), n = comm_size(comm);
  const uint64_t in = sum_except_w(recvcounts, recvtypes, n, me);
  collective(sendbuf == MPI_IN_PLACE ? in : sum_except_w(sendcounts, sendtypes, n, me), in);
}

/* Each rank's block i (recvcounts[i] elements) goes to rank i, and its own block comes from everybody. */
static void count_reduce_scatter(const int recvcounts[], MPI_Datatype type, MPI_Comm comm) {
  const int me = rank_in(comm), n = comm_size(comm);
  collective(sum_except(recvcounts, type, n, me), bytes(recvcounts[me], type) * (uint64_t)(n - 1));
}

static void count_reduce_scatter_block(int recvcount, MPI_Datatype type, MPI_Comm comm) {
  const uint64_t b = bytes(recvcount, type) * others(comm);
  collective(b, b);
}

/* Scan and Exscan: rank r's contribution reaches the n−1−r ranks above it; it receives the r below. */
static void count_scan(int count, MPI_Datatype type, MPI_Comm comm) {
  const uint64_t b = bytes(count, type);
  const int me = rank_in(comm), n = comm_size(comm);
  collective(b * (uint64_t)(n - 1 - me), b * (uint64_t)me);
}

/* ---- blocking ---- */

COSCHED_EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  count_bcast(count, type, root, comm);
  return PMPI_Bcast(buf, count, type, root, comm);
}

COSCHED_EXPORT int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                              MPI_Comm comm) {
  count_reduce(count, type, root, comm);
  return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
}

COSCHED_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                                 MPI_Comm comm) {
  count_allreduce(count, type, comm);
  return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
}

COSCHED_EXPORT int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm) {
  count_gather(sendcount, sendtype, recvcount, recvtype, root, comm);
  return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

COSCHED_EXPORT int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                               const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  count_gatherv(sendcount, sendtype, recvcounts, recvtype, root, comm);
  return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
}

COSCHED_EXPORT int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                               MPI_Datatype recvtype, int root, MPI_Comm comm) {
  count_scatter(sendcount, sendtype, recvcount, recvtype, root, comm);
  return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

COSCHED_EXPORT int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  count_scatterv(sendcounts, sendtype, recvcount, recvtype, root, comm);
  return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

COSCHED_EXPORT int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  count_allgather(sendbuf, sendcount, sendtype, recvcount, recvtype, comm);
  return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

COSCHED_EXPORT int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  count_allgatherv(sendbuf, sendcount, sendtype, recvcounts, recvtype, comm);
  return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

COSCHED_EXPORT int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  count_alltoall(sendbuf, sendcount, sendtype, recvcount, recvtype, comm);
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

COSCHED_EXPORT int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                                 void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                                 MPI_Comm comm) {
  count_alltoallv(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm);
  return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}

COSCHED_EXPORT int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                 const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                 const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  count_alltoallw(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes, comm);
  return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
}

COSCHED_EXPORT int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype type,
                                      MPI_Op op, MPI_Comm comm) {
  count_reduce_scatter(recvcounts, type, comm);
  return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
}

COSCHED_EXPORT int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type,
                                            MPI_Op op, MPI_Comm comm) {
  count_reduce_scatter_block(recvcount, type, comm);
  return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
}

COSCHED_EXPORT int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  count_scan(count, type, comm);
  return PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
}

COSCHED_EXPORT int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  count_scan(count, type, comm);
  return PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm);
}

/* ---- nonblocking: the same counts, at the call ---- */

COSCHED_EXPORT int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *req) {
  count_bcast(count, type, root, comm);
  return PMPI_Ibcast(buf, count, type, root, comm, req);
}

COSCHED_EXPORT int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                               MPI_Comm comm, MPI_Request *req) {
  count_reduce(count, type, root, comm);
  return PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, req);
}

COSCHED_EXPORT int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                                  MPI_Comm comm, MPI_Request *req) {
  count_allreduce(count, type, comm);
  return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, req);
}

COSCHED_EXPORT int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                               MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *req) {
  count_gather(sendcount, sendtype, recvcount, recvtype, root, comm);
  return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, req);
}

COSCHED_EXPORT int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                                MPI_Comm comm, MPI_Request *req) {
  count_gatherv(sendcount, sendtype, recvcounts, recvtype, root, comm);
  return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, req);
}

COSCHED_EXPORT int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *req) {
  count_scatter(sendcount, sendtype, recvcount, recvtype, root, comm);
  return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, req);
}

COSCHED_EXPORT int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                                 MPI_Request *req) {
  count_scatterv(sendcounts, sendtype, recvcount, recvtype, root, comm);
  return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, req);
}

COSCHED_EXPORT int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req) {
  count_allgather(sendbuf, sendcount, sendtype, recvcount, recvtype, comm);
  return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req);
}

COSCHED_EXPORT int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                   MPI_Request *req) {
  count_allgatherv(sendbuf, sendcount, sendtype, recvcounts, recvtype, comm);
  return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, req);
}

COSCHED_EXPORT int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req) {
  count_alltoall(sendbuf, sendcount, sendtype, recvcount, recvtype, comm);
  return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req);
}

COSCHED_EXPORT int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req) {
  count_alltoallv(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm);
  return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, req);
}

COSCHED_EXPORT int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *req) {
  count_alltoallw(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes, comm);
  return PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, req);
}

COSCHED_EXPORT int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype type,
                                       MPI_Op op, MPI_Comm comm, MPI_Request *req) {
  count_reduce_scatter(recvcounts, type, comm);
  return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, req);
}

COSCHED_EXPORT int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type,
                                             MPI_Op op, MPI_Comm comm, MPI_Request *req) {
  count_reduce_scatter_block(recvcount, type, comm);
  return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, req);
}

COSCHED_EXPORT int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                             MPI_Request *req) {
  count_scan(count, type, comm);
  return PMPI_Iscan(sendbuf, recvbuf, count, type, op, comm, req);
}

COSCHED_EXPORT int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                               MPI_Comm comm, MPI_Request *req) {
  count_scan(count, type, comm);
  return PMPI_Iexscan(sendbuf, recvbuf, count, type, op, comm, req);
}
