#include "param_util.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace cosched::policy {

namespace {
Error bad(std::string_view name, std::string_view text, std::string_view want) {
  return make_error(Errc::invalid_argument, "parameter " + std::string(name) + "='" + std::string(text) +
                                                "': expected " + std::string(want));
}
}  // namespace

Status parse_double_param(std::string_view name, std::string_view text, double lo, double hi, double& out) {
  std::string s(text);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  char want[96];
  std::snprintf(want, sizeof want, "a number in [%g, %g]", lo, hi);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < lo || v > hi) {
    return bad(name, text, want);
  }
  out = v;
  return {};
}

Status parse_int_param(std::string_view name, std::string_view text, long lo, long hi, long& out) {
  long v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || p != text.data() + text.size() || v < lo || v > hi) {
    return bad(name, text, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  out = v;
  return {};
}

std::string format_param(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace cosched::policy
