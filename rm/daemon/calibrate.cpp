#include "calibrate.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;

// The build tree's bin/ (rm/CMakeLists.txt); the fallback keeps the file compilable on its own.
#ifndef COSCHED_BUILD_BIN_DIR
#define COSCHED_BUILD_BIN_DIR ""
#endif

namespace cosched::rm {

namespace {

bool executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// The field after `key` on the program's "result ..." line (examples/microbench/microbench.h), or -1.
double result_field(const std::string& out, const std::string& key) {
  std::istringstream lines(out);
  std::string line;
  double v = -1;
  while (std::getline(lines, line)) {
    if (line.rfind("result ", 0) != 0) continue;
    std::istringstream words(line);
    std::string w;
    while (words >> w) {
      if (w == key && words >> w) v = std::strtod(w.c_str(), nullptr);
    }
  }
  return v;
}

struct Child {
  pid_t pid = -1;
  int out = -1;
};

// `path --seconds S --quiet` on CPU `cpu`, its stdout to a pipe; no connection to any RM.
Result<Child> spawn_pinned(const std::string& path, int cpu, double seconds) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return make_error(Errc::io_error, std::string("pipe: ") + std::strerror(errno));
  const std::string secs = std::to_string(seconds);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(p[0]);
    ::close(p[1]);
    return make_error(Errc::io_error, std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    ::sched_setaffinity(0, sizeof set, &set);
    ::setenv("OMP_NUM_THREADS", "1", 1);
    ::setenv("KMP_AFFINITY", "disabled", 1);
    ::setenv("COSCHED_DISABLE", "1", 1);  // a measurement, not a job
    ::dup2(p[1], STDOUT_FILENO);
    const char* argv[] = {path.c_str(), "--seconds", secs.c_str(), "--quiet", nullptr};
    ::execv(path.c_str(), const_cast<char* const*>(argv));
    ::_exit(127);
  }
  ::close(p[1]);
  return Child{pid, p[0]};
}

// Runs `path` once on each CPU of `cpus` at the same time; each one's bytes per CPU second.
Result<std::vector<double>> side_by_side(const std::string& path, const std::vector<int>& cpus, double seconds) {
  std::vector<Child> children;
  for (int cpu : cpus) {
    auto c = spawn_pinned(path, cpu, seconds);
    if (!c) {
      for (auto& k : children) {
        ::kill(k.pid, SIGKILL);
        ::waitpid(k.pid, nullptr, 0);
        ::close(k.out);
      }
      return c.error();
    }
    children.push_back(*c);
  }
  std::vector<double> rates;
  std::string failure;
  for (auto& k : children) {
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(k.out, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
      if (n > 0) out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(k.out);
    int status = 0;
    while (::waitpid(k.pid, &status, 0) < 0 && errno == EINTR) {
    }
    const double gbps = result_field(out, "gbps_per_cpu");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !(gbps > 0)) {
      failure = path + " exited with status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                " and no result line";
    }
    rates.push_back(gbps * 1e9);
  }
  if (!failure.empty()) return make_error(Errc::io_error, "calibration: " + failure);
  return rates;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::string find_microbenchmark(const std::string& name) {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("COSCHED_PROGRAM_PATH"); env != nullptr) {
    std::istringstream ss(env);
    for (std::string d; std::getline(ss, d, ':');) {
      if (!d.empty()) dirs.emplace_back(d);
    }
  }
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back((self.parent_path() / "../libexec/cosched/microbench").lexically_normal());
  if (*COSCHED_BUILD_BIN_DIR != '\0') dirs.emplace_back(COSCHED_BUILD_BIN_DIR);
  for (const auto& d : dirs) {
    if (executable(d / name)) return (d / name).string();
  }
  return {};
}

Result<sensors::Measured> calibrate_bandwidth(const CalibrateOptions& o) {
  if (o.cpus.empty()) return make_error(Errc::invalid_argument, "calibration: no CPU to run on");
  const std::string bbma = find_microbenchmark("bbma");
  const std::string copy = find_microbenchmark("stream-copy");
  if (bbma.empty() || copy.empty()) {
    return make_error(Errc::not_found, std::string("calibration: cannot find ") + (bbma.empty() ? "bbma" : "stream-copy") +
                                           " (examples/microbench; set COSCHED_PROGRAM_PATH to its directory)");
  }
  const int repeat = std::max(o.repeat, 1);
  std::vector<double> alone, all, pair;
  for (int r = 0; r < repeat; ++r) {
    auto b = side_by_side(bbma, {o.cpus.front()}, o.seconds);
    if (!b) return b.error();
    alone.push_back(b->front());
  }
  for (int r = 0; r < repeat; ++r) {
    auto c = side_by_side(copy, o.cpus, o.seconds);
    if (!c) return c.error();
    double sum = 0;
    for (double x : *c) sum += x;
    all.push_back(sum);
  }
  sensors::Measured m;
  m.thread_bytes_per_s = median(alone);
  m.machine_bytes_per_s = median(all);
  if (o.cpus.size() >= 2) {
    for (int r = 0; r < repeat; ++r) {
      auto p = side_by_side(bbma, {o.cpus[0], o.cpus[1]}, o.seconds);
      if (!p) return p.error();
      pair.push_back(((*p)[0] + (*p)[1]) / 2);
    }
    m.pair_bytes_per_s = median(pair);
    m.contention = sensors::contention_from(m.thread_bytes_per_s, m.machine_bytes_per_s, *m.pair_bytes_per_s);
  }
  return m;
}

}  // namespace cosched::rm
