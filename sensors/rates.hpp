// Progress rates (docs/architecture.md, "Progress rates"): a job's pace over one sampling interval, which the
// co-scheduling policies compare with the same job's pace alone (Feliu's eq. 6.1, with a rate for IPC). A
// mechanism: it measures, it never decides.
//
// Sources (cosched-rm --rate-sensor; auto tries them per job in this order, and a job keeps one):
//   app-work    units per second the program reports with cosched_report_work() (the explicit API), per
//               second its threads were not waiting for a CPU (as the iterations below: on a shared machine
//               another tenant's load would otherwise read as interference)
//   iterations  the SelfAnalyzer's clean iterations per second (1 / their mean time, net of the time the
//               threads waited for a CPU: a neighbour that takes the CPU is not one that slows the core) —
//               for jobs whose loop it found; an interval with no clean iteration gives no sample
//   regions     outermost parallel regions begun per second (per second not waiting), for the others
//   replay:FILE rates from a file, as a function of the job's group partners (tests, what-if runs):
//                   alone JOB RATE            the job's rate alone in its group, per second
//                   with JOB PARTNER FACTOR   its rate is divided by FACTOR while PARTNER is in its group
//               JOB and PARTNER: a job id (the RM numbers jobs 1, 2, ... in admission order) or `*`; a
//               job's own lines beat `*` lines; `#` starts a comment.
// IPC from a PMU is not read yet (this machine has none to test it on): docs/policies.md says so.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cosched/error.hpp"
#include "policies/snapshot.hpp"

namespace cosched::sensors {

// What the daemon (or simulator) knows of one job's interval, for its rate.
struct RateInterval {
  policy::JobId id = 0;
  double seconds = 0;           // the interval's length (wall)
  int threads = 1;              // its allocation during the interval
  bool reports_work = false;    // the program has called cosched_report_work (ever)
  double work = 0;              // units it reported during the interval
  bool has_loop = false;        // the SelfAnalyzer had clean iterations before the interval began
  double iteration_s = 0;       // mean clean iteration time during the interval, net of CPU wait; 0 none
  double regions = 0;           // outermost regions begun during the interval
  double cpu_share = 1;         // the share of the interval its threads were not waiting for a CPU (SelfAnalyzer)
  std::vector<policy::JobId> with;  // its group partners that ran the whole interval
};

class RateReplay {
 public:
  // Errc::parse_error naming the file and line for a malformed one; Errc::io_error when unreadable.
  static Result<RateReplay> load(const std::string& path);
  static Result<RateReplay> parse(std::string_view text, std::string_view name);
  // The job's rate next to `with`; nullopt when the file gives it no rate alone.
  [[nodiscard]] std::optional<double> rate(policy::JobId id, const std::vector<policy::JobId>& with) const;

 private:
  static constexpr policy::JobId kAny = -1;
  std::map<policy::JobId, double> alone_;
  std::map<std::pair<policy::JobId, policy::JobId>, double> factor_;
};

class RateSensor {
 public:
  // spec: auto, app-work, iterations, regions, replay:FILE. Errors name the spec or the file.
  static Result<RateSensor> make(const std::string& spec);
  RateSensor() = default;

  // The job's rate over the interval, or nullopt when its source has none this time.
  [[nodiscard]] std::optional<policy::RateSample> sample(const RateInterval& iv, double at) const;
  [[nodiscard]] const std::string& spec() const { return spec_; }

 private:
  std::string spec_ = "auto";
  std::shared_ptr<const RateReplay> replay_;
};

}  // namespace cosched::sensors
