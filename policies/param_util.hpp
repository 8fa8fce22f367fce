// Parsing helpers shared by policies' set_param: one error text format for every bad value.
#pragma once

#include <string>
#include <string_view>

#include "cosched/error.hpp"

namespace cosched::policy {

// Parses a finite double in [lo, hi] into `out`; on error `out` is unchanged.
Status parse_double_param(std::string_view name, std::string_view text, double lo, double hi, double& out);
// Parses an integer in [lo, hi] into `out`; on error `out` is unchanged.
Status parse_int_param(std::string_view name, std::string_view text, long lo, long hi, long& out);

std::string format_param(double v);

}  // namespace cosched::policy
