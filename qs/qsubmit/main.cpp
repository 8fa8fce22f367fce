// qsubmit: replays an SWF workload with real jobs under cosched-rm (or natively). docs/qsubmit.md.
#include <cstdio>
#include <exception>

#include "options.hpp"
#include "run.hpp"

int main(int argc, char** argv) {
  auto parsed = cosched::qsubmit::parse_options(argc, argv);
  if (!parsed.options) return parsed.exit_status;
  try {
    return cosched::qsubmit::run_qsubmit(*parsed.options);
  } catch (const std::exception& e) {
    // Destructors have stopped our jobs and a private RM by the time we get here.
    std::fprintf(stderr, "qsubmit: %s\n", e.what());
    return cosched::qsubmit::kExitJobFailed;
  }
}
