// The range check every performance report passes before a policy sees it: the daemon applies it to what a
// job wrote in its arena (the RM trusts nothing a job writes), the simulator to what its SelfAnalyzer model
// reports, so that both feed policies the same way (DESIGN rule 2).
#pragma once

#include <string>

#include "policies/snapshot.hpp"

namespace cosched::rm {

// Empty when `p` is usable; otherwise "field=value" naming the first field out of range.
std::string check_report(const policy::Perf& p);

}  // namespace cosched::rm
