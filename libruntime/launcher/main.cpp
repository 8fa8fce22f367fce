// cosched-run: launches an unmodified OpenMP binary under cosched.
//
//   clang/libomp binary  → OMP_TOOL_LIBRARIES=libcosched.so (libomp loads the tool)
//   anything else        → additionally LD_PRELOAD=LLVM libomp, which exports the GOMP_* entry points, so
//                          the same OMPT path serves both compilers: a gcc binary (libgomp anywhere among
//                          the libraries it loads, found as the loader would: elf_closure.hpp), and a
//                          script or interpreter whose libgomp comes later (python3 importing scikit-learn)
//   unsteerable runtime  → (Intel's libiomp5, …) one warning line, and the program runs natively
//   relinked binary      → already links libcosched: only the environment is set
// The program replaces this process (exec), so its pid is the job's pid and its exit status is ours.
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
#include "launch_env.hpp"

namespace fs = std::filesystem;
namespace launcher = cosched::launcher;

namespace {

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

// Every option, and where its value lands: the options table, and nothing else.
struct RunArgs {
  launcher::LaunchSettings settings;
  bool gomp = false;  // accepted and ignored: preloading libomp for libgomp is the default
  bool verbose = false;
  bool report = false;
  std::vector<std::string> command;
};

bool printable_job_id(const std::string& v, std::string& why) {
  if (v.empty() || v.size() >= 64) {
    why = "must be 1 to 63 characters";
    return false;
  }
  for (unsigned char ch : v) {
    if (ch < 0x21 || ch > 0x7e) {
      why = "must be printable ASCII without spaces";
      return false;
    }
  }
  return true;
}

void add_options(CLI::App& app, RunArgs& a) {
  launcher::LaunchSettings& s = a.settings;
  app.set_version_flag("--version", std::string("cosched-run ") + COSCHED_VERSION);
  s.socket = cosched::wire::default_socket_path();
  app.add_option("--socket", s.socket, "RM socket (env COSCHED_SOCKET)")->capture_default_str();
  app.add_option("--request", s.request, "CPUs to ask for (default: OMP_NUM_THREADS, else all CPUs we may use)")
      ->check(CLI::Range(1, 1024));
  app.add_flag("--quiet,-q", s.quiet, "no warning lines from libcosched (COSCHED_QUIET=1)");
  auto* g = app.add_flag("--gomp", a.gomp, "preload LLVM libomp in front of libgomp: the default, accepted for "
                                           "scripts written when it was not");
  app.add_flag("--no-gomp", s.no_gomp,
               "never preload LLVM libomp: a gcc program, or one a script or an interpreter (python3) runs, keeps "
               "libgomp and runs natively; for programs that must keep their own OpenMP runtime")
      ->excludes(g);
  app.add_flag("--no-wrap", s.no_wrap,
               "do not preload libcosched_wrap (which lets cosched see the program read or set its team size); "
               "without it cosched never resizes the program's teams");
  auto* m = app.add_flag("--malleable", s.malleable,
                         "the program adapts to any team size: cosched may resize every region, down to 1 thread "
                         "(as with OMP_DYNAMIC=true; COSCHED_TEAM=malleable)");
  app.add_flag("--fixed-team", s.fixed_team,
               "never resize the program's teams, only narrow its CPUs (for codes that cache team sizes in "
               "ways cosched cannot see; COSCHED_TEAM=fixed)")
      ->excludes(m);
  app.add_option("--job", s.job,
                 "the job this process is one of (COSCHED_JOB): processes started with the same ID (e.g. the ranks "
                 "of one MPI job, by default identified from Open MPI's environment) are one job for the RM, "
                 "one gang for time sharing")
      ->check([](const std::string& v) {
        std::string why;
        return printable_job_id(v, why) ? std::string() : why;
      });
  app.add_flag("--no-mpi", s.no_mpi, "do not preload libcosched_mpi into a program that links libmpi");
  app.add_flag("--report", a.report,
               "at the program's end, print what its CPUs bought on standard error: the efficiency measured at "
               "each allocation, its CPU·seconds, and what fewer CPUs would have kept (COSCHED_REPORT=-; "
               "COSCHED_REPORT=FILE appends it to FILE)");
  app.add_flag("--verbose,-v", a.verbose, "print how the program is launched and the environment it gets");
  app.add_option("command", a.command, "PROGRAM [ARGS...] (after --)")->required();
  app.prefix_command(false);
  app.allow_extras(false);
  app.positionals_at_end();
}

launcher::LibraryPaths our_libraries() {
  launcher::LibraryPaths libs;
  libs.libcosched = find_libcosched();
  libs.wrap = find_ours(COSCHED_INSTALL_WRAP_REL, COSCHED_BUILD_WRAP_PATH);
  libs.mpi = find_ours(COSCHED_INSTALL_MPI_REL, COSCHED_BUILD_MPI_PATH);
  libs.libomp = COSCHED_LIBOMP_PRELOAD;
  return libs;
}

// --verbose: how the program is launched, and every variable it gets.
void describe_launch(const std::string& prog, const RunArgs& a, const launcher::LibraryPaths& libs,
                     const launcher::LaunchPlan& plan) {
  for (const auto& n : plan.notes) std::fprintf(stderr, "cosched-run: %s\n", n.c_str());
  if (!plan.elf_note.empty()) std::fprintf(stderr, "cosched-run: %s\n", plan.elf_note.c_str());
  if (plan.native) return;
  std::fprintf(stderr, "cosched-run: %s (%s%s%s) socket=%s tool=%s%s%s\n", prog.c_str(),
               plan.gomp ? "libomp preloaded for libgomp" : "libomp", plan.relinked ? ", relinked" : "",
               plan.threadprivate ? ", threadprivate" : "", a.settings.socket.c_str(), libs.libcosched.c_str(),
               plan.wrap.empty() ? "" : " wrappers=", plan.wrap.c_str());
  if (!plan.client_tools.empty()) {
    std::fprintf(stderr, "cosched-run: OMPT tools started by libcosched as its clients: %s\n",
                 plan.client_tools.c_str());
  }
  if (!plan.mpi_lib.empty()) std::fprintf(stderr, "cosched-run: MPI program: %s\n", plan.mpi_lib.c_str());
  for (const auto& e : plan.env) std::fprintf(stderr, "cosched-run: %s=%s\n", e.name.c_str(), e.value.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Launch an unmodified OpenMP program under the cosched resource manager.\n"
               "The program runs natively if no resource manager answers."};
  RunArgs a;
  add_options(app, a);
  COSCHED_CLI_PARSE(app, argc, argv);

  const char* path_var = std::getenv("PATH");
  std::string prog = launcher::find_in_path(a.command[0], path_var != nullptr ? path_var : "/usr/bin:/bin");
  if (prog.empty()) {
    std::fprintf(stderr, "cosched-run: %s: command not found\n", a.command[0].c_str());
    return 127;
  }
  std::string why;
  if (int rc = launcher::check_program(prog, why); rc != 0) {
    std::fprintf(stderr, "cosched-run: %s: %s\n", prog.c_str(), why.c_str());
    return rc;
  }
  const launcher::LibraryPaths libs = our_libraries();
  const auto plan = launcher::plan_launch(prog, a.settings, libs, [](const char* name, bool& present) {
    const char* v = std::getenv(name);
    present = v != nullptr;
    return std::string(v != nullptr ? v : "");
  });
  for (const auto& e : plan.env) ::setenv(e.name.c_str(), e.value.c_str(), 1);
  // exec keeps our pid: libcosched, in the program, knows by it that it is the process we launched and
  // says at exit when it never reached the RM (libruntime/exit/exit_report.cpp). Children get other pids.
  if (!plan.native) ::setenv("COSCHED_RUN_PID", std::to_string(::getpid()).c_str(), 1);
  if (a.report && !plan.native) ::setenv("COSCHED_REPORT", "-", 1);
  if (!a.settings.quiet) {
    for (const auto& w : plan.warnings) std::fprintf(stderr, "cosched-run: %s\n", w.c_str());
  }
  if (a.verbose) describe_launch(prog, a, libs, plan);
  std::vector<char*> args;
  for (auto& arg : a.command) args.push_back(arg.data());
  args.push_back(nullptr);
  ::execv(prog.c_str(), args.data());
  int err = errno;
  std::fprintf(stderr, "cosched-run: cannot execute %s: %s\n", prog.c_str(), std::strerror(err));
  return err == ENOENT ? 127 : 126;  // the shell's conventions
}
