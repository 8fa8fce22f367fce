// The counter-free bandwidth sensor: what a machine without a PMU (this CI's VM, most clouds) can still
// tell. It needs no hardware counter and no help from the program beyond what libcosched already measures:
// the SelfAnalyzer's clean iteration times (proto::SensorBlock).
//
// Per job and team size it keeps the fastest interval seen, its "alone" iteration time; an interval's
// slowdown is its mean iteration time over that. The slowdowns of the jobs that ran side by side are then
// explained by the contention model (contention_model.hpp) run backward: each job's memory fraction m (the
// median of the last five it was given), hence its demand m·n·b and its consumption m·n·b / s while
// running, times the share of the interval its threads were not waiting for a CPU: the reading, in bytes
// per second of wall time like the other backends. Fractions are learned in intervals where contention is
// visible (some job slowed by more than Calibration::min_slowdown) and kept in between. A job gets no
// reading until it has run next to two different sets of neighbours (before that its "alone" may be its
// usual crowd); after that, one never seen slowed reads 0 bytes/s: the optimistic guess, which puts it next
// to a memory-bound job, where it is seen for what it is.
//
// Without a calibration (cosched-rm --mem-bandwidth, --thread-bandwidth, --contention) it still reports the
// slowdown, with no rate. Error sources, measured in docs/performance.md: the model itself; an "alone" time
// that was never truly alone (a job that always ran next to a streamer looks unslowed); outside CPU load
// (the SelfAnalyzer drops samples it can see waiting for a CPU); phases of different work.
#pragma once

#include <map>
#include <vector>

#include "contention_model.hpp"
#include "sensor.hpp"

namespace cosched::sensors {

class CounterFree final : public Backend {
 public:
  explicit CounterFree(const Calibration& c) : cal_(c) {}
  [[nodiscard]] std::string_view name() const override { return "counter-free"; }
  void forget(policy::JobId id) override { jobs_.erase(id); }
  void sample(const std::vector<Interval>& jobs, std::vector<Reading>& out) override;

  [[nodiscard]] const Calibration& calibration() const { return cal_; }

 private:
  struct JobState {
    std::map<int, double> alone_s;  // team size → fastest mean iteration time seen
    double memory_fraction = -1;    // the median of the latest learned m's; -1 none yet
    std::vector<double> learned;    // the latest kLearned fractions learned, oldest first
    bool seen = false;
    std::vector<policy::JobId> first_neighbours;  // who ran next to it in its first interval
    bool varied = false;            // it has run next to other neighbours since: its "alone" means something
  };
  // A job's fraction is the median of the latest kLearned it was given: where contention is weak, the
  // division by k·e turns a noisy slowdown into a wild fraction now and then (docs/performance.md).
  static constexpr std::size_t kLearned = 5;
  Calibration cal_;
  std::map<policy::JobId, JobState> jobs_;
};

}  // namespace cosched::sensors
