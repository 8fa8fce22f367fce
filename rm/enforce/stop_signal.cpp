// Stopping jobs with SIGSTOP / SIGCONT: the last resort, when no freezer is usable. It stops every thread
// of the job's process (not its children), and the job's parent and its user can see it (and continue it).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "cosched/log.hpp"
#include "stopper.hpp"

namespace cosched::rm {

namespace {

bool thread_stopped(const std::string& stat_path) {
  int fd = ::open(stat_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;  // the thread exited
  char buf[512];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return true;
  buf[n] = '\0';
  // "tid (comm) S ...": comm may hold spaces and parentheses, so the state follows the last ')'.
  const char* close = std::strrchr(buf, ')');
  return close != nullptr && close[1] == ' ' && close[2] == 'T';
}

class SignalStopper final : public Stopper {
 public:
  explicit SignalStopper(Guard& guard) : guard_(guard) {}
  [[nodiscard]] std::string_view name() const override { return "signal"; }

  Status stop(Job& job) override {
    guard_.job_stopped(job.pid, "");
    if (::kill(job.pid, SIGSTOP) != 0) {
      return make_error(Errc::io_error, "SIGSTOP pid " + std::to_string(job.pid) + ": " + std::strerror(errno));
    }
    return {};
  }

  Status resume(Job& job) override {
    if (::kill(job.pid, SIGCONT) != 0 && errno != ESRCH) {
      return make_error(Errc::io_error, "SIGCONT pid " + std::to_string(job.pid) + ": " + std::strerror(errno));
    }
    guard_.job_resumed(job.pid);
    return {};
  }

  // Every thread in state T (a group stop reaches the threads one by one).
  [[nodiscard]] bool stopped(const Job& job) const override {
    const std::string dir = "/proc/" + std::to_string(job.pid) + "/task";
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return false;
    bool all = true;
    int seen = 0;
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      ++seen;
      all = all && thread_stopped(dir + "/" + e->d_name + "/stat");
    }
    ::closedir(d);
    return all && seen > 0;
  }

  void release(Job& job) override {
    if (!job.runnable) (void)resume(job);
  }

 private:
  Guard& guard_;
};

}  // namespace

std::unique_ptr<Stopper> make_signal_stopper(Guard& guard) { return std::make_unique<SignalStopper>(guard); }

Result<std::unique_ptr<Stopper>> make_stopper(std::string_view kind, bool cpuset_v2, Guard& guard) {
  if (kind == "signal") return make_signal_stopper(guard);
  if (kind == "cgroup-v2") return make_freezer_stopper(2, cpuset_v2, guard);
  if (kind == "cgroup-v1") return make_freezer_stopper(1, cpuset_v2, guard);
  if (kind == "auto") {
    auto v2 = make_freezer_stopper(2, cpuset_v2, guard);
    if (v2.ok()) return v2;
    auto v1 = make_freezer_stopper(1, cpuset_v2, guard);
    if (v1.ok()) return v1;
    COSCHED_INFO(enforce, "no usable freezer ({}; {}): stopping jobs with SIGSTOP/SIGCONT", v2.error().message,
                 v1.error().message);
    return make_signal_stopper(guard);
  }
  return make_error(Errc::invalid_argument,
                    "unknown stop backend '" + std::string(kind) + "' (auto|cgroup-v2|cgroup-v1|signal)");
}

}  // namespace cosched::rm
