/* What the PMPI wrappers (mpi.c: registration and point to point; mpi_collectives.c) share: where to count,
 * and payload sizes. Every count is a relaxed atomic add into the rank's arena (bytes out, bytes in, and
 * messages: one per send and per collective call): no syscall, lock or allocation. docs/usage.md, "Network bytes", lists what is counted when. */
#ifndef COSCHED_MPI_COUNT_H
#define COSCHED_MPI_COUNT_H

#include <mpi.h>
#include <stdint.h>

/* The three counters: a sink until MPI_Init attaches the rank's arena (mpi.c). */
extern uint64_t *cosched_mpi_counts __attribute__((visibility("hidden")));

enum { kOut = 0, kIn = 1, kMessages = 2 };

static inline void add(int which, uint64_t n) { __atomic_fetch_add(&cosched_mpi_counts[which], n, __ATOMIC_RELAXED); }

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

static inline int comm_size(MPI_Comm comm) {
  int n = 1;
  if (PMPI_Comm_size(comm, &n) != MPI_SUCCESS || n < 1) return 1;
  return n;
}

static inline uint64_t others(MPI_Comm comm) { return (uint64_t)(comm_size(comm) - 1); }

static inline int rank_in(MPI_Comm comm) {
  int r = 0;
  PMPI_Comm_rank(comm, &r);
  return r;
}

/* A send of `count` elements (at the call: a nonblocking send's payload is fixed when it is posted). */
static inline void sent(int count, MPI_Datatype type) {
  add(kOut, bytes(count, type));
  add(kMessages, 1);
}

/* A completed receive: what arrived, from its status. Not a message: its sender counted it (one atomic add
 * fewer per receive, ~5 ns here). */
static inline void received(const MPI_Status *st) {
  int n = 0;
  if (PMPI_Get_count(st, MPI_BYTE, &n) == MPI_SUCCESS && n > 0) add(kIn, (uint64_t)n);
}

/* A posted nonblocking receive: the posted count (mpi.c says why at post time). */
static inline void posted(int count, MPI_Datatype type) { add(kIn, bytes(count, type)); }

/* One collective call: this rank's logical point-to-point payload out and in. */
static inline void collective(uint64_t out, uint64_t in) {
  add(kOut, out);
  add(kIn, in);
  add(kMessages, 1);
}

#endif /* COSCHED_MPI_COUNT_H */
