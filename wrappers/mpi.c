/* libcosched_mpi: PMPI wrappers preloaded by cosched-run into programs that link libmpi.
 *
 * - MPI_Init / MPI_Init_thread register the rank with the node's RM under its job's key (libcosched's
 *   cosched_mpi_attach): all ranks of one mpirun are one job for the policies, one gang for time sharing.
 * - Every point-to-point send and collective adds its payload to three counters in the rank's arena (bytes
 *   out, bytes in, messages): the counter-free network sensor the RM turns into BW^N per quantum (MemBUS,
 *   Koukis & Koziris §4; the paper reads DMA counters in Myrinet firmware, §5.3, which a loopback or a
 *   kernel-bypass NIC does not offer us; counting at the MPI interface is exact for what the program asks).
 *
 * Collectives count their logical point-to-point payload (docs/usage.md, "MPI jobs"): what this rank's
 * buffers send to or receive from the other n-1 ranks, e.g. an Allreduce of c bytes is c(n-1) out and c(n-1)
 * in, a Bcast is c(n-1) out at the root and c in elsewhere; so a job's bytes out and bytes in sum to the same
 * total. Nonblocking receives are counted by their sender only (their size is known at completion, in a
 * Wait/Test the wrappers do not follow).
 *
 * Per message: two relaxed atomic adds, a PMPI_Type_size for types other than the common predefined ones,
 * a PMPI_Get_count for a blocking receive; no syscall, lock or allocation. */
#include <mpi.h>
#include <stdint.h>

#define COSCHED_EXPORT __attribute__((visibility("default")))

/* libcosched (libruntime/mpi_bridge.cpp): registers the rank if the OpenMP tool has not, and returns where
 * to count. */
uint64_t *cosched_mpi_attach(void);

/* Until MPI_Init: a sink, so that the counting path needs no test (a program may call nothing before it). */
static uint64_t g_sink[3];
static uint64_t *g_counts = g_sink;

enum { kOut = 0, kIn = 1, kMessages = 2 };

static inline void add(int which, uint64_t n) { __atomic_fetch_add(&g_counts[which], n, __ATOMIC_RELAXED); }

/* The size of the commonest predefined types without a call into MPI (its argument checks cost more than
 * the rest of the wrapper); any other type asks PMPI_Type_size. */
static inline int predefined_size(MPI_Datatype type) {
  if (type == MPI_BYTE || type == MPI_CHAR || type == MPI_UNSIGNED_CHAR || type == MPI_PACKED) return 1;
  if (type == MPI_DOUBLE) return (int)sizeof(double);
  if (type == MPI_INT) return (int)sizeof(int);
  if (type == MPI_LONG) return (int)sizeof(long);
  if (type == MPI_LONG_LONG) return (int)sizeof(long long);
  if (type == MPI_FLOAT) return (int)sizeof(float);
  if (type == MPI_UNSIGNED) return (int)sizeof(unsigned);
  if (type == MPI_UINT64_T) return (int)sizeof(uint64_t);
  return 0;
}

static inline uint64_t bytes(int count, MPI_Datatype type) {
  if (count <= 0) return 0;
  int size = predefined_size(type);
  if (size == 0 && (PMPI_Type_size(type, &size) != MPI_SUCCESS || size <= 0)) return 0;
  return (uint64_t)count * (uint64_t)size;
}

static inline uint64_t others(MPI_Comm comm) {
  int n = 1;
  if (PMPI_Comm_size(comm, &n) != MPI_SUCCESS || n < 1) return 0;
  return (uint64_t)(n - 1);
}

static inline int rank_in(MPI_Comm comm) {
  int r = 0;
  PMPI_Comm_rank(comm, &r);
  return r;
}

static inline void sent(int count, MPI_Datatype type) {
  add(kOut, bytes(count, type));
  add(kMessages, 1);
}

static inline void received(const MPI_Status *st) {
  int n = 0;
  if (PMPI_Get_count(st, MPI_BYTE, &n) == MPI_SUCCESS && n > 0) add(kIn, (uint64_t)n);
}

static void attach(void) { g_counts = cosched_mpi_attach(); }

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

/* ---- collectives: logical point-to-point payload (see the top of the file) ---- */

static inline void collective(uint64_t out, uint64_t in) {
  add(kOut, out);
  add(kIn, in);
  add(kMessages, 1);
}

COSCHED_EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const uint64_t b = bytes(count, type);
  if (rank_in(comm) == root) collective(b * others(comm), 0);
  else collective(0, b);
  return PMPI_Bcast(buf, count, type, root, comm);
}

COSCHED_EXPORT int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                              MPI_Comm comm) {
  const uint64_t b = bytes(count, type);
  if (rank_in(comm) == root) collective(0, b * others(comm));
  else collective(b, 0);
  return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
}

COSCHED_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                                 MPI_Comm comm) {
  const uint64_t b = bytes(count, type) * others(comm);
  collective(b, b);
  return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
}

COSCHED_EXPORT int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (rank_in(comm) == root) collective(0, bytes(recvcount, recvtype) * others(comm));
  else collective(bytes(sendcount, sendtype), 0);
  return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

COSCHED_EXPORT int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                               MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (rank_in(comm) == root) collective(bytes(sendcount, sendtype) * others(comm), 0);
  else collective(0, bytes(recvcount, recvtype));
  return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

COSCHED_EXPORT int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const uint64_t n = others(comm);
  /* With MPI_IN_PLACE the contribution is recvcount elements of recvtype already in recvbuf. */
  const uint64_t out = sendbuf == MPI_IN_PLACE ? bytes(recvcount, recvtype) : bytes(sendcount, sendtype);
  collective(out * n, bytes(recvcount, recvtype) * n);
  return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

COSCHED_EXPORT int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const uint64_t n = others(comm);
  const uint64_t out = sendbuf == MPI_IN_PLACE ? bytes(recvcount, recvtype) : bytes(sendcount, sendtype);
  collective(out * n, bytes(recvcount, recvtype) * n);
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
