#include "cosched/wire.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace cosched::wire {

namespace {

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// Reads exactly n bytes; collects an SCM_RIGHTS fd if one arrives. 0 = ok, 1 = EOF, -1 = error.
int read_all(int fd, char* p, std::size_t n, int& passed_fd) {
  while (n > 0) {
    iovec iov{p, n};
    alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof cbuf;
    ssize_t r = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    if (r < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (r == 0) return 1;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int))) {
        int got = -1;
        std::memcpy(&got, CMSG_DATA(c), sizeof got);
        if (passed_fd >= 0) ::close(passed_fd);
        passed_fd = got;
      }
    }
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return 0;
}

std::string parent_dir(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Whether a process of `uid` may stand in for the RM: ours, or root's (an RM run by root for a group).
bool trusted_uid(uid_t uid) { return uid == ::geteuid() || uid == 0; }

}  // namespace

bool trusted_socket_dir(const std::string& socket_path, std::string& err) {
  const std::string dir = parent_dir(socket_path);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return true;  // connect() will name what is missing
  if (!trusted_uid(st.st_uid)) {
    err = "refusing " + socket_path + ": its directory " + dir + " belongs to uid " + std::to_string(st.st_uid) +
          ", not to this user (uid " + std::to_string(::geteuid()) +
          ") or root: another user could impersonate the RM there";
    errno = EPERM;
    return false;
  }
  return true;
}

bool trusted_peer(int fd, const std::string& socket_path, std::string& err) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    err = "cannot identify the process serving " + socket_path + ": " + std::strerror(errno);
    return false;
  }
  if (!trusted_uid(cred.uid)) {
    err = "refusing " + socket_path + ": it is served by uid " + std::to_string(cred.uid) + " (pid " +
          std::to_string(cred.pid) + "), not by this user (uid " + std::to_string(::geteuid()) + ") or root";
    errno = EPERM;
    return false;
  }
  return true;
}

const char* to_string(RecvStatus s) noexcept {
  switch (s) {
    case RecvStatus::ok: return "ok";
    case RecvStatus::closed: return "connection closed";
    case RecvStatus::error: return "socket error";
    case RecvStatus::bad_magic: return "bad magic (not a cosched peer)";
    case RecvStatus::bad_version: return "protocol version mismatch";
    case RecvStatus::too_large: return "frame too large";
  }
  return "unknown";
}

namespace {

std::int64_t now_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// One non-blocking connect attempt, waiting at most `wait_ms` for it to complete. The fd, or -1 (errno set).
int connect_once(const sockaddr_un& addr, int wait_ms) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  if (rc < 0 && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    rc = ::poll(&p, 1, wait_ms) == 1 ? 0 : -1;
    int soerr = 0;
    socklen_t len = sizeof soerr;
    if (rc == 0 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 && soerr != 0) {
      errno = soerr;
      rc = -1;
    } else if (rc < 0) {
      errno = ETIMEDOUT;
    }
  }
  if (rc < 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

}  // namespace

int connect_unix(const std::string& path, int timeout_ms, std::string& err) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) {
    err = "socket path too long: " + path;
    return -1;
  }
  // Whoever owns the directory can put any socket at this path; whoever answers must be us or root.
  if (!trusted_socket_dir(path, err)) return -1;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  // A full listen backlog (EAGAIN: the RM is busy, e.g. hundreds of jobs starting at once) is retried with
  // backoff until the timeout: a busy RM must not push a job out of its control. No RM at all (ENOENT,
  // ECONNREFUSED) fails at once, so a job without an RM starts natively without delay.
  const std::int64_t deadline = now_ms() + std::max(timeout_ms, 0);
  int backoff_ms = 1;
  int fd = -1;
  for (;;) {
    const std::int64_t left = deadline - now_ms();
    fd = connect_once(addr, static_cast<int>(std::max<std::int64_t>(left, 0)));
    if (fd >= 0 || errno != EAGAIN || left <= 0) break;
    const int e = errno;
    ::poll(nullptr, 0, static_cast<int>(std::min<std::int64_t>(backoff_ms, left)));
    errno = e;
    backoff_ms = std::min(backoff_ms * 2, 100);
  }
  if (fd < 0) {
    err = "cannot connect to " + path + ": " + std::strerror(errno);
    return -1;
  }
  if (!trusted_peer(fd, path, err)) {
    const int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  // Back to blocking, with a receive timeout so a stuck peer cannot hang a client forever.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return fd;
}

bool send_frame(int fd, proto::MsgType type, const void* payload, std::uint32_t length, int pass_fd) {
  proto::FrameHeader h{proto::kMagic, proto::kVersion, static_cast<std::uint16_t>(type), length, 0};
  if (pass_fd >= 0) {
    // The fd rides on the header bytes.
    iovec iov{&h, sizeof h};
    alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof cbuf;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &pass_fd, sizeof pass_fd);
    ssize_t w;
    do {
      w = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
    } while (w < 0 && errno == EINTR);
    if (w < 0) return false;
    if (static_cast<std::size_t>(w) < sizeof h &&
        !write_all(fd, reinterpret_cast<const char*>(&h) + w, sizeof h - static_cast<std::size_t>(w))) {
      return false;
    }
  } else if (!write_all(fd, reinterpret_cast<const char*>(&h), sizeof h)) {
    return false;
  }
  return length == 0 || write_all(fd, static_cast<const char*>(payload), length);
}

RecvStatus check_header(const proto::FrameHeader& h, std::uint32_t max_payload) noexcept {
  if (h.magic != proto::kMagic) return RecvStatus::bad_magic;
  if (h.version != proto::kVersion) return RecvStatus::bad_version;
  if (h.length > max_payload) return RecvStatus::too_large;
  return RecvStatus::ok;
}

RecvStatus recv_frame(int fd, Frame& out, std::uint32_t max_payload) {
  proto::FrameHeader h{};
  out.passed_fd = -1;
  int r = read_all(fd, reinterpret_cast<char*>(&h), sizeof h, out.passed_fd);
  if (r != 0) return r > 0 ? RecvStatus::closed : RecvStatus::error;
  if (auto st = check_header(h, max_payload); st != RecvStatus::ok) return st;
  out.type = static_cast<proto::MsgType>(h.type);
  out.payload.assign(h.length, '\0');
  if (h.length > 0) {
    r = read_all(fd, out.payload.data(), h.length, out.passed_fd);
    if (r != 0) return r > 0 ? RecvStatus::closed : RecvStatus::error;
  }
  return RecvStatus::ok;
}

RecvStatus FrameReader::next(Frame& out) {
  if (buf_.size() < sizeof(proto::FrameHeader)) return RecvStatus::closed;
  proto::FrameHeader h{};
  std::memcpy(&h, buf_.data(), sizeof h);
  if (auto st = check_header(h, max_payload_); st != RecvStatus::ok) return st;
  if (buf_.size() < sizeof h + h.length) return RecvStatus::closed;
  out.type = static_cast<proto::MsgType>(h.type);
  out.payload.assign(buf_, sizeof h, h.length);
  out.passed_fd = -1;
  buf_.erase(0, sizeof h + h.length);
  return RecvStatus::ok;
}

std::string default_socket_path() {
  if (const char* env = std::getenv("COSCHED_SOCKET"); env != nullptr && *env != '\0') return env;
  if (::geteuid() == 0) return "/run/cosched/rm.sock";
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/cosched/rm.sock";
  }
  return "/tmp/cosched-" + std::to_string(::geteuid()) + "/rm.sock";
}

}  // namespace cosched::wire
