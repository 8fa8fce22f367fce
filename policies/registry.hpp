// The one table that maps policy names (and presets) to factories. Adding a policy = one .hpp/.cpp pair,
// one line in registry.cpp and one test file.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "policy.hpp"

namespace cosched::policy {

struct PolicyInfo {
  std::string name;
  std::string summary;
};

using ParamList = std::vector<std::pair<std::string, std::string>>;

// Builds the named policy and applies `params` (apply_params); the first bad name or value is the error.
// `machine` lets a policy scale defaults (e.g. PDPA's step) to the machine.
Result<std::unique_ptr<Policy>> make_policy(std::string_view name, const Machine& machine,
                                            const ParamList& params = {});

std::vector<PolicyInfo> list_policies();

// Applies `params` to `p` in an order that satisfies the constraints between them.
// On error `p` may be partly changed: use with_params for all or nothing.
Status apply_params(Policy& p, const ParamList& params);

// A copy of `p` (same memory of jobs) with every one of `params` applied, or the first error and `p`
// untouched: `cosched-ctl set a=1 b=2` changes both or neither.
Result<std::unique_ptr<Policy>> with_params(const Policy& p, const ParamList& params);

// Parses "k=v" into a pair; an error names the text.
Result<std::pair<std::string, std::string>> parse_param(std::string_view kv);

}  // namespace cosched::policy
