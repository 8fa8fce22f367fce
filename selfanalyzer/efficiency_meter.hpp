// The waiting-time efficiency of a job at the CPUs it holds, measured without moving it
// (docs/selfanalyzer.md, "Waiting-time efficiency"). Pure: fed samples of the job's threads' states by the
// runtime's sampler thread (libruntime/efficiency_sampler.cpp), it says what share of the CPU time the job held
// its threads spent working, as opposed to waiting at barriers, in taskwaits, idle for tasks, or outside
// regions while the master ran serial code. That share is the parallel efficiency of the POP metrics (DLB's
// TALP computes it from timings; we sample states, which costs the region's path no clock read). Without
// work inflation it is S(P)/P, serial fractions and load imbalance included; with it (caches, memory
// bandwidth, oversubscription) it is an upper bound. PDPA's SelfAnalyzer (Corbalan et al., TPDS 2005, §3.1)
// measures S(P) by comparing iteration times at two allocations instead; cosched keeps that as a check.
//
// Samples are grouped in intervals: with a period (iterations in either the region or the construct
// sequence), an interval ends at the first sample after an iteration boundary once it holds
// min_interval_ticks samples, so that an interval spans whole iterations; without one, after
// aperiodic_interval_ticks samples. The estimate is the ratio of sums over the last `window` clean intervals
// at the same CPUs. Every value below is our choice (the paper has no such measurement).
//
// Threading: not thread-safe; one caller (the sampler thread). No allocation after construction.
#pragma once

#include <array>
#include <cstdint>

#include "cosched/protocol.hpp"

namespace cosched::sa {

struct EfficiencyConfig {
  // Our choice: 10 samples of the sampler's 2-ms tick make an interval of 20 ms at least (and one iteration),
  // so that a first estimate comes 4 iterations, or 80 ms, after the job's first region: a warm-up interval,
  // then min_intervals.
  int min_interval_ticks = 10;
  // Without a period: 100 samples (0.2 s), long against the iterations a loop too irregular to be
  // detected may still have, so that where an interval cuts one matters little.
  int aperiodic_interval_ticks = 100;
  // An interval that waits for an iteration boundary ends anyway after this many samples (60 s at 2 ms): an
  // estimate over part of a very long iteration beats none.
  int max_interval_ticks = 30000;
  int window = 16;        // intervals per estimate (at most kMaxEfficiencyWindow): 0.3 s of them at least
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
  double efficiency = 0;   // working samples / CPU samples over the window, in [0, 1]
  double std_error = 0;    // standard error of the mean of the intervals' efficiencies (0 with one interval)
  double cpu_wait = -1;    // the window's load level (run-queue share); -1 unknown
  double window_s = 0;     // wall time the window's intervals cover
  int cpus = 0;            // CPUs the job held (min(team, allocation))
  int intervals = 0;
};

class EfficiencyMeter {
 public:
  explicit EfficiencyMeter(const EfficiencyConfig& config);

  // One sample of the threads' states at t_ns: `working` threads were working, the job held `cpus` CPUs
  // (0: no parallel region yet), `iterations` is the job's iteration count so far and `periodic` whether it
  // has a period. Returns true when the interval in progress is complete: the caller then reads its threads'
  // run-queue total and calls close_interval. O(1).
  bool tick(std::uint64_t t_ns, int working, int cpus, std::uint64_t iterations, bool periodic) noexcept;

  // The interval in progress is not a clean measurement (the RM stopped the job, moved its CPUs). O(1).
  void perturb() noexcept { dirty_ = true; }

  // Ends the interval in progress at t_ns with the threads' run-queue delay total `wait_ns` (kWaitUnknown:
  // none), and starts the next one there. O(window).
  void close_interval(std::uint64_t t_ns, std::uint64_t wait_ns) noexcept;

  [[nodiscard]] const EfficiencyEstimate& estimate() const noexcept { return estimate_; }
  // Why the latest estimate is not at the CPUs held now (none: it is).
  [[nodiscard]] proto::EfficiencyPending pending() const noexcept;
  // Intervals left out for outside load, in all.
  [[nodiscard]] std::uint64_t contaminated() const noexcept { return contaminated_; }
  [[nodiscard]] int current_cpus() const noexcept { return cur_.cpus; }

 private:
  struct Interval {
    std::uint64_t busy = 0;  // sum over samples of min(working, cpus)
    std::uint64_t cap = 0;   // sum over samples of cpus
    double seconds = 0;
    double wait = -1;        // run-queue share; -1 unknown
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

  void start_interval(int cpus) noexcept;
  void admit(const Interval& x) noexcept;
  void publish(const Window& w) noexcept;

  EfficiencyConfig cfg_;
  // The interval in progress.
  struct Current {
    int cpus = 0;
    std::uint64_t busy = 0;
    std::uint64_t cap = 0;
    int ticks = 0;
    std::uint64_t start_ns = 0;
    std::uint64_t start_wait = ~std::uint64_t{0};
    std::uint64_t start_iterations = 0;
    bool warmup = true;  // the first interval after a change of CPUs (or any start): never kept
  } cur_;
  bool dirty_ = false;
  bool started_ = false;  // cur_.start_ns and start_wait are set
  // The window at the CPUs held now, and the one at the CPUs held before (a baseline, a short excursion): a
  // job that comes back to the CPUs it had finds its intervals there.
  Window now_;
  Window before_;
  EfficiencyEstimate estimate_;
  std::uint64_t contaminated_ = 0;
};

}  // namespace cosched::sa
