/* A library with a large static TLS block, as OpenBLAS has (60 KiB of thread-local buffers; Debian's GROMACS
 * loads it at start-up through libgromacs). glibc places the static TLS of every library loaded at start-up
 * inside each new thread's stack, so a thread started with a small stack fails (EINVAL): libcosched's own
 * threads did, and it ran natively (tests/integration/test_tool_threads.py). */
#define TLS_HEAVY_BYTES (256 * 1024)

/* Exported, so that the compiler keeps it whole. */
__thread unsigned char tls_heavy_scratch[TLS_HEAVY_BYTES];

/* Fills this thread's tls_heavy_scratch with `seed` and returns its checksum: the TLS is really used. */
unsigned long tls_heavy_checksum(unsigned char seed) {
  unsigned long sum = 0;
  for (int i = 0; i < TLS_HEAVY_BYTES; i += 64) {
    tls_heavy_scratch[i] = (unsigned char)(seed + i / 64);
    sum += tls_heavy_scratch[i];
  }
  return sum;
}
