// Framing for the RM socket (include/cosched/protocol.hpp): blocking helpers for clients (libcosched,
// cosched-ctl, qsubmit) and an incremental, non-blocking frame reader for the daemon.
//
// This file is linked into libcosched, which is preloaded into arbitrary programs: no exceptions escape,
// and nothing here runs on the parallel-region hot path.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cosched/protocol.hpp"

namespace cosched::wire {

// Connects a SOCK_STREAM UNIX socket to `path` (close-on-exec). Returns the fd, or -1 with `err` set to a
// sentence naming the path and the reason. Refuses (errno EPERM) a socket whose directory belongs to another
// uid than ours or root's, and a server of another uid (SO_PEERCRED): a forged RM gets nothing.
int connect_unix(const std::string& path, int timeout_ms, std::string& err);

// The two checks connect_unix makes: the socket's directory belongs to us or root; the process that
// listens on `fd` runs as us or root. False with `err` set (errno EPERM) otherwise.
bool trusted_socket_dir(const std::string& socket_path, std::string& err);
bool trusted_peer(int fd, const std::string& socket_path, std::string& err);

// Sends one frame (header + payload), optionally passing `pass_fd` with SCM_RIGHTS. Blocking; retries
// partial writes and EINTR. Returns false on any error (errno kept).
bool send_frame(int fd, proto::MsgType type, const void* payload, std::uint32_t length, int pass_fd = -1);

enum class RecvStatus { ok, closed, error, bad_magic, bad_version, too_large };
const char* to_string(RecvStatus s) noexcept;

struct Frame {
  proto::MsgType type{};
  std::string payload;
  int passed_fd = -1;  // an fd that arrived with the frame (caller owns it), -1 if none
};

// Reads exactly one frame, blocking (honours SO_RCVTIMEO: a timeout is RecvStatus::error with EAGAIN).
RecvStatus recv_frame(int fd, Frame& out, std::uint32_t max_payload);

// Checks a header's magic/version/length; used by both the blocking and the incremental reader.
RecvStatus check_header(const proto::FrameHeader& h, std::uint32_t max_payload) noexcept;

// Incremental reader for non-blocking sockets: append what recv() returned, then pop frames.
class FrameReader {
 public:
  explicit FrameReader(std::uint32_t max_payload) : max_payload_(max_payload) {}
  void append(const char* data, std::size_t n) { buf_.append(data, n); }
  // Returns ok and fills `out` when a whole frame is buffered; `closed` means "need more bytes";
  // bad_magic/bad_version/too_large are fatal for the connection.
  RecvStatus next(Frame& out);
  [[nodiscard]] std::size_t buffered() const { return buf_.size(); }

 private:
  std::uint32_t max_payload_;
  std::string buf_;
};

// The default RM socket: /run/cosched/rm.sock for root, $XDG_RUNTIME_DIR/cosched/rm.sock otherwise
// (falling back to /tmp/cosched-<uid>/rm.sock). COSCHED_SOCKET overrides both.
std::string default_socket_path();

}  // namespace cosched::wire
