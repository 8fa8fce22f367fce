// Text helpers shared by the results writers and reader (not part of the public API): numbers that survive a
// round trip, CSV fields, and whole-file writes that a concurrent reader never sees half done.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cosched/error.hpp"

namespace cosched::results::text {

// Shortest decimal form that reads back to the same double ("0.1", "1e+20"); "nan"/"inf" never appear:
// non-finite values are written as -1, the files' "unknown".
std::string number(double v);

// A CSV field: quoted (with "" for ") only when it holds a comma, a quote or a newline; newlines become
// spaces so that one record is always one line.
std::string csv_field(std::string_view text);

// Splits one CSV line into fields; nullopt when a quote is left open.
std::optional<std::vector<std::string>> split_csv(std::string_view line);

// Parses a whole field as a number; nullopt when it is not one (trailing text, empty, nan).
std::optional<double> parse_number(std::string_view field);

// Writes `content` to `path` through a temporary file in the same directory and a rename, so readers see
// either the old file or the new one. Errors name the file.
Status write_file_atomically(const std::string& path, std::string_view content);

// Reads a whole file; the error names it.
Result<std::string> read_file(const std::string& path);

}  // namespace cosched::results::text
