// A text table sized to its content: every column as wide as its widest cell, nothing ever cut (commands
// and reasons are what people read the table for); the last column is not padded, so long commands only
// make their own lines long.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cosched::ctl {

struct Column {
  std::string header;
  bool right = false;  // numbers align right
};

std::string render_table(const std::vector<Column>& columns, const std::vector<std::vector<std::string>>& rows);

// "12.3s", "4:05" (minutes:seconds), "1:02:03" (hours): as wide as it needs to be, like ps's TIME.
std::string format_elapsed(double seconds);

// A JSON number formatted with `spec` (fmt syntax, e.g. "{:.2f}"), or "-" when the value is not a number.
std::string number_cell(const nlohmann::json& v, const char* spec);

}  // namespace cosched::ctl
