// cosched-rm --calibrate: the contention model's three constants (sensors/contention_model.hpp) measured
// when the RM starts, by the same runs as scripts/calibrate-bandwidth: BBMA alone on one CPU (b), one
// stream-copy per CPU side by side (B, their sum), and two BBMAs side by side (k, from their slowdown). Each
// run is one single-threaded microbenchmark process (examples/microbench/, OMP_NUM_THREADS=1, COSCHED_DISABLE)
// pinned to one of the RM's CPUs; rates are bytes per CPU second of the program, as it prints them. It runs
// before the RM serves, on CPUs the RM has locked, so no job of this RM shares them; other tenants of the
// machine do, which is why the script says to calibrate on a quiet machine. A mechanism: it measures, and the
// daemon decides nothing from it but the sensor's constants.
#pragma once

#include <string>
#include <vector>

#include "cosched/error.hpp"
#include "sensors/calibration_file.hpp"

namespace cosched::rm {

struct CalibrateOptions {
  std::vector<int> cpus;  // the RM's CPUs; the first one or two are used for b and k, all for B
  double seconds = 1;     // length of each run
  int repeat = 3;         // runs per measurement, the median kept
};

// Errc::not_found when bbma or stream-copy cannot be found (find_microbenchmark), Errc::io_error when a run
// fails or prints no result line.
Result<sensors::Measured> calibrate_bandwidth(const CalibrateOptions& o);

// A microbenchmark's path: the first executable `name` in $COSCHED_PROGRAM_PATH (colon-separated), the
// install layout (<this program's directory>/../libexec/cosched/microbench) or the build tree's bin/; ""
// when none.
std::string find_microbenchmark(const std::string& name);

}  // namespace cosched::rm
