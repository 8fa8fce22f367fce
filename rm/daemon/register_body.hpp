// The register frame's body, as the RM reads it from a connecting job: a fixed-size struct whose fields are
// range-checked before anything of it is used (the RM trusts nothing a job writes). Pure, so a fuzz target
// (tests/fuzz/fuzz_register.cpp) drives the same code the daemon runs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cosched/error.hpp"

namespace cosched::rm {

struct RegisterRequest {
  int request = 1;          // CPUs the job asks for, in [1, kMaxCpus]
  std::uint32_t flags = 0;  // proto::RegisterFlags, unknown bits kept (a newer libcosched may set more)
  std::string command;      // printable ASCII only, for display
};

// One error naming the field when the body is the wrong size or a field is out of range.
Result<RegisterRequest> parse_register_body(std::string_view payload);

// `s` up to its first NUL or `max` bytes, every byte outside printable ASCII shown as '?'.
std::string printable(const char* s, std::size_t max);

}  // namespace cosched::rm
