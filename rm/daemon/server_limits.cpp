// What keeps a hostile or broken peer from starving the RM: running out of file descriptors, connections
// that never finish a frame. (Log lines a peer can trigger at will go through log::Throttle.)
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "cosched/log.hpp"
#include "server.hpp"

namespace cosched::rm {

namespace {
// Peers refused per wake-up while out of fds: a flood of connects cannot hold the loop (the listening
// socket is level-triggered, so the rest are handled at the next wake-up).
constexpr int kShedPerWakeup = 64;
}  // namespace

void raise_fd_limit() {
  // A job holds three fds in the RM (connection, pidfd, arena memfd): the usual soft limit of 1024 would
  // cap the RM near 330 jobs where the hard limit allows more. The RM uses epoll, so no FD_SETSIZE bound.
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max) return;
  const rlim_t was = rl.rlim_cur;
  rl.rlim_cur = rl.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &rl) == 0) {
    COSCHED_DEBUG(rm, "file descriptor limit raised from {} to {}", was, rl.rlim_max);
  }
}

void raise_priority(int nice) {
  // The RM's work is small but latency-bound: a starting job waits for its registration reply and runs
  // unmanaged after COSCHED_CONNECT_TIMEOUT_MS. Among hundreds of CPU-bound jobs a nice-0 RM waited that
  // long for the CPU (138 of 256 jobs ran natively); at --nice -10 none did. Without the privilege the RM
  // keeps the niceness it was given.
  errno = 0;
  const int was = ::getpriority(PRIO_PROCESS, 0);
  if (errno != 0 || nice == was) return;
  if (::setpriority(PRIO_PROCESS, 0, nice) != 0) {
    COSCHED_DEBUG(rm, "cannot set niceness {} ({}); keeping {}", nice, std::strerror(errno), was);
  }
}

void Server::shed_connections() {
  // Out of fds (EMFILE/ENFILE): the waiting peer keeps the listening socket readable, and epoll would wake
  // the loop for ever (100 % CPU). The spare fd makes room to accept each waiting peer, tell it why, and
  // close it; if even that fails, the socket is left out of epoll until a connection closes or a quantum.
  const int err = errno;
  COSCHED_THROTTLED(accept_log_, rm, warn,
                    "accept: {} ({} connections open): refusing new connections until some close",
                    std::strerror(err), conns_.size());
  for (int i = 0; i < kShedPerWakeup; ++i) {
    if (spare_fd_ < 0) return pause_accepting();
    ::close(spare_fd_);
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    const int accept_err = errno;
    if (fd >= 0) {
      static const std::string why = "cosched-rm is out of file descriptors; try again later";
      wire::send_frame(fd, proto::MsgType::refused, why.data(), static_cast<std::uint32_t>(why.size()));
      ::close(fd);
    }
    spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (accept_err != EAGAIN && accept_err != EINTR && accept_err != ECONNABORTED) pause_accepting();
      return;
    }
  }
}

void Server::pause_accepting() {
  if (accept_paused_ || listen_fd_ < 0) return;
  ::epoll_ctl(epfd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
  accept_paused_ = true;
}

void Server::resume_accepting() {
  if (spare_fd_ < 0) spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (!accept_paused_ || listen_fd_ < 0) return;
  accept_paused_ = false;
  watch_fd(epfd_, listen_fd_, EPOLLIN);
}

void Server::drop_stalled() {
  // A registered job's connection is idle by design (it only waits for the RM to go away). Anything else
  // must make progress: a control client sends its request at once and reads its reply; a peer that leaves
  // a frame half-sent, says nothing, or does not read, holds an fd and memory for nothing.
  const double limit = cfg_.client_timeout_ms / 1000.0;
  const double t = on_.now();
  std::vector<int> stalled;
  for (const auto& [fd, c] : conns_) {
    const bool owes = c.job < 0 || c.reader.buffered() > 0 || !c.out.empty();
    if (owes && t - c.progress_at > limit) stalled.push_back(fd);
  }
  for (int fd : stalled) {
    auto it = conns_.find(fd);
    if (it == conns_.end()) continue;  // closed by an earlier departure
    Conn& c = it->second;
    const char* what = c.reader.buffered() > 0 ? "a frame left half-sent"
                       : !c.out.empty()         ? "a reply left unread"
                                                : "no request";
    COSCHED_THROTTLED(peer_log_, rm, warn, "dropping connection from pid {}: {} for {} ms", c.pid, what,
                      cfg_.client_timeout_ms);
    if (c.out.empty()) {
      std::string why = std::string("timed out: ") + what;
      wire::send_frame(fd, proto::MsgType::refused, why.data(), static_cast<std::uint32_t>(why.size()));
    }
    end(c, "connection stalled");
  }
}

}  // namespace cosched::rm
