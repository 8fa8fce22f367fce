#include "options.hpp"

#include <algorithm>

#include <sched.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cosched/wire.hpp"
#include "selfanalyzer/config.hpp"

namespace cosched::rt {

namespace {

// Parses a positive integer prefix ("4" or "4,2" for nested OMP_NUM_THREADS lists); 0 when absent/bad.
int leading_int(const char* s) {
  if (s == nullptr) return 0;
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (end == s || v < 1 || v > proto::kMaxCpus) return 0;
  return static_cast<int>(v);
}

int env_int(const char* name, int fallback) {
  int v = leading_int(std::getenv(name));
  return v > 0 ? v : fallback;
}

bool env_flag(const char* name) {
  const char* s = std::getenv(name);
  return s != nullptr && (std::strcmp(s, "1") == 0 || std::strcmp(s, "true") == 0 || std::strcmp(s, "yes") == 0);
}

int cpus_we_may_use() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

// A non-negative integer (ranks start at 0); -1 when absent or bad.
int env_rank(const char* name) {
  const char* s = std::getenv(name);
  if (s == nullptr || *s == '\0') return -1;
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  return *end == '\0' && v >= 0 && v < (1L << 30) ? static_cast<int>(v) : -1;
}

// The job identity of an MPI rank: cosched-run --job, else Open MPI's (docs/usage.md, "MPI jobs").
void read_job_identity(Options& o) {
  const char* key = std::getenv("COSCHED_JOB");
  const bool ompi = std::getenv("OMPI_COMM_WORLD_RANK") != nullptr;
  if (key != nullptr && *key != '\0') {
    o.job_key = key;
  } else if (ompi) {
    const char* ns = std::getenv("PMIX_NAMESPACE");
    if (ns == nullptr || *ns == '\0') ns = std::getenv("OMPI_MCA_ess_base_jobid");
    if (ns != nullptr && *ns != '\0') o.job_key = std::string("ompi:") + ns;
  }
  if (o.job_key.size() >= proto::kJobKeyMax) o.job_key.resize(proto::kJobKeyMax - 1);
  o.rank = env_rank("COSCHED_RANK");
  if (o.rank < 0) o.rank = env_rank("OMPI_COMM_WORLD_RANK");
  if (o.rank < 0) o.rank = 0;
  o.local_ranks = env_rank("COSCHED_LOCAL_RANKS");
  if (o.local_ranks < 0) o.local_ranks = env_rank("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (o.local_ranks < 0) o.local_ranks = 0;
}

}  // namespace

Options read_options() {
  Options o;
  o.socket = wire::default_socket_path();
  o.quiet = env_flag("COSCHED_QUIET");
  o.disabled = env_flag("COSCHED_DISABLE");
  o.debug = env_flag("COSCHED_DEBUG");
  o.request = env_int("COSCHED_REQUEST", 0);
  if (o.request == 0) o.request = leading_int(std::getenv("OMP_NUM_THREADS"));
  if (o.request == 0) o.request = cpus_we_may_use();
  o.connect_timeout_ms = env_int("COSCHED_CONNECT_TIMEOUT_MS", o.connect_timeout_ms);
  o.baseline_cpus = env_int("COSCHED_BASELINE", o.baseline_cpus);
  o.baseline_iterations = env_int("COSCHED_BASELINE_ITERATIONS", o.baseline_iterations);
  o.max_period = env_int("COSCHED_MAX_PERIOD", o.max_period);
  if (const char* t = std::getenv("COSCHED_TEAM"); t != nullptr) {
    if (std::strcmp(t, "malleable") == 0) {
      o.team = TeamOption::malleable;
    } else if (std::strcmp(t, "fixed") == 0) {
      o.team = TeamOption::fixed;
    } else if (std::strcmp(t, "automatic") != 0 && *t != '\0') {
      warn(o.quiet, "COSCHED_TEAM=%s is not one of automatic, malleable, fixed; using automatic", t);
    }
  }
  if (const char* m = std::getenv("COSCHED_MEASURE"); m != nullptr && std::strcmp(m, "0") == 0) o.measure = false;
  if (const char* ms = std::getenv("COSCHED_SAMPLE_MS"); ms != nullptr) {
    o.sample_ms = std::strcmp(ms, "0") == 0 ? 0 : std::clamp(env_int("COSCHED_SAMPLE_MS", o.sample_ms), 1, 1000);
  }
  o.released_spin_s = sa::released_spin_s(std::getenv("KMP_BLOCKTIME"), std::getenv("OMP_WAIT_POLICY"));
  if (const char* y = std::getenv("COSCHED_OVERSUBSCRIBED_YIELD"); y != nullptr && std::strcmp(y, "0") == 0) {
    o.oversubscribed_yield = false;
  }
  if (const char* r = std::getenv("COSCHED_PARKED_ROOTS"); r != nullptr && std::strcmp(r, "0") == 0) o.parked_roots = false;
  read_job_identity(o);
  return o;
}

void warn(bool quiet, const char* fmt, ...) {
  if (quiet) return;
  char line[512];
  int n = std::snprintf(line, sizeof line, "cosched: ");
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(line + n, sizeof line - static_cast<std::size_t>(n), fmt, ap);
  va_end(ap);
  std::size_t len = std::strlen(line);
  if (len + 1 < sizeof line) {
    line[len++] = '\n';
  }
  // One write(2) so lines from several threads do not interleave.
  ssize_t ignored = ::write(STDERR_FILENO, line, len);
  (void)ignored;
}

}  // namespace cosched::rt
