// The traces of edge-case runs, loaded by Paraver's own parser: paramedir (from paraver-kernel) loads the
// trace with its .pcf and .row and computes a "State As Is" thread view from it. Skipped, with the reason,
// where paramedir is not installed: Debian packages no Paraver, so it is found in PATH or through $PARAMEDIR.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "sample_run.hpp"

namespace cosched::results {
namespace {

using sample::job;
using sample::segment;
using sample::TempDir;

std::optional<std::string> find_paramedir() {
  if (const char* set = std::getenv("PARAMEDIR"); set != nullptr && *set != '\0') return std::string(set);
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/paramedir";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

// A one-window Paraver configuration: the thread-level state of every row over the whole trace, the view
// Paraver opens by default. Written from the keys Paraver's own .cfg files use.
constexpr const char* kStateView =
    "#ParaverCFG\n"
    "ConfigFile.Version: 3.4\n"
    "ConfigFile.NumWindows: 1\n"
    "\n"
    "################################################################################\n"
    "< NEW DISPLAYING WINDOW state >\n"
    "################################################################################\n"
    "window_name state\n"
    "window_type single\n"
    "window_level thread\n"
    "window_compute_y_max true\n"
    "window_scale_relative 1.000000000000\n"
    "window_begin_time_relative 0.000000000000\n"
    "window_end_time_relative 1.000000000000\n"
    "window_open false\n"
    "window_selected_functions { 14, { {cpu, Active Thd}, {appl, Adding}, {task, Adding}, "
    "{thread, State As Is}, {node, Adding}, {system, Adding}, {workload, Adding}, {from_obj, All}, "
    "{to_obj, All}, {tag_msg, All}, {size_msg, All}, {bw_msg, All}, {evt_type, All}, {evt_value, All} } }\n"
    "window_compose_functions { 9, { {compose_cpu, As Is}, {compose_appl, As Is}, {compose_task, As Is}, "
    "{compose_thread, As Is}, {compose_node, As Is}, {compose_system, As Is}, {compose_workload, As Is}, "
    "{topcompose1, As Is}, {topcompose2, As Is} } }\n"
    "window_filter_module evt_type 0\n";

struct Outcome {
  int status = -1;
  std::string output;  // stdout and stderr together
};

Outcome run_command(const std::string& command) {
  Outcome out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.output.append(buffer, n);
  out.status = ::pclose(pipe);
  return out;
}

Run edge_run(const std::string& name) {
  Run run;
  run.name = name;
  run.mode = "simulated";
  run.policy = "equip";
  run.machine_cpus = 2;
  return run;
}

// The runs whose traces Paraver once refused or misread, and one ordinary run to compare with.
std::vector<Run> edge_runs() {
  std::vector<Run> runs;
  runs.push_back(sample::four_job_run());
  runs.push_back(edge_run("empty"));
  Run newline = edge_run("newline");
  newline.jobs.push_back(job(1, "lu\nx", 0, 0, 2, {segment(0, 2, {0})}));
  newline.jobs.push_back(job(2, "bt\tB", 0, 1, 3, {segment(1, 3, {1})}));
  runs.push_back(newline);
  Run big = edge_run("big-ids");
  big.jobs.push_back(job(std::int64_t{1} << 31, "bt", 0, 0, 2, {segment(0, 2, {0, 1})}));
  big.jobs.push_back(job(std::int64_t{1} << 40, "sp", 0, 2, 3, {segment(2, 3, {0})}));
  runs.push_back(big);
  return runs;
}

TEST(Paramedir, LoadsTheTracesOfEdgeCaseRuns) {
  std::optional<std::string> paramedir = find_paramedir();
  if (!paramedir) {
    GTEST_SKIP() << "paramedir (Paraver's paraver-kernel) is not installed: not in PATH and $PARAMEDIR is "
                    "unset (Debian packages no Paraver; build paraver-kernel from BSC's sources to run this)";
  }
  for (const results::Run& run : edge_runs()) {
    SCOPED_TRACE("run " + run.name);
    TempDir dir;
    ASSERT_TRUE(write_run(dir.str(), run));
    std::ofstream(dir.file("state.cfg")) << kStateView;
    Outcome r = run_command("cd '" + dir.str() + "' && '" + *paramedir + "' trace.prv state.cfg state.out");
    ASSERT_NE(r.status, -1) << "could not run " << *paramedir;
    ASSERT_FALSE(WIFSIGNALED(r.status)) << "paramedir died by signal " << WTERMSIG(r.status) << ":\n" << r.output;
    // paramedir reports a trace or configuration it cannot load on its output ("Cannot load ...", or a
    // kernel exception such as a trace header error), and then writes nothing.
    for (const char* refusal : {"Cannot load", "xception", "rror"}) {
      EXPECT_EQ(r.output.find(refusal), std::string::npos) << "paramedir said:\n" << r.output;
    }
    bool wrote = false;
    for (const auto& entry : std::filesystem::directory_iterator(dir.str())) {
      std::string name = entry.path().filename().string();
      if (name.rfind("state.out", 0) == 0 && entry.file_size() > 0) wrote = true;
    }
    EXPECT_TRUE(wrote) << "paramedir wrote no state.out* file; it said:\n" << r.output;
  }
}

}  // namespace
}  // namespace cosched::results
