// cosched-run: launches an unmodified OpenMP binary under cosched.
//
//   clang/libomp binary  → OMP_TOOL_LIBRARIES=libcosched.so (libomp loads the tool)
//   gcc/libgomp binary   → additionally LD_PRELOAD=LLVM libomp, which exports the GOMP_* entry points, so
//                          the same OMPT path serves both compilers
//   relinked binary      → already links libcosched: only the environment is set
// The program replaces this process (exec), so its pid is the job's pid and its exit status is ours.
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cosched/cli.hpp"
#include "cosched/wire.hpp"
#include "elf_needed.hpp"

namespace fs = std::filesystem;

namespace {

// What the shell would answer for `path`: 0 when it is a regular file we may execute, else its exit status
// (127: not there, 126: there but not executable) and `why`. A directory or a FIFO with the exec bit
// passes access(X_OK), but reading one for its ELF header threw (directory) or blocked for ever (FIFO).
int check_program(const std::string& path, std::string& why) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    why = std::strerror(errno);
    return errno == ENOENT || errno == ENOTDIR ? 127 : 126;
  }
  if (S_ISDIR(st.st_mode)) {
    why = "Is a directory";
    return 126;
  }
  if (!S_ISREG(st.st_mode)) {
    why = "not a regular file";
    return 126;
  }
  if (::access(path.c_str(), X_OK) != 0) {
    why = std::strerror(errno);
    return 126;
  }
  return 0;
}

// PATH search as the shell does it: the first executable regular file (directories are skipped).
std::string find_in_path(const std::string& prog) {
  if (prog.find('/') != std::string::npos) return prog;
  const char* path = std::getenv("PATH");
  std::string p = path != nullptr ? path : "/usr/bin:/bin";
  std::size_t pos = 0;
  while (pos <= p.size()) {
    auto end = p.find(':', pos);
    if (end == std::string::npos) end = p.size();
    std::string dir = p.substr(pos, end - pos);
    std::string cand = (dir.empty() ? "." : dir) + "/" + prog;
    std::string why;
    if (check_program(cand, why) == 0) return cand;
    pos = end + 1;
  }
  return {};
}

// A library of ours next to us: installed layout (bin/ → lib/) first, then the build tree.
std::string find_ours(const char* installed_rel, const char* build_path) {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path installed = self.parent_path() / installed_rel;
    if (fs::exists(installed)) return fs::weakly_canonical(installed).string();
  }
  return build_path;
}

std::string find_libcosched() {
  if (const char* env = std::getenv("COSCHED_LIBRARY"); env != nullptr && *env != '\0') return env;
  return find_ours(COSCHED_INSTALL_LIB_REL, COSCHED_BUILD_LIB_PATH);
}

bool has(const std::vector<std::string>& v, const std::string& prefix) {
  for (const auto& s : v) {
    if (s.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

void prepend_env(const char* name, const std::string& value) {
  const char* old = std::getenv(name);
  std::string v = value;
  if (old != nullptr && *old != '\0') v += std::string(":") + old;
  ::setenv(name, v.c_str(), 1);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Launch an unmodified OpenMP program under the cosched resource manager.\n"
               "The program runs natively if no resource manager answers."};
  app.set_version_flag("--version", std::string("cosched-run ") + COSCHED_VERSION);
  std::string socket = cosched::wire::default_socket_path();
  int request = 0;
  bool quiet = false;
  bool force_gomp = false;
  bool verbose = false;
  bool no_wrap = false;
  bool malleable = false;
  bool fixed_team = false;
  bool no_mpi = false;
  std::string job;
  std::vector<std::string> command;
  app.add_option("--socket", socket, "RM socket (env COSCHED_SOCKET)")->capture_default_str();
  app.add_option("--request", request, "CPUs to ask for (default: OMP_NUM_THREADS, else all CPUs we may use)")
      ->check(CLI::Range(1, 1024));
  app.add_flag("--quiet,-q", quiet, "no warning lines from libcosched (COSCHED_QUIET=1)");
  app.add_flag("--gomp", force_gomp, "preload LLVM libomp even if the binary does not link libgomp directly");
  app.add_flag("--no-wrap", no_wrap,
               "do not preload libcosched_wrap (which lets cosched see the program read or set its team size); "
               "without it cosched never resizes the program's teams");
  auto* m = app.add_flag("--malleable", malleable,
                         "the program adapts to any team size: cosched may resize every region, down to 1 thread "
                         "(as with OMP_DYNAMIC=true; COSCHED_TEAM=malleable)");
  app.add_flag("--fixed-team", fixed_team,
               "never resize the program's teams, only narrow its CPUs (for codes that cache team sizes in "
               "ways cosched cannot see; COSCHED_TEAM=fixed)")
      ->excludes(m);
  app.add_option("--job", job,
                 "the job this process is one of (COSCHED_JOB): processes started with the same ID (e.g. the ranks "
                 "of one MPI job, by default identified from Open MPI's environment) are one job for the RM, "
                 "one gang for time sharing")
      ->check([](const std::string& v) {
        if (v.empty() || v.size() >= 64) return std::string("must be 1 to 63 characters");
        for (unsigned char ch : v) {
          if (ch < 0x21 || ch > 0x7e) return std::string("must be printable ASCII without spaces");
        }
        return std::string();
      });
  app.add_flag("--no-mpi", no_mpi, "do not preload libcosched_mpi into a program that links libmpi");
  app.add_flag("--verbose,-v", verbose, "print how the program is launched and the environment it gets");
  app.add_option("command", command, "PROGRAM [ARGS...] (after --)")->required();
  app.prefix_command(false);
  app.allow_extras(false);
  app.positionals_at_end();
  COSCHED_CLI_PARSE(app, argc, argv);

  std::string prog = find_in_path(command[0]);
  if (prog.empty()) {
    std::fprintf(stderr, "cosched-run: %s: command not found\n", command[0].c_str());
    return 127;
  }
  std::string why;
  if (int rc = check_program(prog, why); rc != 0) {
    std::fprintf(stderr, "cosched-run: %s: %s\n", prog.c_str(), why.c_str());
    return rc;
  }
  bool gomp = force_gomp;
  bool relinked = false;
  bool threadprivate = false;
  bool mpi = false;
  if (auto facts = cosched::launcher::elf_facts(prog); facts.ok()) {
    gomp = gomp || has(facts->needed, "libgomp.so");
    relinked = has(facts->needed, "libcosched.so");
    mpi = has(facts->needed, "libmpi.so");
    threadprivate = facts->threadprivate_imports;  // TLS libcosched finds by itself (dl_iterate_phdr)
  } else if (verbose) {
    std::fprintf(stderr, "cosched-run: %s (treating it as a clang/libomp program)\n", facts.error().message.c_str());
  }
  std::vector<std::string> set_vars;  // what -v prints
  auto set = [&](const char* name, const std::string& value) {
    ::setenv(name, value.c_str(), 1);
    set_vars.push_back(name);
  };

  set("COSCHED_SOCKET", socket);
  if (request > 0) set("COSCHED_REQUEST", std::to_string(request));
  if (quiet) set("COSCHED_QUIET", "1");
  if (malleable) set("COSCHED_TEAM", "malleable");
  if (fixed_team) set("COSCHED_TEAM", "fixed");
  if (threadprivate) set("COSCHED_THREADPRIVATE", "1");
  if (!job.empty()) set("COSCHED_JOB", job);
  std::string lib = find_libcosched();
  if (!relinked) set("OMP_TOOL_LIBRARIES", lib);
  set("OMP_TOOL", "enabled");
  // libomp's default affinity handling probes the topology by binding its first thread to every CPU of the
  // mask it saw at start-up, aborting on EINVAL, and later resets each new thread to that mask. Both race
  // with an RM that narrows the job's cpuset meanwhile (seen: "OMP: Error #100 ... System error #22").
  // The RM owns placement, so unless the user asked for binding explicitly, libomp must leave masks alone.
  if (std::getenv("KMP_AFFINITY") == nullptr && std::getenv("OMP_PROC_BIND") == nullptr &&
      std::getenv("OMP_PLACES") == nullptr && std::getenv("GOMP_CPU_AFFINITY") == nullptr) {
    set("KMP_AFFINITY", "disabled");
  }
  // LD_PRELOAD order matters: the wrappers must come before the runtime they forward to.
  if (gomp) {
    prepend_env("LD_PRELOAD", COSCHED_LIBOMP_PRELOAD);
    set("COSCHED_GOMP", "1");
  }
  std::string wrap;
  if (!no_wrap) {
    wrap = find_ours(COSCHED_INSTALL_WRAP_REL, COSCHED_BUILD_WRAP_PATH);
    prepend_env("LD_PRELOAD", wrap);
  }
  // An MPI program gets the PMPI wrappers (registration at MPI_Init, network bytes); they need libcosched,
  // which they load.
  std::string mpi_lib;
  if (mpi && !no_mpi) {
    mpi_lib = find_ours(COSCHED_INSTALL_MPI_REL, COSCHED_BUILD_MPI_PATH);
    std::error_code ec;
    if (fs::exists(mpi_lib, ec)) {
      prepend_env("LD_PRELOAD", mpi_lib);
    } else {
      if (!quiet) std::fprintf(stderr, "cosched-run: %s links libmpi but %s is not built; its ranks register only "
                                       "through OpenMP\n", prog.c_str(), mpi_lib.c_str());
      mpi_lib.clear();
    }
  }
  if (gomp || !no_wrap || !mpi_lib.empty()) set_vars.push_back("LD_PRELOAD");
  if (verbose) {
    std::fprintf(stderr, "cosched-run: %s (%s%s%s) socket=%s tool=%s%s%s\n", prog.c_str(),
                 gomp ? "libgomp → libomp" : "libomp", relinked ? ", relinked" : "",
                 threadprivate ? ", threadprivate" : "", socket.c_str(), lib.c_str(),
                 wrap.empty() ? "" : " wrappers=", wrap.c_str());
    if (!mpi_lib.empty()) std::fprintf(stderr, "cosched-run: MPI program: %s\n", mpi_lib.c_str());
    for (const auto& name : set_vars) std::fprintf(stderr, "cosched-run: %s=%s\n", name.c_str(), std::getenv(name.c_str()));
  }
  std::vector<char*> args;
  for (auto& a : command) args.push_back(a.data());
  args.push_back(nullptr);
  ::execv(prog.c_str(), args.data());
  int err = errno;
  std::fprintf(stderr, "cosched-run: cannot execute %s: %s\n", prog.c_str(), std::strerror(err));
  return err == ENOENT ? 127 : 126;  // the shell's conventions
}
