#include "register_body.hpp"

#include <cstring>

#include "cosched/protocol.hpp"

namespace cosched::rm {

std::string printable(const char* s, std::size_t max) {
  std::string out;
  for (std::size_t i = 0; i < max && s[i] != '\0'; ++i) {
    unsigned char ch = static_cast<unsigned char>(s[i]);
    out.push_back(ch >= 0x20 && ch < 0x7f ? static_cast<char>(ch) : '?');
  }
  return out;
}

Result<RegisterRequest> parse_register_body(std::string_view payload) {
  if (payload.size() != sizeof(proto::RegisterBody)) {
    return make_error(Errc::protocol_error, "register message has " + std::to_string(payload.size()) + " bytes, expected " +
                 std::to_string(sizeof(proto::RegisterBody)));
  }
  proto::RegisterBody body{};
  std::memcpy(&body, payload.data(), sizeof body);
  if (body.request < 1 || body.request > proto::kMaxCpus) {
    return make_error(Errc::invalid_argument, "field request=" + std::to_string(body.request) + " out of range [1, " +
                 std::to_string(proto::kMaxCpus) + "]");
  }
  return RegisterRequest{body.request, body.flags, printable(body.command, sizeof body.command)};
}

}  // namespace cosched::rm
