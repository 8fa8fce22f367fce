#include "table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace cosched::ctl {

std::string render_table(const std::vector<Column>& columns, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(columns.size(), 0);
  for (std::size_t c = 0; c < columns.size(); ++c) width[c] = columns[c].header.size();
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < columns.size() && c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](auto cell) {
    std::string out;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const std::string& text = cell(c);
      if (c > 0) out += "  ";
      const bool last = c + 1 == columns.size();
      if (columns[c].right) {
        out += std::string(width[c] - text.size(), ' ') + text;
      } else {
        out += text;
        if (!last) out += std::string(width[c] - text.size(), ' ');
      }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line([&](std::size_t c) -> const std::string& { return columns[c].header; });
  static const std::string empty;
  for (const auto& row : rows) out += line([&](std::size_t c) -> const std::string& { return c < row.size() ? row[c] : empty; });
  return out;
}

std::string format_elapsed(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "-";
  if (seconds < 60) return fmt::format("{:.1f}s", seconds);
  auto s = static_cast<long long>(seconds);
  if (s < 3600) return fmt::format("{}:{:02}", s / 60, s % 60);
  return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
}

std::string number_cell(const nlohmann::json& v, const char* spec) {
  return v.is_number() ? fmt::format(fmt::runtime(spec), v.get<double>()) : "-";
}

}  // namespace cosched::ctl
