#include "cosched/rate.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

namespace cosched {

Result<double> parse_rate(std::string_view text) {
  const std::string s(text);
  auto bad = [&] {
    return make_error(Errc::invalid_argument,
                      "bad bandwidth '" + s + "': expected bytes per second, e.g. 29e9, 29G, 29GB/s or 250M");
  };
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(v) || v < 0) return bad();
  std::string rest(end);
  while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) rest.erase(0, 1);
  double scale = 1;
  if (!rest.empty()) {
    switch (rest.front()) {
      case 'k': case 'K': scale = 1e3; rest.erase(0, 1); break;
      case 'M': scale = 1e6; rest.erase(0, 1); break;
      case 'G': scale = 1e9; rest.erase(0, 1); break;
      case 'T': scale = 1e12; rest.erase(0, 1); break;
      default: break;
    }
  }
  if (rest == "B" || rest == "B/s" || rest == "/s") rest.clear();
  if (!rest.empty()) return bad();
  return v * scale;
}

std::string format_rate(double b) {
  if (!(b >= 0) || !std::isfinite(b)) return "?";
  if (b >= 1e9) return fmt::format("{:.2f} GB/s", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.1f} MB/s", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f} kB/s", b / 1e3);
  return fmt::format("{:.0f} B/s", b);
}

}  // namespace cosched
