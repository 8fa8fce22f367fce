#include "cosched/error.hpp"

#include <array>

namespace cosched {

namespace {
constexpr std::array<std::string_view, static_cast<std::size_t>(Errc::count_)> kNames = {
    "ok", "invalid_argument", "parse_error", "io_error", "protocol_error",
    "permission_denied", "not_found", "unsupported", "timeout",
};
}  // namespace

std::string_view to_string(Errc e) noexcept {
  auto i = static_cast<std::size_t>(e);
  return i < kNames.size() ? kNames[i] : std::string_view{"unknown"};
}

}  // namespace cosched
