// `cosched-ctl pairs`: what a co-scheduling policy has learned, from status --json's "pairs" — each pair of
// jobs ranked by its cost ŝ(i|j) + ŝ(j|i) (worst first), each job's progress and rate alone, and what
// exploring unseen pairs cost (docs/policies.md, "Co-scheduling").
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace cosched::ctl {

// The pairs seen both ways, worst first: [{"jobs": [i, j], "cost": ŝ(i|j) + ŝ(j|i), "slowdowns": [ŝ(i|j),
// ŝ(j|i)], "samples": n}]; pairs seen one way only are left out (their cost is not known).
nlohmann::json ranked_pairs(const nlohmann::json& pairs);

// The table `cosched-ctl pairs` prints; a sentence when the policy learns no pairs.
std::string format_pairs(const nlohmann::json& status);

}  // namespace cosched::ctl
