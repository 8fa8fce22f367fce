// What launching a program under cosched means, as environment changes: shared by cosched-run (which sets
// them in its own environment and execs the program) and the Slurm SPANK plugin (which sets them in a task's
// environment), so that a `--cosched` Slurm task runs exactly as under cosched-run.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace cosched::launcher {

// What the user asked for (cosched-run's options).
struct LaunchSettings {
  std::string socket;        // COSCHED_SOCKET
  int request = 0;           // COSCHED_REQUEST; 0: leave it to libcosched (OMP_NUM_THREADS, else the CPUs we may use)
  bool quiet = false;
  bool no_gomp = false;      // never preload LLVM libomp: a libgomp program runs on libgomp, natively
  bool no_wrap = false;
  bool malleable = false;
  bool fixed_team = false;
  bool no_mpi = false;
  std::string job;           // COSCHED_JOB: the job this process is one of (empty: none)
  int rank = -1;             // COSCHED_RANK (-1: not set)
  int local_ranks = 0;       // COSCHED_LOCAL_RANKS (0: not set)
};

// Where our libraries are (cosched-run: next to itself; the plugin: next to itself, else the build tree).
struct LibraryPaths {
  std::string libcosched;
  std::string wrap;
  std::string mpi;
  std::string libomp;        // LLVM's libomp, preloaded into libgomp programs
};

struct EnvChange {
  std::string name;
  std::string value;
};

struct LaunchPlan {
  std::vector<EnvChange> env;  // to set, in order (LD_PRELOAD holds its whole new value)
  bool gomp = false;           // LLVM libomp preloaded: a libgomp the program loads (now or by dlopen) resolves to it
  bool relinked = false;       // the program links libcosched itself
  bool threadprivate = false;
  std::string wrap;            // the wrapper library preloaded, empty if none
  std::string mpi_lib;         // the PMPI wrappers preloaded, empty if none
  std::string client_tools;    // the user's OMPT tools, started by libcosched as its clients; empty if none
  std::string elf_note;        // why the program was not read as an ELF file (a script, say); empty if it was
  bool native = false;         // it loads an OpenMP runtime cosched cannot steer: no environment change at all
  std::vector<std::string> notes;     // for -v: the OpenMP runtime found in the program's libraries, and how
  std::vector<std::string> warnings;  // lines for the user (e.g. an MPI program without libcosched_mpi built)
};

using GetEnv = std::function<std::string(const char* name, bool& present)>;

// The environment a program needs to run under cosched. `program` is the resolved path of the executable;
// its OpenMP runtime is found among all the libraries it loads (program_runtime.hpp). Unless it loads LLVM
// libomp itself (or a runtime cosched cannot steer), libomp is preloaded: a script, an interpreter or a
// program that dlopens libgomp is then managed like a gcc program whose libgomp cosched-run saw
// (docs/architecture.md, "Interpreters and scripts"). `getenv` reads the environment the program will get.
LaunchPlan plan_launch(const std::string& program, const LaunchSettings& settings, const LibraryPaths& libs,
                       const GetEnv& getenv);

// What the shell would answer for `path`: 0 when it is a regular file we may execute, else its exit status
// (127: not there, 126: there but not executable) and `why`.
int check_program(const std::string& path, std::string& why);

// PATH search as the shell does it (directories are skipped); `prog` with a '/' is returned as it is; empty
// when nothing is found. `path_var` is the PATH to search.
std::string find_in_path(const std::string& prog, const std::string& path_var);

}  // namespace cosched::launcher
