// Jobs stopped by someone other than the RM: a user's SIGSTOP (Ctrl-Z), a debugger. Such a job holds
// CPUs it cannot use while others wait for them. The daemon notices it from /proc and keeps it out of
// the policy's snapshot while it is stopped: the policy divides the CPUs among the jobs that can run
// (the stopped one keeps its CPU set, which placement may give to others), and when the job continues it
// comes back like an arrival. Time sharing by the RM itself is not this: the RM clears `runnable` then.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "cosched/log.hpp"
#include "time_sharing.hpp"

namespace cosched::rm {

namespace {

// Whether the process is in a stopped state ('T', or 't' under a tracer) according to /proc/<pid>/stat.
bool stopped(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[512];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  // "pid (comm) S ...": comm may hold spaces and parentheses, so the state follows the last ')'.
  const char* close = std::strrchr(buf, ')');
  if (close == nullptr || close[1] != ' ') return false;
  return close[2] == 'T' || close[2] == 't';
}

}  // namespace

bool track_suspended(std::map<policy::JobId, Job>& jobs, double t) {
  bool changed = false;
  for (auto& [id, j] : jobs) {
    // Only a job that made no progress since the last quantum can be stopped: the /proc read is skipped
    // for every job that is visibly running. A job the RM itself stopped is not "suspended".
    const bool idle = j.progress.regions == j.regions_seen;
    j.regions_seen = j.progress.regions;
    const bool now_stopped = j.runnable && (idle || j.suspended) && stopped(j.pid);
    if (now_stopped == j.suspended) continue;
    j.suspended = now_stopped;
    changed = true;
    if (now_stopped) {
      COSCHED_INFO(rm, "job {} (pid {}) was stopped by a signal: its {} CPU(s) are lent until it continues", id,
                   j.pid, j.allocation);
      remember_why(j, t, "suspended", j.allocation, j.allocation, "stopped by a signal: its CPUs are lent to others");
    } else {
      COSCHED_INFO(rm, "job {} (pid {}) continues", id, j.pid);
      remember_why(j, t, "continued", j.allocation, j.allocation, "continued: it takes part in decisions again");
    }
  }
  return changed;
}

}  // namespace cosched::rm
