#include "guard.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "control_file.hpp"
#include "slurm_node.hpp"

namespace cosched::rm {

namespace {

constexpr int kRmdirAttempts = 300;  // 30 s at 100 ms

struct Watched {
  // One pair per hierarchy the job was moved in (cpuset, freezer).
  std::vector<std::string> restore_procs;
  std::vector<std::string> job_dirs;
  std::string freezer_dir;
  bool stopped = false;
};

// Slurm nodes the RM drained: node → scontrol to resume it with.
using DrainedNodes = std::map<std::string, std::string>;

// Jobs first (they run again at once), then the node: slurmctld may start new jobs as soon as it is resumed.
void resume_nodes(const DrainedNodes& nodes) {
  for (const auto& [node, scontrol] : nodes) {
    std::string why;
    auto r = slurm::run_node_op(slurm::NodeOp::resume, node, scontrol, why);
    if (r != slurm::op_done && r != slurm::op_not_ours) {
      std::string line = "cosched-guard: cannot resume Slurm node " + node + ": " + slurm::to_string(r) +
                         (why.empty() ? "" : ": " + why) + "\n";
      ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
      (void)ignored;
    }
  }
}

void restore(std::map<pid_t, Watched>& jobs, std::vector<std::string>& dirs, const DrainedNodes& nodes) {
  for (auto& [pid, w] : jobs) {
    if (!w.freezer_dir.empty()) {
      write_control_file(w.freezer_dir + "/cgroup.freeze", "0");          // cgroup v2 freezer
      write_control_file(w.freezer_dir + "/freezer.state", "THAWED");     // cgroup v1 freezer
    }
    for (const auto& procs : w.restore_procs) {
      if (!procs.empty()) write_control_file(procs, std::to_string(pid));
    }
    ::kill(pid, SIGCONT);  // harmless if it was not stopped
    for (const auto& d : w.job_dirs) {
      if (!d.empty()) dirs.push_back(d);
    }
  }
  resume_nodes(nodes);
  // A cgroup cannot be removed while a task is still in it, and an exited job stays there until its
  // parent reaps it. Nobody waits for the guard, so it keeps trying for a while (newest first: job
  // directories before the RM's own).
  for (int attempt = 0; attempt < kRmdirAttempts && !dirs.empty(); ++attempt) {
    std::vector<std::string> busy;
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
      if (::rmdir(it->c_str()) != 0 && errno == EBUSY) busy.insert(busy.begin(), *it);
    }
    dirs.swap(busy);
    if (!dirs.empty()) ::usleep(100 * 1000);
  }
}

}  // namespace

Guard::~Guard() {
  if (fd_ >= 0) ::close(fd_);
}

Status Guard::start() {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return make_error(Errc::io_error, std::string("guard pipe: ") + std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(p[0]);
    ::close(p[1]);
    return make_error(Errc::io_error, std::string("guard fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(p[1]);
    // Keep nothing of the RM's open files (a readiness pipe held open here would block the RM's parent).
    if (p[0] > 3) ::close_range(3, static_cast<unsigned>(p[0]) - 1, 0);
    ::close_range(static_cast<unsigned>(p[0]) + 1, ~0U, 0);
    ::setsid();  // not in the RM's process group: a Ctrl-C or a group kill does not reach it
    ::prctl(PR_SET_NAME, "cosched-guard");
    ::signal(SIGINT, SIG_IGN);
    ::signal(SIGHUP, SIG_IGN);
    ::signal(SIGPIPE, SIG_IGN);
    int devnull = ::open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      ::dup2(devnull, STDIN_FILENO);
      ::dup2(devnull, STDOUT_FILENO);
      ::close(devnull);
    }
    run(p[0]);
    ::_exit(0);
  }
  ::close(p[0]);
  fd_ = p[1];
  pid_ = pid;
  return {};
}

void Guard::send(const std::string& line) {
  if (fd_ < 0) return;
  const char* d = line.data();
  std::size_t n = line.size();
  while (n > 0) {
    ssize_t w = ::write(fd_, d, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "cosched-rm: the guard process is gone (%s): jobs are not protected if the RM dies\n",
                   std::strerror(errno));
      ::close(fd_);
      fd_ = -1;
      return;
    }
    d += w;
    n -= static_cast<std::size_t>(w);
  }
}

void Guard::job_confined(pid_t pid, const std::string& restore_procs, const std::string& job_dir) {
  send("J\t" + std::to_string(pid) + "\t" + restore_procs + "\t" + job_dir + "\n");
}
void Guard::job_stopped(pid_t pid, const std::string& freezer_dir) {
  send("S\t" + std::to_string(pid) + "\t" + freezer_dir + "\n");
}
void Guard::job_resumed(pid_t pid) { send("C\t" + std::to_string(pid) + "\n"); }
void Guard::job_released(pid_t pid) { send("R\t" + std::to_string(pid) + "\n"); }
void Guard::owns_dir(const std::string& dir) { send("D\t" + dir + "\n"); }
void Guard::node_drained(const std::string& node, const std::string& scontrol) {
  send("N\t" + node + "\t" + scontrol + "\n");
}
void Guard::node_resumed(const std::string& node) { send("n\t" + node + "\n"); }
void Guard::goodbye() {
  send("B\n");
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Guard::run(int fd) {
  std::map<pid_t, Watched> jobs;
  std::vector<std::string> dirs;
  DrainedNodes nodes;
  bool goodbye = false;
  std::string buf;
  char chunk[4096];
  for (;;) {
    ssize_t r = ::read(fd, chunk, sizeof chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    buf.append(chunk, static_cast<std::size_t>(r));
    std::size_t nl;
    while ((nl = buf.find('\n')) != std::string::npos) {
      std::string line = buf.substr(0, nl);
      buf.erase(0, nl + 1);
      std::vector<std::string> f;
      std::size_t pos = 0;
      while (true) {
        auto tab = line.find('\t', pos);
        f.push_back(line.substr(pos, tab == std::string::npos ? std::string::npos : tab - pos));
        if (tab == std::string::npos) break;
        pos = tab + 1;
      }
      const std::string& op = f[0];
      pid_t pid = f.size() > 1 ? static_cast<pid_t>(std::atol(f[1].c_str())) : 0;
      if (op == "J" && f.size() >= 4) {
        jobs[pid].restore_procs.push_back(f[2]);
        jobs[pid].job_dirs.push_back(f[3]);
      } else if (op == "S" && f.size() >= 3) {
        jobs[pid].stopped = true;
        jobs[pid].freezer_dir = f[2];
      } else if (op == "C") {
        if (auto it = jobs.find(pid); it != jobs.end()) it->second.stopped = false;
      } else if (op == "R") {
        jobs.erase(pid);
      } else if (op == "D" && f.size() >= 2) {
        dirs.push_back(f[1]);
      } else if (op == "N" && f.size() >= 3) {
        nodes[f[1]] = f[2];
      } else if (op == "n" && f.size() >= 2) {
        nodes.erase(f[1]);
      } else if (op == "B") {
        goodbye = true;
      }
    }
  }
  // Even after a goodbye, anything still listed is restored: the RM may have missed one.
  (void)goodbye;
  restore(jobs, dirs, nodes);
}

}  // namespace cosched::rm
