#include "slurm_node.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

namespace cosched::rm::slurm {

namespace {

constexpr int kCommandTimeoutS = 10;  // our choice: slurmctld answers in milliseconds when it is there at all

// Runs `argv` with stdout (and stderr) captured; returns its exit status (-1: could not run it). The child gets
// an empty signal mask and none of our descriptors besides the pipe: the RM blocks signals for its signalfd.
int run_capture(const std::vector<std::string>& argv, std::string& out) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return -1;
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(p[0]);
    ::close(p[1]);
    return -1;
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(p[1], STDOUT_FILENO);
    ::dup2(p[1], STDERR_FILENO);
    ::close_range(3, ~0U, 0);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::string msg = argv[0] + ": " + std::strerror(errno) + "\n";
    ssize_t ignored = ::write(STDERR_FILENO, msg.data(), msg.size());
    (void)ignored;
    ::_exit(127);
  }
  ::close(p[1]);
  // scontrol retries an unreachable slurmctld for a long time (and looks for one in DNS when SLURM_CONF names
  // no file): the RM's shutdown and the guard must not hang on it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kCommandTimeoutS);
  char buf[4096];
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd pfd{p[0], POLLIN, 0};
    int ready = left.count() > 0 ? ::poll(&pfd, 1, static_cast<int>(left.count())) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      timed_out = true;
      break;
    }
    ssize_t n = ::read(p[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.size() < (1U << 20)) out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(p[0]);
  if (timed_out) {
    ::kill(pid, SIGKILL);
    out = argv[0] + " did not answer within " + std::to_string(kCommandTimeoutS) + " s";
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return 124;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string first_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

const char* to_string(NodeOpResult r) {
  switch (r) {
    case op_done: return "done";
    case op_failed: return "scontrol failed";
    case op_not_ours: return "the node is drained or down for another reason: not ours to change";
    case op_cannot_read: return "scontrol show node gave no state";
  }
  return "unknown";
}

bool NodeView::drained() const {
  return state.find("DRAIN") != std::string::npos || state.find("DOWN") != std::string::npos ||
         state.find("FAIL") != std::string::npos;
}

bool NodeView::ours() const { return reason.rfind(kReasonPrefix, 0) == 0; }

bool parse_node_line(const std::string& line, NodeView& out) {
  out = {};
  // State=... is one token; Reason=... runs to the end of the line (it may hold spaces), followed by
  // " [user@time]" that scontrol appends.
  std::size_t st = 0;
  if (line.rfind("State=", 0) != 0) {
    st = line.find(" State=");
    if (st == std::string::npos) return false;
    ++st;
  }
  auto end = line.find(' ', st);
  out.state = line.substr(st + 6, end == std::string::npos ? std::string::npos : end - st - 6);
  auto r = line.find(" Reason=");
  if (r != std::string::npos) {
    std::string reason = first_line(line.substr(r + 8));
    if (auto stamp = reason.rfind(" ["); stamp != std::string::npos && reason.back() == ']') reason.resize(stamp);
    if (reason != "(null)") out.reason = reason;
  }
  return !out.state.empty();
}

NodeOpResult run_node_op(NodeOp op, const std::string& node, const std::string& scontrol, std::string& why) {
  std::string shown;
  int rc = run_capture({scontrol, "-o", "show", "node", node}, shown);
  NodeView v;
  if (rc != 0 || !parse_node_line(first_line(shown), v)) {
    why = first_line(shown);
    return op_cannot_read;
  }
  if (op == NodeOp::drain) {
    if (v.drained()) return v.ours() ? op_done : op_not_ours;
  } else {
    if (!v.drained()) return op_done;
    if (!v.ours()) return op_not_ours;
  }
  std::vector<std::string> update = {scontrol, "update", "NodeName=" + node};
  if (op == NodeOp::drain) {
    update.push_back("State=DRAIN");
    update.push_back(std::string("Reason=") + kDrainReason);
  } else {
    update.push_back("State=RESUME");
  }
  std::string out;
  if (run_capture(update, out) != 0) {
    why = first_line(out);
    return op_failed;
  }
  return op_done;
}

pid_t spawn_node_op(NodeOp op, const std::string& node, const std::string& scontrol) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  // The child: none of the RM's sockets (a job's watcher must see EOF when the RM dies, not when we do).
  ::close_range(3, ~0U, 0);
  int devnull = ::open("/dev/null", O_RDWR);
  if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
  std::string why;
  const NodeOpResult r = run_node_op(op, node, scontrol, why);
  if (r != op_done && !why.empty()) {
    // The RM's stderr: its messages file or the journal.
    std::string line = "cosched-rm: [slurm] node " + node + ": " + to_string(r) + ": " + why + "\n";
    ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
    (void)ignored;
  }
  ::_exit(r);
}

bool job_owned_by(const std::string& show_job_line, uid_t uid) {
  // "UserId=alice(1000)": the uid in parentheses is slurmctld's record of the job's owner.
  const std::string key = "UserId=";
  const std::size_t at = show_job_line.find(key);
  if (at == std::string::npos) return false;
  const std::size_t open = show_job_line.find('(', at);
  const std::size_t close = show_job_line.find(')', open == std::string::npos ? at : open);
  if (open == std::string::npos || close == std::string::npos || show_job_line.find(' ', at) < open) return false;
  const std::string digits = show_job_line.substr(open + 1, close - open - 1);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 10) return false;
  return std::stoul(digits) == static_cast<unsigned long>(uid);
}

pid_t spawn_admin_comment(const std::string& scontrol, std::int64_t job, uid_t uid, const std::string& text) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::close_range(3, ~0U, 0);
  int devnull = ::open("/dev/null", O_RDWR);
  if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
  const std::string id = std::to_string(job);
  std::string shown;
  // The Slurm job id is the job's own word (its key): the comment goes only on a Slurm job of the same uid.
  if (run_capture({scontrol, "-o", "show", "job", id}, shown) != 0 || !job_owned_by(shown, uid)) ::_exit(op_not_ours);
  std::string out;
  const int rc = run_capture({scontrol, "update", "JobId=" + id, "AdminComment=" + text}, out);
  // The update at a program's end comes too late when it was the job's last: slurmctld says the job "has already
  // finished", and the comment written while it ran stays.
  if (rc != 0 && out.find("already finished") == std::string::npos) {
    std::string line = "cosched-rm: [slurm] job " + id + ": cannot set its AdminComment: " + first_line(out) + "\n";
    ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
    (void)ignored;
  }
  ::_exit(rc == 0 ? op_done : op_failed);
}

}  // namespace cosched::rm::slurm
