#include "launch_env.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "elf_needed.hpp"
#include "program_runtime.hpp"

namespace cosched::launcher {

namespace {

bool has(const std::vector<std::string>& v, const std::string& prefix) {
  for (const auto& s : v) {
    if (s.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// libomp starts one OMPT tool, the first in OMP_TOOL_LIBRARIES that accepts. libcosched takes that place
// and starts the user's tools itself as its clients (libruntime/ompt_client.hpp), from
// COSCHED_CLIENT_TOOL_LIBRARIES; a program that links libcosched keeps OMP_TOOL_LIBRARIES, which libcosched
// then reads itself.
void plan_tool_libraries(LaunchPlan& plan, const LibraryPaths& libs, const GetEnv& getenv) {
  bool user_set = false;
  bool client_set = false;
  const std::string user = getenv("OMP_TOOL_LIBRARIES", user_set);
  const std::string client = getenv("COSCHED_CLIENT_TOOL_LIBRARIES", client_set);
  if (plan.relinked) {
    plan.client_tools = client_set ? client : user;
    return;
  }
  const bool user_tools = !user.empty() && user != libs.libcosched;  // not a cosched-run inside cosched-run
  if (client_set) {
    plan.client_tools = client;
    if (user_tools && user != client) {
      plan.warnings.push_back("OMP_TOOL_LIBRARIES=" + user + " is not loaded: COSCHED_CLIENT_TOOL_LIBRARIES=" + client +
                              " names the OMPT tools libcosched starts instead");
    }
  } else if (user_tools) {
    plan.client_tools = user;
    plan.env.push_back({"COSCHED_CLIENT_TOOL_LIBRARIES", user});
  }
  plan.env.push_back({"OMP_TOOL_LIBRARIES", libs.libcosched});
}

}  // namespace

int check_program(const std::string& path, std::string& why) {
  // A directory or a FIFO with the exec bit passes access(X_OK), but reading one for its ELF header threw
  // (directory) or blocked for ever (FIFO).
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

std::string find_in_path(const std::string& prog, const std::string& path_var) {
  if (prog.find('/') != std::string::npos) return prog;
  const std::string& p = path_var;
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

namespace {

// Whether the user asked libomp for binding explicitly (then it binds as asked; see plan_launch).
bool user_binding(const GetEnv& getenv) {
  bool present = false;
  for (const char* name : {"KMP_AFFINITY", "OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY"}) {
    (void)getenv(name, present);
    if (present) return true;
  }
  return false;
}

// LD_PRELOAD: libomp for libgomp, the team-size wrappers, the PMPI wrappers, in front of what is there.
void plan_preloads(LaunchPlan& plan, const std::string& program, bool mpi, const LaunchSettings& s,
                   const LibraryPaths& libs, const GetEnv& getenv) {
  // LD_PRELOAD order matters: the wrappers must come before the runtime they forward to.
  bool present = false;
  std::string preload = getenv("LD_PRELOAD", present);
  // A program launched from a script that runs under cosched-run inherits the script's preloads: each
  // library once, in the order already there.
  auto prepend = [&](const std::string& lib) {
    if ((":" + preload + ":").find(":" + lib + ":") != std::string::npos) return;
    preload = preload.empty() ? lib : lib + ":" + preload;
  };
  if (plan.gomp) {
    prepend(libs.libomp);
    plan.env.push_back({"COSCHED_GOMP", "1"});
  }
  if (!s.no_wrap) {
    plan.wrap = libs.wrap;
    prepend(libs.wrap);
  }
  // An MPI program gets the PMPI wrappers (registration at MPI_Init, network bytes); they load libcosched.
  if (mpi && !s.no_mpi) {
    if (file_exists(libs.mpi)) {
      plan.mpi_lib = libs.mpi;
      prepend(libs.mpi);
    } else {
      plan.warnings.push_back(program + " links libmpi but " + libs.mpi +
                              " is not built; its ranks register only through OpenMP");
    }
  }
  if (plan.gomp || !s.no_wrap || !plan.mpi_lib.empty()) plan.env.push_back({"LD_PRELOAD", preload});
}

}  // namespace

LaunchPlan plan_launch(const std::string& program, const LaunchSettings& s, const LibraryPaths& libs,
                       const GetEnv& getenv) {
  LaunchPlan plan;
  bool mpi = false;
  bool present = false;
  // The OpenMP runtime comes from the whole program (its libraries' libraries too): program_runtime.cpp.
  const std::string ld_library_path = getenv("LD_LIBRARY_PATH", present);
  const ProgramRuntime runtime = program_runtime(program, ld_library_path, getenv("LD_PRELOAD", present));
  plan.notes = runtime.notes;
  if (runtime.kind == OmpRuntime::unsteerable) {  // nothing we could set would help: leave it alone
    plan.native = true;
    plan.warnings.push_back(runtime.warning);
    return plan;
  }
  // What a program will load is known only for what it links: python3 imports scikit-learn's libgomp, a
  // script runs gcc programs, a plugin host dlopens. Preloading libomp in front of all of them costs a
  // process that never starts OpenMP about 0.2 ms of loading (docs/performance.md, "Preloading libomp"),
  // so it is the default; only a program that brings LLVM libomp itself needs none.
  plan.gomp = !s.no_gomp && runtime.kind != OmpRuntime::llvm;
  if (runtime.readable && !plan.notes.empty() && runtime.kind != OmpRuntime::llvm) {
    // The runtime's line (program_runtime.cpp puts it last) says what the preload is for.
    plan.notes.back() += !plan.gomp ? "; libomp is not preloaded (--no-gomp)"
                         : runtime.kind == OmpRuntime::gomp
                             ? "; libomp is preloaded"
                             : "; libomp is preloaded, so that a libgomp it loads later (dlopen, an interpreter's "
                               "import) is managed";
  }
  if (auto facts = elf_facts(program); facts.ok()) {
    plan.relinked = has(facts->needed, "libcosched.so");
    mpi = has(facts->needed, "libmpi.so");
    plan.threadprivate = facts->threadprivate_imports;  // TLS libcosched finds by itself (dl_iterate_phdr)
  } else {
    plan.elf_note = unreadable_program_note(program, facts.error().message, plan.gomp);
  }
  auto set = [&](const char* name, const std::string& value) { plan.env.push_back({name, value}); };
  set("COSCHED_SOCKET", s.socket);
  if (s.request > 0) set("COSCHED_REQUEST", std::to_string(s.request));
  if (s.quiet) set("COSCHED_QUIET", "1");
  if (s.malleable) set("COSCHED_TEAM", "malleable");
  if (s.fixed_team) set("COSCHED_TEAM", "fixed");
  if (plan.threadprivate) set("COSCHED_THREADPRIVATE", "1");
  if (!s.job.empty()) set("COSCHED_JOB", s.job);
  if (s.rank >= 0) set("COSCHED_RANK", std::to_string(s.rank));
  if (s.local_ranks > 0) set("COSCHED_LOCAL_RANKS", std::to_string(s.local_ranks));
  plan_tool_libraries(plan, libs, getenv);
  set("OMP_TOOL", "enabled");
  // libomp's default affinity handling probes the topology by binding its first thread to every CPU of the
  // mask it saw at start-up, aborting on EINVAL, and later resets each new thread to that mask. Both race
  // with an RM that narrows the job's cpuset meanwhile (seen: "OMP: Error #100 ... System error #22").
  // The RM owns placement, so unless the user asked for binding explicitly, libomp must leave masks alone.
  if (!user_binding(getenv)) set("KMP_AFFINITY", "disabled");
  plan_preloads(plan, program, mpi, s, libs, getenv);
  return plan;
}

}  // namespace cosched::launcher
