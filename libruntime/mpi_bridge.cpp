// What libcosched offers the PMPI wrappers (wrappers/mpi.c, libcosched_mpi.so): registration at MPI_Init for
// ranks that have not met the OpenMP tool yet (a pure MPI program never does), and where to count network
// bytes. Not part of the public API (include/cosched/selfanalyzer.h): only libcosched_mpi calls it.
#include <dlfcn.h>

#include <atomic>
#include <cstdint>

#include "options.hpp"
#include "rm_client.hpp"
#include "tool_state.hpp"

namespace {

// Where a rank counts when no RM manages it: the counts go nowhere, and the wrappers need no branch.
std::atomic<std::uint64_t> g_unmanaged_counts[3];

}  // namespace

extern "C" {

// Registers this rank with the node's RM under its job's key (options.cpp, read_job_identity) unless the
// OpenMP tool did it already, and returns three counters for the wrappers' relaxed adds: bytes out, bytes
// in, messages. They live in the rank's arena when an RM manages it. Called once, from MPI_Init.
__attribute__((visibility("default"))) std::uint64_t* cosched_mpi_attach(void) {
  using namespace cosched::rt;
  Options opt = read_options();
  if (!opt.disabled) {
    // A rank that never enters OpenMP asks for one CPU; one whose program links an OpenMP runtime asks for
    // its native team (OMP_NUM_THREADS, else the CPUs it may use), as the OpenMP tool would.
    if (std::getenv("COSCHED_REQUEST") == nullptr && ::dlsym(RTLD_DEFAULT, "omp_get_max_threads") == nullptr) {
      opt.request = 1;
    }
    if (rm_register(opt, false)) rm_start_watcher();
  }
  static_assert(sizeof(std::atomic<std::uint64_t>) == sizeof(std::uint64_t));
  if (g_tool.managed.load(std::memory_order_acquire) && g_tool.arena != nullptr) {
    return reinterpret_cast<std::uint64_t*>(&g_tool.arena->job.net_bytes_out);
  }
  return reinterpret_cast<std::uint64_t*>(&g_unmanaged_counts[0]);
}

}  // extern "C"
