#include "paths.hpp"

#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>

namespace fs = std::filesystem;

// Set by qs/qsubmit/CMakeLists.txt; the fallbacks keep the file compilable on its own (e.g. by tools).
#ifndef COSCHED_LIBEXEC_REL
#define COSCHED_LIBEXEC_REL "../libexec/cosched"
#endif
#ifndef COSCHED_BUILD_PROGRAM_DIR
#define COSCHED_BUILD_PROGRAM_DIR ""
#endif
#ifndef COSCHED_BUILD_RUN_PATH
#define COSCHED_BUILD_RUN_PATH "cosched-run"
#endif
#ifndef COSCHED_BUILD_RM_PATH
#define COSCHED_BUILD_RM_PATH "cosched-rm"
#endif

namespace cosched::qsubmit {

namespace {

bool is_executable_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// An installed tool sits next to qsubmit in <bindir>; otherwise the build tree's copy.
std::string sibling_or(const char* name, const char* build_path) {
  std::string dir = self_directory();
  if (!dir.empty() && is_executable_file(fs::path(dir) / name)) return (fs::path(dir) / name).string();
  return build_path;
}

}  // namespace

std::string self_directory() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : self.parent_path().string();
}

std::vector<std::string> program_directories(const std::string& program_path, const std::string& self_dir) {
  std::vector<std::string> dirs;
  std::size_t pos = 0;
  while (pos <= program_path.size()) {
    std::size_t end = program_path.find(':', pos);
    if (end == std::string::npos) end = program_path.size();
    if (end > pos) dirs.push_back(program_path.substr(pos, end - pos));
    pos = end + 1;
  }
  if (!self_dir.empty()) {
    // The install puts amdahl in libexec/cosched itself and the NPB kernels and microbenchmarks in
    // subdirectories of it (examples/npb, examples/microbench): catalogs name them all bare (@npb-cg-gcc).
    const fs::path libexec = (fs::path(self_dir) / COSCHED_LIBEXEC_REL).lexically_normal();
    dirs.push_back(libexec.string());
    for (const char* sub : {"npb", "microbench"}) dirs.push_back((libexec / sub).string());
  }
  if (*COSCHED_BUILD_PROGRAM_DIR != '\0') dirs.emplace_back(COSCHED_BUILD_PROGRAM_DIR);
  return dirs;
}

catalog::ProgramLookup default_program_lookup() {
  const char* env = std::getenv("COSCHED_PROGRAM_PATH");
  return catalog::lookup_in_directories(program_directories(env != nullptr ? env : "", self_directory()));
}

std::string find_executable(const std::string& name) {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return is_executable_file(name) ? name : std::string();
  const char* env = std::getenv("PATH");
  std::string path = env != nullptr ? env : "/usr/bin:/bin";
  std::size_t pos = 0;
  while (pos <= path.size()) {
    std::size_t end = path.find(':', pos);
    if (end == std::string::npos) end = path.size();
    fs::path candidate = fs::path(end > pos ? path.substr(pos, end - pos) : ".") / name;
    if (is_executable_file(candidate)) return candidate.string();
    pos = end + 1;
  }
  return {};
}

std::string cosched_run_path() { return sibling_or("cosched-run", COSCHED_BUILD_RUN_PATH); }
std::string cosched_rm_path() { return sibling_or("cosched-rm", COSCHED_BUILD_RM_PATH); }

// Results go under the user's data directory, never into whatever directory qsubmit was started from
// (a source tree, usually): $XDG_DATA_HOME/cosched/runs, else ~/.local/share/cosched/runs, else /tmp.
std::string default_out_dir(const std::string& label) {
  std::time_t t = std::time(nullptr);
  std::tm local{};
  ::localtime_r(&t, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
  fs::path base = "/tmp";
  if (const char* data = std::getenv("XDG_DATA_HOME"); data != nullptr && *data == '/') {
    base = data;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
    base = fs::path(home) / ".local/share";
  }
  return (base / "cosched/runs" / ("qsubmit-" + label + "-" + stamp)).string();
}

// The output directory must be new or empty: results of two runs never mix. Returns an error message.
std::string claim_out_dir(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec))) {
    return "output directory " + dir + " exists and is not empty";
  }
  fs::create_directories(fs::path(dir) / "jobs", ec);
  if (ec) return "cannot create " + dir + "/jobs: " + ec.message();
  return {};
}

}  // namespace cosched::qsubmit
