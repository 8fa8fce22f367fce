// The RM's socket and its connections, a room of the daemon with a seam a test can reach: listening, peer
// credentials, non-blocking framed I/O (server.cpp), and what keeps a hostile or broken peer from starving
// the RM (server_limits.cpp). It knows nothing of jobs beyond the id a connection registered as: whole
// frames go to the daemon, and a registered job's lost connection is the daemon's to end (it departs the
// job, which closes the connection).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "config.hpp"
#include "cosched/log.hpp"
#include "cosched/error.hpp"
#include "cosched/wire.hpp"
#include "policies/policy.hpp"

namespace cosched::rm {

// One peer of the RM's socket.
struct Conn {
  int fd = -1;
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  wire::FrameReader reader{proto::kMaxRequestPayload};
  std::string out;          // bytes not yet written
  policy::JobId job = -1;   // set once the peer registered as a job
  bool closing = false;     // close once `out` is flushed
  double progress_at = 0;   // accepted, last whole frame read, or last bytes written (client timeout)
};

// Adds `fd` to the epoll set `epfd` for `events`, or changes what it waits for.
void watch_fd(int epfd, int fd, std::uint32_t events);

// Process-wide limits the RM sets for itself at start (server_limits.cpp): the fd soft limit up to the hard
// one (a job holds three fds in the RM), and the niceness of --nice where the privilege allows.
void raise_fd_limit();
void raise_priority(int nice);

class Server {
 public:
  struct Handlers {
    // A whole frame from an authorised peer; false when it is no message the RM takes (the peer is refused).
    std::function<bool(Conn&, const wire::Frame&)> frame;
    std::function<void(policy::JobId, const std::string&)> job_lost;  // a registered job's connection ended
    std::function<double()> now;                                     // the daemon's clock, in seconds
  };
  Server(const Config& cfg, Handlers handlers) : cfg_(cfg), on_(std::move(handlers)) {}
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Creates the socket's directory (or checks an existing one) so that no other user can replace the socket.
  [[nodiscard]] Status prepare_socket_dir() const;
  // Binds and listens on cfg.socket (an answering socket there is another RM: an error), watched in `epfd`.
  Status open(int epfd);
  // The listening socket or a connection: handles what epoll said of it and returns true; false for any other fd.
  bool on_event(int fd, std::uint32_t events);

  void queue_reply(Conn& c, proto::MsgType type, const std::string& payload);
  [[nodiscard]] bool has(int fd) const { return conns_.count(fd) != 0; }
  void close(int fd);
  // Closes every connection and the listening socket, and removes the socket file this server created.
  void shut();
  // Each quantum: connections that owe a frame or a read past --client-timeout-ms are dropped, and a
  // listening socket paused for lack of fds is tried again.
  void drop_stalled();
  void resume_accepting();

  // Root, the RM's own user, or a member of --admin-group: may change the policy or parameters, or shut
  // the RM down (docs/architecture.md, "Who may do what").
  [[nodiscard]] bool is_admin(const Conn& c) const;
  [[nodiscard]] std::size_t connections() const { return conns_.size(); }
  // Lines a peer can trigger at will are throttled: the daemon's registration and control refusals too.
  log::Throttle& peer_log() { return peer_log_; }

 private:
  [[nodiscard]] bool authorised(const Conn& c) const;
  void on_accept();
  void on_readable(Conn& c);
  void on_writable(Conn& c);
  void refuse_and_drop(Conn& c, const std::string& why, const char* departure);
  void end(Conn& c, const char* why);  // a job's connection: the daemon departs the job; any other: closed
  void shed_connections();
  void pause_accepting();

  const Config& cfg_;
  Handlers on_;
  int epfd_ = -1;
  int listen_fd_ = -1;
  int spare_fd_ = -1;            // held back so that the RM can accept-and-refuse when out of fds
  bool accept_paused_ = false;   // the listening socket is out of epoll (out of fds, no spare)
  bool socket_created_ = false;
  log::Throttle accept_log_{3, 1.0};
  log::Throttle peer_log_{20, 1.0};
  std::map<int, Conn> conns_;  // by fd
};

}  // namespace cosched::rm
