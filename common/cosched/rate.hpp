// Bandwidths on command lines: "29e9", "29G", "29GB/s", "1.5 G", "250M" (decimal prefixes k, M, G, T;
// an optional "B" and "/s"), always bytes per second. One spelling for cosched-rm and cosched-sim.
#pragma once

#include <string>
#include <string_view>

#include "cosched/error.hpp"

namespace cosched {

// Errc::invalid_argument naming the text for anything else, or a negative or non-finite value.
Result<double> parse_rate(std::string_view text);
// "29.2 GB/s", "250 MB/s", "0 B/s": what status lines and docs print.
std::string format_rate(double bytes_per_s);

}  // namespace cosched
