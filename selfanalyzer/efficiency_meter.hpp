// The waiting-time efficiency of a job at the CPUs it holds, measured without moving it
// (docs/selfanalyzer.md, "Waiting-time efficiency"). Pure: fed, by the runtime's sampler thread
// (libruntime/efficiency_sampler.cpp), the total time the job's threads have worked so far (as opposed to
// waited at barriers, in taskwaits, idle for tasks, or outside regions while the master ran serial code), it
// says what share of the CPU time the job held they worked. That share is the parallel efficiency of the POP
// metrics (DLB's TALP computes it from timings too). Without work inflation it is S(P)/P, serial fractions and
// load imbalance included; with it (caches, memory bandwidth, oversubscription) it is an upper bound. PDPA's
// SelfAnalyzer (Corbalan et al., TPDS 2005, §3.1) measures S(P) by comparing iteration times at two
// allocations instead; cosched keeps that as a check.
//
// Readings are grouped in intervals: with a period (iterations in either the region or the construct
// sequence), an interval ends at the first reading after an iteration boundary once it lasts min_interval_s,
// so that it spans whole iterations; without one, after aperiodic_interval_s. The estimate is the ratio of sums
// over the last `window` clean intervals at the same CPUs. Every value below is our choice (the paper has no
// such measurement).
//
// Threading: not thread-safe; one caller (the sampler thread). No allocation after construction.
#pragma once

#include <array>
#include <cstdint>

#include "cosched/protocol.hpp"

namespace cosched::sa {

struct EfficiencyConfig {
  // Our choice: 40 ms, ten ticks of the coarse clock the working time is measured on (4 ms here), so that
  // one interval rests on ten samples of every thread, and at least one iteration; a first estimate comes a
  // warm-up interval and min_intervals later, 160 ms after the job's first region at the earliest.
  double min_interval_s = 0.04;
  // Without a period: 0.2 s, long against the iterations a loop too irregular to be detected may still
  // have, so that where an interval cuts one matters little.
  double aperiodic_interval_s = 0.2;
  // An interval that waits for an iteration boundary ends anyway after this long: an estimate over part of a
  // very long iteration beats none.
  double max_interval_s = 60;
  int window = 16;        // intervals per estimate (at most kMaxEfficiencyWindow): 0.6 s of them at least
  int min_intervals = 3;  // intervals before the first estimate at a CPU count
  // Outside load, as the SelfAnalyzer judges it (Config::max_wait_fraction): an interval whose run-queue
  // share differs from its window's level by more than this ran under another load and is left out; three in
  // a row on the same side start the window over at the new level.
  double max_wait_fraction = 0.1;
  int load_shift_confirm = 3;
};

inline constexpr int kMaxEfficiencyWindow = 32;

struct EfficiencyEstimate {
  std::uint64_t seq = 0;   // moves with every new estimate; 0: none yet
  double efficiency = 0;   // working time / CPU time held over the window, in [0, 1]
  double std_error = 0;    // standard error of the mean of the intervals' efficiencies (0 with one interval)
  double cpu_wait = -1;    // the window's load level (run-queue share); -1 unknown
  double window_s = 0;     // wall time the window's intervals cover
  int cpus = 0;            // CPUs the job held (min(team, allocation))
  int intervals = 0;
};

class EfficiencyMeter {
 public:
  explicit EfficiencyMeter(const EfficiencyConfig& config);

  // One reading at t_ns (the clock `busy_ns` is measured on): the job's threads have worked `busy_ns` in all
  // so far, it holds `cpus` CPUs (0: no parallel region yet), `iterations` is its iteration count so far and
  // `periodic` whether it has a period. Returns true when the interval in progress is complete: the caller
  // then reads its threads' run-queue total and calls close_interval. O(1).
  bool tick(std::uint64_t t_ns, std::uint64_t busy_ns, int cpus, std::uint64_t iterations, bool periodic) noexcept;

  // The interval in progress is not a clean measurement (the RM stopped the job, moved its CPUs). O(1).
  void perturb() noexcept { dirty_ = true; }

  // Ends the interval in progress at the last tick's reading with the threads' run-queue delay total
  // `wait_ns` (kWaitUnknown: none), and starts the next one there. O(window).
  void close_interval(std::uint64_t wait_ns) noexcept;

  [[nodiscard]] const EfficiencyEstimate& estimate() const noexcept { return estimate_; }
  // Why the latest estimate is not at the CPUs held now (none: it is).
  [[nodiscard]] proto::EfficiencyPending pending() const noexcept;
  // Intervals left out for outside load, in all.
  [[nodiscard]] std::uint64_t contaminated() const noexcept { return contaminated_; }
  [[nodiscard]] int current_cpus() const noexcept { return cur_.cpus; }

 private:
  struct Interval {
    double busy_s = 0;  // working time of all threads
    double cap_s = 0;   // CPU time held: cpus × wall time
    double seconds = 0;
    double wait = -1;   // run-queue share; -1 unknown
  };
  // The clean intervals at one CPU count, oldest first (a ring).
  struct Window {
    int cpus = 0;
    std::array<Interval, kMaxEfficiencyWindow> items{};
    int count = 0;
    int head = 0;  // index of the oldest
    double level = -1;  // mean run-queue share of the known items; -1 unknown
    int shift = 0;      // intervals in a row away from `level` on one side
    int shift_dir = 0;
    bool load_changed = false;  // started over at a new load level and not refilled yet
    void clear() noexcept { count = 0, head = 0, level = -1, shift = 0, shift_dir = 0; }
    void push(const Interval& x, int capacity) noexcept;
    [[nodiscard]] const Interval& at(int i) const noexcept;
  };

  void admit(const Interval& x) noexcept;
  void publish(const Window& w) noexcept;

  EfficiencyConfig cfg_;
  // The interval in progress: where it started, and the latest reading.
  struct Current {
    int cpus = 0;
    bool started = false;
    std::uint64_t start_ns = 0;
    std::uint64_t start_busy = 0;
    std::uint64_t start_wait = ~std::uint64_t{0};
    std::uint64_t mark_iterations = 0;  // iterations when it reached min_interval_s (or began)
    bool marked = false;
    std::uint64_t last_ns = 0;
    std::uint64_t last_busy = 0;
    bool warmup = true;  // the first interval after a change of CPUs (or any start): never kept
  } cur_;
  bool dirty_ = false;
  // The window at the CPUs held now, and the one at the CPUs held before (a baseline, a short excursion): a
  // job that comes back to the CPUs it had finds its intervals there.
  Window now_;
  Window before_;
  EfficiencyEstimate estimate_;
  std::uint64_t contaminated_ = 0;
};

}  // namespace cosched::sa
