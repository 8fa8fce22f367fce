#include "processes.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

extern char** environ;

namespace cosched::qsubmit {

namespace {

// The program's environment: ours, with `overrides` replacing or adding entries.
std::vector<std::string> environment_with(const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [k, v] : overrides) replaced = replaced || k == name;
    if (!replaced) env.push_back(std::move(entry));
  }
  for (const auto& [k, v] : overrides) env.push_back(k + "=" + v);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int open_output(const std::string& path) {
  if (path.empty()) return -1;
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

int shell_status(int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
  return 255;
}

}  // namespace

Result<pid_t> spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) return make_error(Errc::invalid_argument, "empty command");
  // Everything the child needs is built before fork: after it, the child only makes system calls.
  std::vector<std::string> argv_strings = spec.argv;
  std::vector<std::string> env_strings = environment_with(spec.env);
  std::vector<char*> argv = c_strings(argv_strings);
  std::vector<char*> envp = c_strings(env_strings);

  int out = open_output(spec.stdout_path);
  int err = open_output(spec.stderr_path);
  if ((!spec.stdout_path.empty() && out < 0) || (!spec.stderr_path.empty() && err < 0)) {
    std::string what = out < 0 && !spec.stdout_path.empty() ? spec.stdout_path : spec.stderr_path;
    int e = errno;
    if (out >= 0) ::close(out);
    if (err >= 0) ::close(err);
    return make_error(Errc::io_error, "cannot create " + what + ": " + std::strerror(e));
  }
  // The child reports a failed exec through this pipe; a successful exec closes it (O_CLOEXEC) unwritten.
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return make_error(Errc::io_error, std::string("pipe: ") + std::strerror(errno));

  pid_t pid = ::fork();
  if (pid == 0) {
    signals::reset_in_child();
    ::setpgid(0, 0);
    if (out >= 0) ::dup2(out, STDOUT_FILENO);
    if (err >= 0) ::dup2(err, STDERR_FILENO);
    ::execve(argv[0], argv.data(), envp.data());
    int e = errno;
    ssize_t ignored = ::write(report[1], &e, sizeof e);
    (void)ignored;
    ::_exit(127);
  }
  int fork_errno = errno;
  ::close(report[1]);
  if (out >= 0) ::close(out);
  if (err >= 0) ::close(err);
  if (pid < 0) {
    ::close(report[0]);
    return make_error(Errc::io_error, std::string("fork: ") + std::strerror(fork_errno));
  }
  ::setpgid(pid, pid);  // also here, so the group exists before we might signal it
  int exec_errno = 0;
  ssize_t n;
  do {
    n = ::read(report[0], &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    reap_within(pid, 5.0);
    return make_error(Errc::io_error, "cannot execute " + spec.argv[0] + ": " + std::strerror(exec_errno));
  }
  return pid;
}

std::optional<int> try_reap(pid_t pid) {
  int wstatus = 0;
  pid_t r;
  do {
    r = ::waitpid(pid, &wstatus, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid) return shell_status(wstatus);
  if (r < 0 && errno == ECHILD) return 255;  // not ours (any more): never wait for it forever
  return std::nullopt;
}

std::optional<int> reap_within(pid_t pid, double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    if (auto st = try_reap(pid)) return st;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void signal_group(pid_t pgid, int sig) {
  if (pgid <= 0) return;
  ::kill(-pgid, SIGCONT);
  if (sig != SIGCONT) ::kill(-pgid, sig);
}

namespace signals {

namespace {
int g_pipe[2] = {-1, -1};
volatile std::sig_atomic_t g_stop = 0;
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

void on_signal(int sig) {
  int saved = errno;
  if (sig != SIGCHLD && g_stop == 0) g_stop = sig;
  char byte = 0;
  ssize_t ignored = ::write(g_pipe[1], &byte, 1);  // full pipe: already readable, nothing lost
  (void)ignored;
  errno = saved;
}
}  // namespace

void install() {
  if (g_pipe[0] >= 0) return;
  if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGCHLD, &sa, nullptr);
  for (int s : kStopSignals) ::sigaction(s, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // a closed RM socket is an error reply, not our death
}

int fd() { return g_pipe[0]; }

void drain() {
  char buf[64];
  while (g_pipe[0] >= 0 && ::read(g_pipe[0], buf, sizeof buf) > 0) {
  }
}

int stop_signal() { return g_stop; }

void reset_in_child() {
  ::signal(SIGCHLD, SIG_DFL);
  ::signal(SIGPIPE, SIG_DFL);
  for (int s : kStopSignals) ::signal(s, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

}  // namespace signals

}  // namespace cosched::qsubmit
