/* libcosched_mpi: PMPI wrappers preloaded by cosched-run into programs that link libmpi.
 *
 * - MPI_Init / MPI_Init_thread register the rank with the node's RM under its job's key (libcosched's
 *   cosched_mpi_attach): all ranks of one mpirun are one job for the policies, one gang for time sharing.
 * - Every point-to-point send and receive (here) and every collective (mpi_collectives.c) adds its payload to
 *   three counters in the rank's arena (bytes out, bytes in, messages): the counter-free network sensor the
 *   RM turns into BW^N per quantum (MemBUS, Koukis & Koziris §4; the paper reads DMA counters in Myrinet
 *   firmware, §5.3, which a loopback or a kernel-bypass NIC does not offer us; counting at the MPI interface
 *   is exact for what the program asks MPI to move).
 *
 * When (docs/usage.md, "Network bytes", lists every call): sends at the call, nonblocking ones included (the
 * payload is fixed when posted); blocking receives (MPI_Recv, MPI_Sendrecv, MPI_Sendrecv_replace, MPI_Mrecv)
 * from their status, i.e. what arrived; nonblocking receives (MPI_Irecv, MPI_Imrecv) at the post, with the
 * posted count, because counting at completion would mean following every request through the MPI_Wait and
 * MPI_Test families with a table shared by all threads (a lock or a lock-free set on the hot path) and
 * statuses of our own where the program passes MPI_STATUSES_IGNORE (an allocation for Waitall of n
 * requests); that is exact when the posted count is the message's size, as in halo exchanges, and an upper
 * bound otherwise; the bytes then land at most one wait early, within MemBUS's window of quanta.
 *
 * Per message: two relaxed atomic adds for a send, one for a receive, a PMPI_Type_size for types other than
 * the common predefined ones, a PMPI_Get_count for a blocking receive; no syscall, lock or allocation. */
#include <mpi.h>
#include <stdint.h>

#include "mpi_count.h"

#define COSCHED_EXPORT __attribute__((visibility("default")))

/* libcosched (libruntime/mpi_bridge.cpp): registers the rank if the OpenMP tool has not, and returns where
 * to count. */
uint64_t *cosched_mpi_attach(void);

/* Until MPI_Init: a sink, so that the counting path needs no test (a program may call nothing before it). */
static uint64_t g_sink[3];
uint64_t *cosched_mpi_counts = g_sink;

static void attach(void) { cosched_mpi_counts = cosched_mpi_attach(); }

COSCHED_EXPORT int MPI_Init(int *argc, char ***argv) {
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) attach();
  return rc;
}

COSCHED_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) attach();
  return rc;
}

/* ---- point to point ---- */

COSCHED_EXPORT int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  sent(count, type);
  return PMPI_Send(buf, count, type, dest, tag, comm);
}

COSCHED_EXPORT int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  sent(count, type);
  return PMPI_Ssend(buf, count, type, dest, tag, comm);
}

COSCHED_EXPORT int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  sent(count, type);
  return PMPI_Bsend(buf, count, type, dest, tag, comm);
}

COSCHED_EXPORT int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  sent(count, type);
  return PMPI_Rsend(buf, count, type, dest, tag, comm);
}

COSCHED_EXPORT int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                             MPI_Request *req) {
  sent(count, type);
  return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}

COSCHED_EXPORT int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                              MPI_Request *req) {
  sent(count, type);
  return PMPI_Issend(buf, count, type, dest, tag, comm, req);
}

COSCHED_EXPORT int MPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                              MPI_Request *req) {
  sent(count, type);
  return PMPI_Ibsend(buf, count, type, dest, tag, comm, req);
}

COSCHED_EXPORT int MPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                              MPI_Request *req) {
  sent(count, type);
  return PMPI_Irsend(buf, count, type, dest, tag, comm, req);
}

COSCHED_EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                            MPI_Status *status) {
  MPI_Status own;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
  int rc = PMPI_Recv(buf, count, type, source, tag, comm, st);
  if (rc == MPI_SUCCESS) received(st);
  return rc;
}

COSCHED_EXPORT int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                                MPI_Comm comm, MPI_Status *status) {
  MPI_Status own;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
  sent(sendcount, sendtype);
  int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                         recvtag, comm, st);
  if (rc == MPI_SUCCESS) received(st);
  return rc;
}

COSCHED_EXPORT int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source,
                                        int recvtag, MPI_Comm comm, MPI_Status *status) {
  MPI_Status own;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
  sent(count, type);
  int rc = PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, st);
  if (rc == MPI_SUCCESS) received(st);
  return rc;
}

COSCHED_EXPORT int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status) {
  MPI_Status own;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
  int rc = PMPI_Mrecv(buf, count, type, message, st);
  if (rc == MPI_SUCCESS) received(st);
  return rc;
}

/* Nonblocking receives: the posted count, at the post (top of the file). */

COSCHED_EXPORT int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                             MPI_Request *req) {
  int rc = PMPI_Irecv(buf, count, type, source, tag, comm, req);
  if (rc == MPI_SUCCESS) posted(count, type);
  return rc;
}

COSCHED_EXPORT int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *req) {
  int rc = PMPI_Imrecv(buf, count, type, message, req);
  if (rc == MPI_SUCCESS) posted(count, type);
  return rc;
}
