// The RM's socket: listening, peer credentials, non-blocking framed I/O. Anything malformed from a peer is
// one error line naming the peer, and that connection is dropped; the RM keeps serving everyone else.
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "cosched/log.hpp"
#include "server.hpp"

namespace cosched::rm {
namespace {

// Whether the user `uid` (primary group `gid`, from SO_PEERCRED) belongs to `name`, counting the
// supplementary groups of its passwd entry. Read on control requests that need it, never per region.
bool user_in_group(uid_t uid, gid_t gid, const std::string& name) {
  group* g = ::getgrnam(name.c_str());
  if (g == nullptr) return false;
  if (gid == g->gr_gid) return true;
  const gid_t wanted = g->gr_gid;
  passwd* pw = ::getpwuid(uid);
  if (pw == nullptr) return false;
  int n = 64;
  std::vector<gid_t> groups(static_cast<std::size_t>(n));
  if (::getgrouplist(pw->pw_name, pw->pw_gid, groups.data(), &n) < 0) {
    groups.resize(static_cast<std::size_t>(n));
    if (::getgrouplist(pw->pw_name, pw->pw_gid, groups.data(), &n) < 0) return false;
  }
  for (int i = 0; i < n; ++i) {
    if (groups[static_cast<std::size_t>(i)] == wanted) return true;
  }
  return false;
}

}  // namespace

void watch_fd(int epfd, int fd, std::uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (::epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev) != 0) ::epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

Server::~Server() {
  if (spare_fd_ >= 0) ::close(spare_fd_);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

Status Server::prepare_socket_dir() const {
  // First of all, before anything is created: a group that does not exist is a typo, one error line.
  for (const auto& [name, option] : {std::pair{cfg_.socket_group, "--socket-group"}, {cfg_.admin_group, "--admin-group"}}) {
    if (!name.empty() && ::getgrnam(name.c_str()) == nullptr) {
      return make_error(Errc::not_found, "unknown group '" + name + "' for " + option);
    }
  }
  // Whoever owns the socket's directory can replace the socket with one of their own and impersonate the
  // RM to every client (the non-root default /tmp/cosched-<uid>/ can be created by anyone first). So the
  // directory is created 0700 (0710 and the group's with --socket-group, so members can reach the socket),
  // and an existing one must be ours or root's and writable by no one else unless sticky (/tmp).
  auto dir = std::filesystem::path(cfg_.socket).parent_path();
  if (dir.empty()) dir = ".";
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    std::error_code ec;
    if (dir.has_parent_path()) std::filesystem::create_directories(dir.parent_path(), ec);
    // --all-users: others may search the directory (to reach the socket) but not list or write it.
    const mode_t mode = cfg_.all_users ? 0711 : cfg_.socket_group.empty() ? 0700 : 0710;
    if (::mkdir(dir.c_str(), mode) != 0 && errno != EEXIST) {
      return make_error(Errc::io_error, "cannot create " + dir.string() + ": " + std::strerror(errno));
    }
    if (::stat(dir.c_str(), &st) != 0) {
      return make_error(Errc::io_error, "cannot create " + dir.string() + ": " + std::strerror(errno));
    }
    if (!cfg_.socket_group.empty() && st.st_uid == ::geteuid()) {
      if (group* g = ::getgrnam(cfg_.socket_group.c_str()); g != nullptr) {
        (void)::chown(dir.c_str(), static_cast<uid_t>(-1), g->gr_gid);  // best effort: the socket is chowned too
      }
    }
  }
  if (!S_ISDIR(st.st_mode)) {
    return make_error(Errc::invalid_argument, dir.string() + " (the socket's directory) is not a directory");
  }
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    return make_error(Errc::permission_denied,
                      dir.string() + " (the socket's directory) belongs to uid " + std::to_string(st.st_uid) +
                          ", not to this user (uid " + std::to_string(::geteuid()) +
                          ") or root: another user could impersonate the RM there; remove it or choose --socket");
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
    return make_error(Errc::permission_denied,
                      dir.string() + " (the socket's directory) is writable by other users and not sticky: another "
                                     "user could replace the socket; chmod go-w it or choose --socket");
  }
  return {};
}

Status Server::open(int epfd) {
  epfd_ = epfd;
  const std::string& path = cfg_.socket;
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return make_error(Errc::invalid_argument, "socket path too long: " + path);
  // A socket file that nobody answers on is a leftover of a dead RM; one that answers is a live RM.
  if (std::filesystem::exists(path)) {
    std::string err;
    int probe = wire::connect_unix(path, 200, err);
    if (probe >= 0 || errno == EPERM) {
      if (probe >= 0) ::close(probe);
      return make_error(Errc::invalid_argument, "another cosched-rm is already serving " + path);
    }
    ::unlink(path.c_str());
  }
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) return make_error(Errc::io_error, std::string("socket: ") + std::strerror(errno));
  // Bound under a staging name and linked into place once it listens: a client that finds the path is
  // answered. Bound at the path itself, a connect() between bind and listen was refused (ECONNREFUSED),
  // and a job that started then ran natively; a loaded test machine hit that window.
  std::string staging = path + ".starting." + std::to_string(::getpid());
  if (staging.size() >= sizeof addr.sun_path) staging = path;  // no room for the suffix: bind in place
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, staging.c_str(), staging.size() + 1);
  // Created with no permissions for others from the first instant, then opened up to exactly what is asked.
  mode_t old = ::umask(0177);
  int rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::umask(old);
  if (rc != 0) return make_error(Errc::io_error, "cannot bind " + path + ": " + std::strerror(errno));
  if (staging == path) socket_created_ = true;
  auto fail = [&](Status st) {
    if (staging != path) ::unlink(staging.c_str());
    return st;
  };
  if (!cfg_.socket_group.empty()) {
    group* g = ::getgrnam(cfg_.socket_group.c_str());
    if (g == nullptr) {
      return fail(make_error(Errc::not_found, "unknown group '" + cfg_.socket_group + "' for --socket-group"));
    }
    if (::chown(staging.c_str(), static_cast<uid_t>(-1), g->gr_gid) != 0 || ::chmod(staging.c_str(), 0660) != 0) {
      return fail(make_error(Errc::io_error, "cannot give group " + cfg_.socket_group + " access to " + path));
    }
  } else {
    ::chmod(staging.c_str(), cfg_.all_users ? 0666 : 0600);
  }
  spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);  // see shed_connections()
  // Hundreds of jobs may start at once: a short backlog made their connect() fail with EAGAIN. The kernel
  // caps this at net.core.somaxconn; clients also retry with backoff (wire::connect_unix).
  if (::listen(listen_fd_, 4096) != 0) {
    return fail(make_error(Errc::io_error, std::string("listen: ") + std::strerror(errno)));
  }
  if (staging != path) {
    // link(), not rename(): an RM that started at the same moment on the same path keeps its socket, and
    // this one stops as bind() made it stop before.
    int linked = ::link(staging.c_str(), path.c_str());
    int link_errno = errno;
    if (linked != 0 && link_errno != EEXIST) {  // a file system without hard links
      linked = ::rename(staging.c_str(), path.c_str());
      link_errno = errno;
    }
    ::unlink(staging.c_str());
    if (linked != 0 && link_errno == EEXIST) {
      return make_error(Errc::invalid_argument, "another cosched-rm is already serving " + path);
    }
    if (linked != 0) {
      return make_error(Errc::io_error, "cannot bind " + path + ": " + std::strerror(link_errno));
    }
    socket_created_ = true;
  }
  watch_fd(epfd_, listen_fd_, EPOLLIN);
  return {};
}

bool Server::authorised(const Conn& c) const {
  if (c.uid == 0 || c.uid == ::geteuid() || cfg_.all_users) return true;
  if (cfg_.socket_group.empty()) return false;
  group* g = ::getgrnam(cfg_.socket_group.c_str());
  return g != nullptr && c.gid == g->gr_gid;
}

bool Server::is_admin(const Conn& c) const {
  if (c.uid == 0 || c.uid == ::geteuid()) return true;
  if (cfg_.admin_group.empty()) return false;
  return user_in_group(c.uid, c.gid, cfg_.admin_group);
}

void Server::on_accept() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) return shed_connections();
      if (errno == ECONNABORTED || errno == EINTR) continue;
      if (errno != EAGAIN) COSCHED_THROTTLED(accept_log_, rm, warn, "accept: {}", std::strerror(errno));
      return;
    }
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      ::close(fd);
      continue;
    }
    Conn c;
    c.fd = fd;
    c.pid = cred.pid;
    c.uid = cred.uid;
    c.gid = cred.gid;
    c.progress_at = on_.now();
    if (!authorised(c)) {
      COSCHED_THROTTLED(peer_log_, rm, warn,
                        "refused connection from pid {} uid {}: only uid {}, root{} may use this RM", c.pid, c.uid,
                        ::geteuid(), cfg_.socket_group.empty() ? std::string() : " or group " + cfg_.socket_group);
      std::string why = "permission denied: uid " + std::to_string(c.uid) + " may not use this resource manager";
      wire::send_frame(fd, proto::MsgType::refused, why.data(), static_cast<std::uint32_t>(why.size()));
      ::close(fd);
      continue;
    }
    conns_.emplace(fd, std::move(c));
    watch_fd(epfd_, fd, EPOLLIN);
  }
}

void Server::on_readable(Conn& c) {
  const int fd = c.fd;
  char buf[16384];
  bool eof = false;
  for (;;) {
    ssize_t r = ::recv(fd, buf, sizeof buf, 0);
    if (r > 0) {
      c.reader.append(buf, static_cast<std::size_t>(r));
      continue;
    }
    if (r == 0 || (errno != EAGAIN && errno != EINTR)) eof = true;
    if (r < 0 && errno == EINTR) continue;
    break;
  }
  for (;;) {
    wire::Frame f;
    auto st = c.reader.next(f);
    if (st == wire::RecvStatus::closed) break;  // need more bytes
    if (st != wire::RecvStatus::ok) {
      COSCHED_THROTTLED(peer_log_, rm, error, "dropping connection from pid {}: {}", c.pid, wire::to_string(st));
      return refuse_and_drop(c, std::string("protocol error: ") + wire::to_string(st), "protocol error");
    }
    c.progress_at = on_.now();
    if (!on_.frame(c, f)) {
      COSCHED_THROTTLED(peer_log_, rm, error, "dropping connection from pid {}: unexpected message type {}", c.pid,
                        static_cast<unsigned>(f.type));
      // The same answer as any other protocol error: the peer learns why before the connection closes.
      return refuse_and_drop(
          c, "protocol error: unexpected message type " + std::to_string(static_cast<unsigned>(f.type)),
          "protocol error");
    }
    if (conns_.find(fd) == conns_.end()) return;  // the handler closed it
  }
  if (eof) {
    if (c.job >= 0) {
      on_.job_lost(c.job, "connection closed");
    } else if (c.out.empty()) {
      close(fd);
    } else {
      c.closing = true;
      watch_fd(epfd_, fd, EPOLLOUT);  // the peer is gone for reading: only flush what is left
    }
  }
}

void Server::refuse_and_drop(Conn& c, const std::string& why, const char* departure) {
  wire::send_frame(c.fd, proto::MsgType::refused, why.data(), static_cast<std::uint32_t>(why.size()));
  end(c, departure);
}

void Server::end(Conn& c, const char* why) {
  if (c.job >= 0) {
    on_.job_lost(c.job, why);  // the daemon departs the job, which closes the connection
  } else {
    close(c.fd);
  }
}

void Server::queue_reply(Conn& c, proto::MsgType type, const std::string& payload) {
  proto::FrameHeader h{proto::kMagic, proto::kVersion, static_cast<std::uint16_t>(type),
                       static_cast<std::uint32_t>(payload.size()), 0};
  c.out.append(reinterpret_cast<const char*>(&h), sizeof h);
  c.out.append(payload);
  on_writable(c);
}

void Server::on_writable(Conn& c) {
  while (!c.out.empty()) {
    ssize_t w = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;
      c.out.clear();
      c.closing = true;
      break;
    }
    c.out.erase(0, static_cast<std::size_t>(w));
    c.progress_at = on_.now();
  }
  if (c.out.empty() && c.closing) {
    // Nothing left to flush: close now. Waiting for EPOLLOUT on an empty buffer would wake the loop for
    // ever (a level-triggered writable socket is always ready).
    return end(c, "connection closed");
  }
  if (c.closing) {
    watch_fd(epfd_, c.fd, EPOLLOUT);
  } else {
    watch_fd(epfd_, c.fd, c.out.empty() ? EPOLLIN : (EPOLLIN | EPOLLOUT));
  }
}

void Server::close(int fd) {
  ::epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr);
  ::close(fd);
  conns_.erase(fd);
  resume_accepting();  // an fd is free again
}

bool Server::on_event(int fd, std::uint32_t events) {
  if (fd == listen_fd_) {
    on_accept();
    return true;
  }
  auto c = conns_.find(fd);
  if (c == conns_.end()) return false;
  if (events & EPOLLOUT) on_writable(c->second);
  if (auto again = conns_.find(fd); again != conns_.end() && (events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
    on_readable(again->second);
  }
  return true;
}

void Server::shut() {
  while (!conns_.empty()) close(conns_.begin()->first);
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
  }
  if (socket_created_) ::unlink(cfg_.socket.c_str());
  socket_created_ = false;
}

}  // namespace cosched::rm
