// Replayed bandwidths: rates read from a text file instead of measured, for tests and what-if runs
// (cosched-rm --sensor replay:FILE). One sample per line, blank lines and `#` comments ignored:
//
//     JOB  SECONDS  BYTES_PER_S        e.g.   2  0.5  1.2e9
//
// JOB is a job id (the RM numbers jobs 1, 2, ... in admission order) or `*` for every job; SECONDS is the
// time since the job's admission from which the rate holds (until the job's next line). A job's interval
// gets the rate of its latest line at or before the interval's end; a job's own lines beat `*` lines.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sensor.hpp"

namespace cosched::sensors {

class Replay final : public Backend {
 public:
  // Errc::parse_error naming the file and line for a malformed one; Errc::io_error when unreadable.
  static Result<std::unique_ptr<Replay>> load(const std::string& path);
  static Result<std::unique_ptr<Replay>> parse(std::string_view text, std::string_view name);

  [[nodiscard]] std::string_view name() const override { return "replay"; }
  void sample(const std::vector<Interval>& jobs, std::vector<Reading>& out) override;

 private:
  static constexpr policy::JobId kEveryJob = -1;
  // job (or kEveryJob) → (seconds since admission, bytes/s), sorted by time
  std::map<policy::JobId, std::vector<std::pair<double, double>>> rates_;
};

}  // namespace cosched::sensors
