#include "reaper.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>

namespace cosched::qsubmit {

std::optional<int> ended_status(pid_t pid) {
  siginfo_t info{};
  int r;
  do {
    r = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return errno == ECHILD ? std::optional<int>(255) : std::nullopt;
  if (info.si_pid != pid) return std::nullopt;  // still running
  if (info.si_code == CLD_EXITED) return info.si_status;
  return 128 + info.si_status;  // CLD_KILLED, CLD_DUMPED: the signal
}

Reaper::~Reaper() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Reaper::reap(pid_t pid) {
  {
    std::lock_guard lock(mutex_);
    pending_.push_back(pid);
    if (!thread_.joinable()) {
      // Started on first use, with every signal blocked: it inherits this mask; ours is restored after.
      sigset_t all, old;
      sigfillset(&all);
      pthread_sigmask(SIG_SETMASK, &all, &old);
      thread_ = std::thread([this] { run(); });
      pthread_sigmask(SIG_SETMASK, &old, nullptr);
    }
  }
  changed_.notify_all();
}

void Reaper::drain() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return pending_.empty() && busy_ == 0; });
}

void Reaper::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
    if (pending_.empty()) return;  // stopping, nothing left
    const pid_t pid = pending_.front();
    pending_.pop_front();
    ++busy_;
    lock.unlock();
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    lock.lock();
    --busy_;
    changed_.notify_all();
  }
}

}  // namespace cosched::qsubmit
