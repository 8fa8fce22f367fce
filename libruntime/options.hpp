// Environment options read once by libcosched at initialisation (never on the hot path).
#pragma once

#include <string>

namespace cosched::rt {

// COSCHED_TEAM: who decides team sizes (docs/usage.md). automatic: cosched resizes only regions where no
// guarantee is at stake; malleable: the program adapts to any team size (cosched-run --malleable; also
// OMP_DYNAMIC=true); fixed: never resize, only the job's CPUs change (cosched-run --fixed-team).
enum class TeamOption { automatic, malleable, fixed };

struct Options {
  std::string socket;         // COSCHED_SOCKET, else the default path
  int request = 0;            // COSCHED_REQUEST, else OMP_NUM_THREADS, else the CPUs we may run on
  bool quiet = false;         // COSCHED_QUIET=1: no warning lines
  int connect_timeout_ms = 2000;  // COSCHED_CONNECT_TIMEOUT_MS
  bool disabled = false;      // COSCHED_DISABLE=1: the tool does nothing at all
  int baseline_cpus = 1;      // COSCHED_BASELINE (SelfAnalyzer baseline allocation)
  int baseline_iterations = 3;  // COSCHED_BASELINE_ITERATIONS
  // COSCHED_MAX_PERIOD: longest period (regions per iteration) the detector searches. Real applications run
  // hundreds of regions per time step (a hydrodynamics proxy: about 490); the per-region cost does not grow
  // with it, only the detector's memory (about 40 bytes per lag, docs/performance.md).
  int max_period = 1024;
  bool debug = false;         // COSCHED_DEBUG=1: measurement summary at program end
  TeamOption team = TeamOption::automatic;  // COSCHED_TEAM=automatic|malleable|fixed
  bool measure = true;        // COSCHED_MEASURE=0: no SelfAnalyzer (team sizes only, no reports)
  // COSCHED_SAMPLE_MS: the sampler thread's tick in milliseconds (efficiency_sampler.hpp), 1 to 1000; 0: no
  // sampler, so no waiting-time efficiency.
  int sample_ms = 4;
  // How long workers a team released keep spinning (KMP_BLOCKTIME, OMP_WAIT_POLICY; sa::released_spin_s).
  double released_spin_s = 0.2;
  // COSCHED_OVERSUBSCRIBED_YIELD=0: leave libomp's blocktime alone in oversubscribed regions (spin_control.hpp).
  bool oversubscribed_yield = true;
  // COSCHED_PARKED_ROOTS=0: no parked roots that make libomp yield in oversubscribed regions (parked_roots.hpp).
  bool parked_roots = true;
  // A job of several processes (an MPI job): its identity, shared by all its processes, and this process's
  // rank. COSCHED_JOB (cosched-run --job) wins; else Open MPI's job environment (PMIX_NAMESPACE, the same on
  // every node of one mpirun). Empty: a job of its own.
  std::string job_key;
  int rank = 0;               // COSCHED_RANK, else OMPI_COMM_WORLD_RANK
  int local_ranks = 0;        // COSCHED_LOCAL_RANKS, else OMPI_COMM_WORLD_LOCAL_SIZE; 0 unknown
};

Options read_options();

// One warning line on stderr, prefixed "cosched: ", unless quiet. Safe before main and in any thread.
void warn(bool quiet, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace cosched::rt
