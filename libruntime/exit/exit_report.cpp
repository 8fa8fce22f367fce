// The line a program launched by cosched-run gets at exit when it never reached the RM.
//
// cosched-run execs the program (its pid is the job's, and qsubmit and Slurm rely on that), so nothing of
// cosched-run is left to watch the program end. libcosched is in the program whenever cosched-run
// preloads its wrappers (which depend on it) or a runtime loads the tool, so the check lives here, in a
// library destructor: it runs at exit() and at the return from main (not on _exit or a fatal signal).
// cosched-run puts its pid in COSCHED_RUN_PID; only the process with that pid — the program, or whatever
// it exec'd — reports, never a child it forked. A process without any OpenMP runtime is not an OpenMP
// program and gets no line. So every OpenMP program cosched-run starts that never registers gets one line:
// rm_client.cpp's when the RM could not be reached or refused it, this one when nothing tried.
#include <link.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "libruntime/launcher/openmp_runtimes.hpp"
#include "libruntime/options.hpp"
#include "libruntime/rm_client.hpp"

namespace cosched::rt {
namespace {

using launcher::KnownRuntime;
using launcher::OmpRuntime;

struct MappedRuntimes {
  const char* path[4] = {nullptr, nullptr, nullptr, nullptr};  // by OmpRuntime: the first library of each kind
  const char* what[4] = {"", "", "", ""};
};

int collect(dl_phdr_info* info, std::size_t /*size*/, void* data) {
  auto* out = static_cast<MappedRuntimes*>(data);
  const char* name = info->dlpi_name;
  if (name == nullptr || *name == '\0') return 0;
  const char* slash = std::strrchr(name, '/');
  const KnownRuntime* r = launcher::known_runtime(slash != nullptr ? slash + 1 : name);
  if (r == nullptr) return 0;
  const auto k = static_cast<int>(r->kind);
  if (out->path[k] == nullptr) {
    out->path[k] = name;  // the loader's own string: valid while the library is mapped
    out->what[k] = r->what;
  }
  return 0;
}

// As options.cpp reads its flags.
bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && (std::strcmp(v, "1") == 0 || std::strcmp(v, "true") == 0 || std::strcmp(v, "yes") == 0);
}

__attribute__((destructor)) void report_unregistered_at_exit() {
  const char* launched = std::getenv("COSCHED_RUN_PID");
  if (launched == nullptr || std::strtol(launched, nullptr, 10) != static_cast<long>(::getpid())) return;
  if (env_set("COSCHED_QUIET") || env_set("COSCHED_DISABLE")) return;
  // A failed registration (RM unreachable, refused) said so in one line when it happened, while the user
  // can still act on it: the program gets that one line, not a second at exit.
  if (rm_registration() != Registration::never_tried) return;
  MappedRuntimes rt;
  ::dl_iterate_phdr(&collect, &rt);
  const char* prog = program_invocation_short_name;
  const int pid = static_cast<int>(::getpid());
  const char* unsteerable = rt.path[static_cast<int>(OmpRuntime::unsteerable)];
  const char* gomp = rt.path[static_cast<int>(OmpRuntime::gomp)];
  const char* llvm = rt.path[static_cast<int>(OmpRuntime::llvm)];
  if (unsteerable != nullptr) {
    warn(false, "%s (pid %d) never reached the resource manager: it ran %s (%s), which cosched cannot steer",
         prog, pid, rt.what[static_cast<int>(OmpRuntime::unsteerable)], unsteerable);
  } else if (gomp != nullptr && llvm == nullptr) {
    // libgomp has no tool interface; cosched-run preloads libomp in front of it unless told not to, so
    // this process ran with --no-gomp, or replaced the LD_PRELOAD it was given.
    warn(false,
         "%s (pid %d) never reached the resource manager: it ran libgomp (%s), which cannot load cosched, "
         "without LLVM libomp preloaded in front of it (cosched-run --no-gomp, or an LD_PRELOAD replaced)",
         prog, pid, gomp);
  }
  // Otherwise: no OpenMP runtime at all (not an OpenMP program), or libomp that never started OpenMP
  // (it loads the tool at its first OpenMP call): nothing to say.
}

}  // namespace
}  // namespace cosched::rt
