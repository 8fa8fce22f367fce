// spank_cosched: a Slurm SPANK plugin that runs a job's tasks under the node's cosched-rm (docs/slurm.md).
//
//   plugstack.conf:  optional /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_cosched.so socket=/run/cosched/rm.sock default=off
//   srun/sbatch/salloc --cosched[=gomp,nogomp,malleable,fixed-team] | --no-cosched
//
// In each task of a --cosched job (slurm_spank_task_init, in the task, as the user, just before the exec)
// the plugin sets the environment cosched-run would set for that program (libruntime/launcher/launch_env,
// the same code), plus the job's identity: every task and step of one Slurm job on a node registers under
// the key "slurm:<job id>", so the RM makes them one job (rm/daemon/mpi_jobs.cpp), and each task asks for the
// CPUs Slurm gave it. Every task, the batch script's too, gets LLVM's libomp preloaded (unless nogomp), as
// under cosched-run: a script is not what runs OpenMP, the programs it starts are, and they inherit its
// environment. Without an RM on the
// node the task runs natively, after one warning line: cosched never makes a Slurm job fail.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

extern "C" {
#include <slurm/spank.h>
}

#include "cosched/wire.hpp"
#include "libruntime/launcher/launch_env.hpp"

// The symbols slurmd/srun look for (SPANK_PLUGIN in spank.h, spelled out: in C++ a const at namespace scope
// would otherwise have internal linkage and the plugin would not load).
extern "C" {
extern __attribute__((visibility("default"))) const char plugin_name[];
extern __attribute__((visibility("default"))) const char plugin_type[];
extern __attribute__((visibility("default"))) const unsigned int plugin_version;
extern __attribute__((visibility("default"))) const unsigned int spank_plugin_version;
const char plugin_name[] = "cosched";
const char plugin_type[] = "spank";
const unsigned int plugin_version = SLURM_VERSION_NUMBER;
const unsigned int spank_plugin_version = 1;
}

namespace {

namespace fs = std::filesystem;
using cosched::launcher::LaunchSettings;

constexpr std::uint32_t kBatchStep = 0xfffffffbU;  // SLURM_BATCH_SCRIPT (slurm/slurm.h): the batch script's step
constexpr int kConnectTimeoutMs = 1000;

// What the plugin arguments and the user's options say. One plugin instance per process.
struct State {
  std::string socket = "/run/cosched/rm.sock";  // the node RM's default (cosched-rm run by root)
  bool default_on = false;
  int chosen = -1;  // --cosched (1) / --no-cosched (0); -1: the site's default
  bool gomp = false;    // libomp in every task: the default, a flag kept for job scripts that name it
  bool nogomp = false;  // no libomp preloaded anywhere: the tasks' programs keep their own runtime
  bool malleable = false;
  bool fixed_team = false;
};
State g_state;

constexpr int kOptOn = 1;
constexpr int kOptOff = 0;

// --cosched takes an optional comma-separated list of cosched-run's launch flags.
int parse_flags(const char* arg) {
  // Slurm hands an option given without a value on to the job's steps as the text "(null)" (srun inside an
  // sbatch --cosched job reads SLURM_SPANK__SLURM_SPANK_OPTION_cosched_cosched=(null)).
  if (arg == nullptr || std::strcmp(arg, "(null)") == 0) return 0;
  std::string s = arg;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    auto end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    std::string f = s.substr(pos, end - pos);
    if (f == "gomp") {
      g_state.gomp = true;
    } else if (f == "nogomp") {
      g_state.nogomp = true;
    } else if (f == "malleable") {
      g_state.malleable = true;
    } else if (f == "fixed-team") {
      g_state.fixed_team = true;
    } else if (!f.empty()) {
      slurm_error("cosched: --cosched=%s: unknown flag '%s' (gomp, nogomp, malleable, fixed-team)", arg, f.c_str());
      return -1;
    }
    pos = end + 1;
  }
  if (g_state.gomp && g_state.nogomp) {
    slurm_error("cosched: --cosched=%s: gomp and nogomp exclude each other", arg);
    return -1;
  }
  if (g_state.malleable && g_state.fixed_team) {
    slurm_error("cosched: --cosched=%s: malleable and fixed-team exclude each other", arg);
    return -1;
  }
  return 0;
}

int on_option(int val, const char* optarg, int /*remote*/) {
  g_state.chosen = val;
  return val == kOptOn ? parse_flags(optarg) : 0;
}

char kOnName[] = "cosched";
char kOnArg[] = "[gomp,nogomp,malleable,fixed-team]";
char kOnUsage[] =
    "Run the job's tasks under the node's cosched resource manager, as cosched-run would (docs/slurm.md). "
    "Every task gets LLVM libomp ahead of libgomp. Flags: nogomp (keep each program's own OpenMP runtime), "
    "gomp (the default, accepted), malleable, fixed-team.";
char kOffName[] = "no-cosched";
char kOffUsage[] = "Do not run this job under cosched (where the site turned it on for every job).";

spank_option g_options[] = {
    {kOnName, kOnArg, kOnUsage, 2, kOptOn, on_option},
    {kOffName, nullptr, kOffUsage, 0, kOptOff, on_option},
    SPANK_OPTIONS_TABLE_END,
};

int parse_plugin_args(int ac, char** av) {
  for (int i = 0; i < ac; ++i) {
    std::string a = av[i];
    if (a.rfind("socket=", 0) == 0 && a.size() > 7 && a[7] == '/') {
      g_state.socket = a.substr(7);
    } else if (a == "default=on" || a == "default=off") {
      g_state.default_on = a == "default=on";
    } else {
      slurm_error("cosched: plugstack.conf: unknown argument '%s' (socket=/ABSOLUTE/PATH, default=on|off)", av[i]);
      return -1;
    }
  }
  return 0;
}

std::string task_getenv(spank_t sp, const char* name, bool& present) {
  char buf[4096];
  present = spank_getenv(sp, name, buf, sizeof buf) == ESPANK_SUCCESS;
  return present ? std::string(buf) : std::string();
}

// Our libraries, found from where the plugin is installed: one directory up (`cmake --install` puts it in
// <prefix>/<libdir>/slurm/), or, for the plugin the Debian package put in Slurm's own plugin directory
// (/usr/lib/x86_64-linux-gnu/slurm-wlm/), the package's library directory; else the build tree.
std::string find_ours(const char* file, const char* build_path) {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&parse_plugin_args), &info) != 0 && info.dli_fname != nullptr) {
    std::error_code ec;
    const fs::path plugin_dir = fs::path(info.dli_fname).parent_path();
    fs::path installed = plugin_dir.parent_path() / file;
    if (fs::exists(installed, ec)) return installed.string();
    // equivalent(), not ==: Slurm opens the plugin by the path its configuration names, which may go
    // through a link (/lib -> usr/lib).
    if (fs::equivalent(plugin_dir, COSCHED_PACKAGE_PLUGIN_DIR, ec)) {
      installed = fs::path(COSCHED_PACKAGE_LIB_DIR) / file;
      if (fs::exists(installed, ec)) return installed.string();
    }
  }
  return build_path;
}

// One line on the task's stderr (the job's error file). Written at once so tasks do not interleave.
void warn_task(const std::string& line) {
  std::string l = "cosched: " + line + "\n";
  ssize_t ignored = ::write(STDERR_FILENO, l.data(), l.size());
  (void)ignored;
}

template <typename T>
bool item(spank_t sp, spank_item_t what, T* out) {
  return spank_get_item(sp, what, out) == ESPANK_SUCCESS;
}

// The CPUs Slurm gave this task: the whole node's allocation for a batch script (one task), else the step's
// CPUs per task. The tasks of a step on a node together ask for the step's CPUs there.
int task_request(spank_t sp, std::uint32_t step) {
  std::uint16_t ncpus = 0;
  std::uint32_t local_tasks = 0;
  const bool have_ncpus = item(sp, S_JOB_NCPUS, &ncpus) && ncpus > 0;
  if (step == kBatchStep) return have_ncpus ? ncpus : 0;
  std::uint16_t per_task = 0;
  if (item(sp, S_STEP_CPUS_PER_TASK, &per_task) && per_task > 0) return per_task;
  if (have_ncpus && item(sp, S_JOB_LOCAL_TASK_COUNT, &local_tasks) && local_tasks > 0) {
    return static_cast<int>(std::max<std::uint32_t>(1, ncpus / local_tasks));
  }
  return 0;
}

bool enabled() { return g_state.chosen >= 0 ? g_state.chosen == kOptOn : g_state.default_on; }

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int slurm_spank_init(spank_t sp, int ac, char** av) {
  if (parse_plugin_args(ac, av) != 0) return -1;
  // Registered here, not through a spank_options table: sbatch and salloc see only options registered with
  // spank_option_register in slurm_spank_init.
  for (spank_option* o = g_options; o->name != nullptr; ++o) {
    if (spank_option_register(sp, o) != ESPANK_SUCCESS) {
      slurm_error("cosched: cannot register option --%s", o->name);
      return -1;
    }
  }
  return 0;
}

// In the task, as the user, right before the exec of the task's program.
__attribute__((visibility("default"))) int slurm_spank_task_init(spank_t sp, int /*ac*/, char** /*av*/) {
  if (!enabled()) return 0;
  std::uint32_t job = 0;
  std::uint32_t step = 0;
  std::uint32_t global_task = 0;
  std::uint32_t local_tasks = 0;
  int local_task = 0;
  if (!item(sp, S_JOB_ID, &job)) return 0;
  (void)item(sp, S_JOB_STEPID, &step);
  (void)item(sp, S_TASK_GLOBAL_ID, &global_task);
  (void)item(sp, S_JOB_LOCAL_TASK_COUNT, &local_tasks);
  (void)item(sp, S_TASK_ID, &local_task);

  // No RM (or one we may not trust) on this node: the task runs natively, as if --cosched were not given.
  std::string err;
  int fd = cosched::wire::connect_unix(g_state.socket, kConnectTimeoutMs, err);
  if (fd < 0) {
    if (local_task == 0) warn_task(err + "; Slurm job " + std::to_string(job) + " runs natively");
    return 0;
  }
  ::close(fd);

  int argc = 0;
  char** argv = nullptr;
  std::string program;
  if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) == ESPANK_SUCCESS && argc > 0 && argv != nullptr) {
    bool present = false;
    std::string path = task_getenv(sp, "PATH", present);
    program = cosched::launcher::find_in_path(argv[0], present ? path : "/usr/bin:/bin");
  }

  LaunchSettings s;
  s.socket = g_state.socket;
  s.request = task_request(sp, step);
  // The batch script's processes (the shell, the programs it runs) inherit its environment, and the script
  // itself says nothing about which OpenMP runtime they load: plan_launch puts LLVM's libomp first, so that
  // a gcc program run directly from the script is managed too (libomp provides libgomp's GOMP_ entry
  // points). A process that never enters OpenMP only pays for loading libomp (docs/performance.md,
  // "Preloading libomp in a batch script").
  s.no_gomp = g_state.nogomp;
  s.malleable = g_state.malleable;
  s.fixed_team = g_state.fixed_team;
  s.job = "slurm:" + std::to_string(job);
  s.rank = static_cast<int>(global_task);
  s.local_ranks = static_cast<int>(local_tasks);
  cosched::launcher::LibraryPaths libs;
  libs.libcosched = find_ours(COSCHED_LIB_FILE, COSCHED_BUILD_LIB_PATH);
  libs.wrap = find_ours(COSCHED_WRAP_FILE, COSCHED_BUILD_WRAP_PATH);
  libs.mpi = find_ours(COSCHED_MPI_FILE, COSCHED_BUILD_MPI_PATH);
  libs.libomp = COSCHED_LIBOMP_PRELOAD;
  const auto plan = cosched::launcher::plan_launch(
      program, s, libs, [sp](const char* name, bool& present) { return task_getenv(sp, name, present); });
  for (const auto& e : plan.env) {
    if (spank_setenv(sp, e.name.c_str(), e.value.c_str(), 1) != ESPANK_SUCCESS) {
      warn_task("cannot set " + e.name + " in the task's environment; Slurm job " + std::to_string(job) +
                " may run natively");
    }
  }
  if (local_task == 0) {
    for (const auto& w : plan.warnings) warn_task(w);
  }
  return 0;
}

}  // extern "C"
