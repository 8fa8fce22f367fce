// What a policy sees: the machine and the jobs, as plain values. Built by the daemon (rm/daemon/daemon.cpp)
// from live jobs and by the simulator (sim/) from models; a policy cannot tell the two apart (DESIGN rule 2).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace cosched::policy {

using JobId = std::int64_t;

// Why the policy is being called now.
enum class Event {
  arrival,       // `subject` was admitted and needs a first allocation
  departure,     // `subject` left; its CPUs are free
  report,        // `subject` published a new performance report
  quantum,       // the periodic tick (every quantum_ms)
  timer,         // a time the policy asked for in Decision::wake_at
  param_change,  // an operator changed a parameter or switched policy
  query,         // the queuing system asks "may a job start now?" (no change expected)
};
const char* to_string(Event e) noexcept;

// What a job's efficiency estimate rests on (docs/selfanalyzer.md, "Two estimates").
enum class EstimateKind {
  measured_speedup,  // iteration times compared at two allocations (PDPA §3.1's SelfAnalyzer)
  waiting_time,      // the share of the CPU time held that the job's threads spent working, at its CPUs:
                     // S(P)/P without work inflation, an upper bound with it
};
const char* to_string(EstimateKind k) noexcept;

// A performance report from the SelfAnalyzer, already validated by the RM (finite, in range).
struct Perf {
  bool valid = false;       // false until the job's first report
  EstimateKind kind = EstimateKind::measured_speedup;
  // How far the estimate can be trusted, in [0, 1]: 1 − its relative uncertainty (the waiting-time
  // estimate's standard error, a measured speedup's spread), 0 for none at all.
  double confidence = 0;
  double speedup = 0;       // S(P) vs one CPU (Amdahl-normalised, PDPA §3.1)
  double efficiency = 0;    // S(P) / P
  double iteration_s = 0;   // median iteration time at `cpus` (0: not timed, a waiting-time estimate)
  double baseline_s = 0;    // median iteration time at the baseline
  double spread = 0;        // relative spread of the samples (0 = exact); a confidence measure
  int cpus = 0;             // allocation the measurement was taken with
  int samples = 0;
  double amdahl_f = -1;     // parallel fraction f fitted from two points, -1 if unknown
  int baseline_cpus = 0;    // team size of the baseline the speedup rests on (0: unknown, or none)
  std::uint64_t seq = 0;    // changes whenever a new report arrives
};

// One past allocation and what the job achieved with it (most recent last).
struct HistoryEntry {
  int cpus = 0;
  double speedup = 0;
  double efficiency = 0;
  double iteration_s = 0;
  double at = 0;  // when the report was received (snapshot time base)
};

// Memory-bandwidth samples of a job (docs/architecture.md, "Sensors"). The sensor layer (sensors/) fills
// them once per RM quantum for every job that ran that whole quantum on an unchanged allocation; the
// simulator fills them the same way. Unit: bytes per second of memory traffic of the whole job (all its
// threads) over the sampled interval. A moving window of the latest kWindow samples (Antonopoulos et al.
// §4: "the window ... is 5 samples long"), oldest first. Policies that want another quantity (the paper's
// bus transactions per µs, per thread) derive it from these.
struct BandwidthSample {
  double at = 0;           // end of the sampled interval (snapshot time base, seconds)
  double bytes_per_s = 0;  // memory traffic of the whole job over the interval
  int threads = 1;         // CPUs the job ran on during the interval (its allocation)
};

struct Bandwidth {
  static constexpr int kWindow = 5;
  std::array<BandwidthSample, kWindow> samples{};  // samples[0..count) valid, oldest first
  int count = 0;
  std::string source;      // the backend that measured them: perf_event, papi, app-reported, counter-free, replay
  double slowdown = 0;     // counter-free only: iteration time now / alone at the same team size; 0 unknown

  [[nodiscard]] bool valid() const { return count > 0; }
  [[nodiscard]] const BandwidthSample& latest() const { return samples[static_cast<std::size_t>(count - 1)]; }
  // Mean over the latest min(n, count) samples of each sample's bytes_per_s / threads (the paper's
  // "equipartitioning the bandwidth ... among its threads"); 0 when there is none.
  [[nodiscard]] double mean_per_thread(int n) const;
  // Mean over the latest min(n, count) samples of the whole job's bytes_per_s; 0 when there is none.
  [[nodiscard]] double mean(int n) const;
  // How many of the latest samples were taken after time t (samples are in time order).
  [[nodiscard]] int count_after(double t) const;
  // Appends a sample, dropping the oldest beyond kWindow.
  void push(const BandwidthSample& s);
};

// The pace of a job's work over one sampling interval (docs/architecture.md, "Progress rates"): what the
// co-scheduling policies (coschedule.hpp) use in place of IPC (Feliu's thesis eq. 6.1: progress = Σ rate
// co-run / rate alone). Filled once per RM quantum by the daemon (rm/daemon/sensing.cpp) and the simulator,
// for every job that ran that whole quantum on an unchanged allocation and group.
struct RateSample {
  double at = 0;            // end of the interval (snapshot time base, seconds)
  double seconds = 0;       // its length
  double per_s = 0;         // work per second, in the source's unit (instructions per cycle for "ipc")
  int threads = 1;          // CPUs the job ran on
  std::string source;       // ipc, app-work, iterations, regions, replay, model: rates compare within one source
  // The jobs that shared the job's co-schedule group for the whole interval (its SMT siblings, or its
  // neighbours on adjacent cores without SMT); empty: the job ran alone in its group. Without groups (a
  // policy that sets no Decision::co_schedule) every job that ran the same interval.
  std::vector<JobId> with;
};

struct Rate {
  RateSample latest;
  std::uint64_t seq = 0;    // changes with every new sample; 0: none yet
  [[nodiscard]] bool valid() const { return seq > 0; }
};

struct JobView {
  JobId id = 0;
  int request = 1;           // CPUs asked for (>= 1)
  int allocation = 0;        // CPUs held now (0 on arrival)
  bool runnable = true;      // false while stopped by a time-sharing policy
  double arrival = 0;        // when the job was admitted (snapshot time base, seconds)
  bool analyzing = false;    // its SelfAnalyzer found a period (baseline or measuring phase): a report comes
  // Since when it has been analyzing (snapshot time base; -1: not analyzing), and the iterations it completed
  // since then: what a policy needs to bound the wait for a first report in the job's own iterations.
  double analyzing_since = -1;
  std::uint64_t analyzed_iterations = 0;
  Perf perf;
  std::vector<HistoryEntry> history;
  Bandwidth bandwidth;
  // MPI jobs: BW^N of MemBUS (Koukis & Koziris §4), the payload the job's processes on this node sent and
  // received per second, counted exactly by the PMPI wrappers and sampled by the sensor layer like memory
  // traffic (same window, intervals and unit; source "pmpi"). Empty for a job that is no MPI job.
  Bandwidth network;
  Rate rate;                 // the latest progress-rate sample (co-scheduling policies)
};

// The machine the policy divides. Topology detail is for placement, not for deciding counts, with the
// exception of SMT pairing for symbiosis policies.
struct Machine {
  int cpus = 1;              // CPUs under the RM's control
  int cores = 1;
  int packages = 1;
  int threads_per_core = 1;
  // Memory bandwidth the machine sustains with every CPU streaming (a STREAM-like copy on all CPUs), bytes
  // per second; 0 unknown. The bandwidth-aware policies' bus capacity (cosched-rm --mem-bandwidth).
  double mem_bandwidth = 0;
};

// The order a cluster coordinator agreed on (cosched-cluster: MemBUS's reduction over every node, Koukis &
// Koziris Algorithm 1 lines 10-11): this node's jobs in decreasing popularity, when it arrived, and a number
// that changes with every new order. at < 0: no coordinator, the node schedules alone.
struct ClusterOrder {
  std::vector<JobId> order;
  double at = -1;
  std::uint64_t seq = 0;
};

struct Snapshot {
  double now = 0;            // seconds since the RM (or simulation) started
  double quantum = 0.1;      // the RM's quantum in seconds (--quantum-ms): time-sharing policies' base quantum
  Event event = Event::quantum;
  JobId subject = -1;        // the job the event is about, -1 if none
  Machine machine;
  std::vector<JobView> jobs; // admitted jobs, in admission order
  int queued = 0;            // jobs waiting in a queuing system that asked may-start (0 if unknown)
  // Jobs the asking queuing system has started that have not registered yet (may_start questions only; 0
  // otherwise): each will hold a CPU of its own, so a multiprogramming-level rule counts them as running.
  int starting = 0;
  ClusterOrder cluster;      // cosched-cluster's latest order (cluster-wide policies only)
  // Whether anyone reads the allocations' reasons: the daemon always (status, the decision log), cosched-sim
  // only with a decision log. A policy may leave Allocation::reason empty when not: under time sharing a
  // reason is formatted for every job moved at every quantum, a tenth of a simulated tick's cost.
  bool explain = true;

  [[nodiscard]] const JobView* find(JobId id) const;
  // The running jobs and those about to run: what a rule of "a CPU of its own for each job" counts.
  [[nodiscard]] int jobs_and_starting() const { return static_cast<int>(jobs.size()) + starting; }
};

}  // namespace cosched::policy
