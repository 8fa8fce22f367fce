// What a simulated run leaves behind, in qsubmit's data model (qs/results.hpp): one JobRecord per workload
// job (start, end, the CPUs it held over time) and the multiprogramming level over time.
//
// Two ways to keep the CPUs held: every segment (the run's allocation.csv), and always their totals per job
// and the machine's delivered CPU time (results::HeldTotals, DeliveredTotals), which is all the summary
// reads and takes constant memory. The segments are kept up to a budget of bytes: a time-sharing log makes a
// segment per job and turn, hundreds of millions of them (a 1,000-job Lublin log under gang kept 13 GB and
// wrote a 5.6 GB allocation.csv; the 10,000-job one ran out of memory). Past the budget the run lets them go
// and goes on with the totals (segments_dropped()); cosched-sim --dry-run keeps none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "qs/results.hpp"
#include "sim/app_model.hpp"

namespace cosched::sim {

class Recorder {
 public:
  // segment_bytes: the most the kept segments (CPU lists included) may take; 0 keeps none.
  Recorder(const std::vector<JobSpec>& jobs, std::size_t segment_bytes, int machine_cpus);

  void started(std::size_t index, double t) { jobs_[index].start = t; }
  // A closed workload's job is submitted when its predecessor ends (plus think time), not at field 2.
  void submitted(std::size_t index, double t) { jobs_[index].submit = t; }
  void ended(std::size_t index, double t);
  // From t on the job holds `cpus` CPUs (0: none, e.g. stopped) listed in cpu_list (may be empty).
  void allocation(std::size_t index, double t, int cpus, std::vector<int> cpu_list);
  // The multiprogramming level at t; several samples at one instant keep the last.
  void ml(double t, int running, int queued);

  // cosched-sim's fast-forward (docs/simulator.md, "Steady rotations"): what the job has held up to t.
  struct Position {
    bool segments_kept = false;
    std::size_t segments = 0;  // kept segments (while kept)
    double cpu_seconds = 0;    // totals, the open segment counted up to t
    double seconds = 0;
    bool open = false;
  };
  [[nodiscard]] Position position(std::size_t index, double t) const;
  [[nodiscard]] double delivered_at(double t) const;  // the machine's delivered CPU·s up to t
  // The job's last turn of a rotation, from `start` to now (`period` seconds, t), again `times` more turns:
  // copies of its segments each `period` later, or its totals grown `times` over the turn's; the clock
  // is then at t + `skipped`. An open segment stays open.
  void repeat(std::size_t index, const Position& start, double t, double period, std::uint64_t times, double skipped);
  // The machine's delivered CPU time likewise: `times` more turns from `start_delivered`.
  void repeat_machine(double start_delivered, double t, std::uint64_t times, double skipped);

  // Whether segments are kept now, and whether some were let go past the budget.
  [[nodiscard]] bool keeps_segments() const { return keep_segments_; }
  [[nodiscard]] bool segments_dropped() const { return !keep_segments_ && segment_budget_ > 0; }

  std::vector<results::JobRecord> take_jobs();
  std::vector<results::MlSample> take_ml() { return std::move(ml_); }
  // With totals only: the machine's delivered CPU time (else nullopt: the summary works it out from segments).
  [[nodiscard]] std::optional<results::DeliveredTotals> delivered() const;

 private:
  void close_segment(std::size_t index, double t);
  // Counts `added` more bytes of segments; past the budget, lets every segment go (drop_segments).
  void charge_segments(std::size_t added);
  void drop_segments();
  // The machine's held CPUs change by `delta` at t.
  void machine_change(double t, int delta);

  struct Open {
    double t0 = 0;
    int cpus = 0;
  };
  bool keep_segments_;
  std::size_t segment_budget_;
  std::size_t segment_bytes_ = 0;
  int machine_cpus_;
  std::vector<results::JobRecord> jobs_;
  std::vector<char> open_;     // the job's last segment is still open
  std::vector<Open> open_at_;  // the open segment's start and CPUs
  std::vector<results::HeldTotals> totals_;
  // The machine's held CPUs since machine_t_, and what it delivered before.
  long long held_ = 0;
  double machine_t_ = 0;
  results::DeliveredTotals delivered_;
  std::vector<results::MlSample> ml_;
};

}  // namespace cosched::sim
