// One qsubmit run from options to exit status: check the input (nothing starts when it is wrong), reach or
// start the RM, replay, stop everything that is ours, write the results, summarise.
#pragma once

#include "options.hpp"

namespace cosched::qsubmit {

// Returns the process exit status (ExitCode, or 128 + signal number when interrupted).
int run_qsubmit(const Options& options);

}  // namespace cosched::qsubmit
