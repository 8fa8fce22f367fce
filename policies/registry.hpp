// The one table that maps policy names to factories, each with its preset: the parameter values that name
// sets on its class's defaults (e.g. symbiotic's 100 ms quanta). Adding a policy = one .hpp/.cpp pair, one
// line in registry.cpp and one test file.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "policy.hpp"

namespace cosched::policy {

using ParamList = std::vector<std::pair<std::string, std::string>>;

// The policy a command runs when told none (cosched-rm --policy).
inline constexpr std::string_view kDefaultPolicy = "equip";

struct PolicyInfo {
  std::string name;
  std::string summary;
  ParamList preset;           // what this name sets on its class's defaults (empty: none)
  std::vector<Param> params;  // as a fresh one holds them (preset applied), on a one-CPU Machine{}
  bool uses_speedup = false;  // Policy::uses_speedup
  bool learns_pairs = false;  // Policy::pairs: a co-scheduling policy (reads progress rates)
};

// Builds the named policy and applies `params` (apply_params); the first bad name or value is the error.
// `machine` lets a policy scale defaults (e.g. PDPA's step) to the machine.
Result<std::unique_ptr<Policy>> make_policy(std::string_view name, const Machine& machine,
                                            const ParamList& params = {});

std::vector<PolicyInfo> list_policies();

// For help texts: "a, b, c", the names of the policies for which `pred` holds.
std::string policy_names(bool (*pred)(const PolicyInfo&));

// For --help: each policy's "name: summary", then its preset and one line per parameter (default, accepted
// values, meaning), every line starting with `indent`.
std::string describe_policies(std::string_view indent = "  ");

// The same as a Markdown table, one row per parameter (docs/usage.md, "Policies and their parameters", holds
// it; tests/integration/test_docs.py checks the two agree): `cosched-sim --list-policies --markdown`.
std::string policies_markdown();

// Applies `params` to `p` in an order that satisfies the constraints between them.
// On error `p` may be partly changed: use with_params for all or nothing.
Status apply_params(Policy& p, const ParamList& params);

// A copy of `p` (same memory of jobs) with every one of `params` applied, or the first error and `p`
// untouched: `cosched-ctl set a=1 b=2` changes both or neither.
Result<std::unique_ptr<Policy>> with_params(const Policy& p, const ParamList& params);

// Parses "k=v" into a pair; an error names the text.
Result<std::pair<std::string, std::string>> parse_param(std::string_view kv);

}  // namespace cosched::policy
