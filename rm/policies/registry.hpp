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

// Builds the named policy and applies `params` in order; the first bad name or value is the error.
// `machine` lets a policy scale defaults (e.g. PDPA's step) to the machine.
Result<std::unique_ptr<Policy>> make_policy(std::string_view name, const Machine& machine,
                                            const ParamList& params = {});

std::vector<PolicyInfo> list_policies();

// Parses "k=v" into a pair; an error names the text.
Result<std::pair<std::string, std::string>> parse_param(std::string_view kv);

}  // namespace cosched::policy
