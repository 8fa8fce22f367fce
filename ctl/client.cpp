#include "client.hpp"

#include <unistd.h>

#include <cerrno>
#include <string>

#include "cosched/wire.hpp"

namespace cosched::ctl {

Result<nlohmann::json> request(const std::string& socket, const nlohmann::json& req, int timeout_ms) {
  std::string err;
  int fd = wire::connect_unix(socket, timeout_ms, err);
  if (fd < 0) return make_error(Errc::io_error, err + " (is cosched-rm running?)");
  std::string body = req.dump();
  wire::Frame f;
  wire::RecvStatus st = wire::RecvStatus::error;
  if (wire::send_frame(fd, proto::MsgType::ctl_request, body.data(), static_cast<std::uint32_t>(body.size()))) {
    st = wire::recv_frame(fd, f, proto::kMaxReplyPayload);
  }
  // SO_RCVTIMEO/SO_SNDTIMEO expiring shows as a socket error with EAGAIN: say what happened, not how.
  const bool timed_out = st == wire::RecvStatus::error && (errno == EAGAIN || errno == EWOULDBLOCK);
  ::close(fd);
  if (f.passed_fd >= 0) ::close(f.passed_fd);
  if (timed_out) {
    return make_error(Errc::timeout, "timed out after " + std::to_string(timeout_ms) + " ms waiting for " + socket +
                                         " to answer (--timeout-ms; is cosched-rm stopped or overloaded?)");
  }
  if (st != wire::RecvStatus::ok) {
    return make_error(Errc::protocol_error, std::string("no reply from ") + socket + ": " + wire::to_string(st));
  }
  if (f.type == proto::MsgType::refused) return make_error(Errc::permission_denied, "refused: " + f.payload);
  auto j = nlohmann::json::parse(f.payload, nullptr, false);
  if (j.is_discarded()) return make_error(Errc::protocol_error, "the RM's reply is not JSON");
  return j;
}

}  // namespace cosched::ctl
