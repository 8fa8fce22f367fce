// Latest Quantum and Quanta Window (Antonopoulos, Nikolopoulos, Papatheodorou, "Scheduling Algorithms with
// Bus Bandwidth Considerations for SMPs", §4): gang-like time sharing that co-schedules jobs whose memory
// bandwidth per thread best matches what the bus has left per unallocated CPU.
//
// The jobs form a list. At the end of each quantum (200 ms by default: §5, "twice the quantum of the Linux
// scheduler") the jobs that ran move to the end of the list, in their order. Then, while CPUs are left:
//   - the job at the head of the list is allocated by default, so that no job starves (§4);
//   - each traversal of the list computes, for every job that fits in the free CPUs (min(ρ, P) of them),
//         Fitness = 1000 / (1 + |ABBW/proc − BBW/thread|)                         (eq. 1; eq. 2)
//     where ABBW/proc = (B − Σ the bandwidth of the jobs allocated so far) / free CPUs and BBW/thread is the
//     job's bandwidth divided by its threads; the fittest (ties: the earlier in the list) is allocated.
// Latest Quantum takes BBW/thread from the samples of the latest quantum the job ran (eq. 1); Quanta Window
// from the mean of its latest `window` samples, 5 by default (eq. 2's BTR‾/thread). Bandwidths enter the
// fitness in the paper's unit, bus transactions of 64 bytes per µs (1 = 64 MB/s), so that the "1 +" weighs
// what it weighed there. B is the policy's bus_bandwidth, else Machine::mem_bandwidth (--mem-bandwidth).
//
// Without data the policy is plain gang order (the list's round robin, jobs that fit filling the CPUs) and
// says why: no bus capacity known, or no job has a sample yet. The list then slides by one job per quantum,
// so that jobs meet different neighbours (the counter-free sensor needs to see a job under two loads). A job with no sample while others have some
// is assumed to use the fair share B/P per thread. Two bandwidth-blind baselines share the list, quantum and
// rotation: pick=list (gang order) and pick=random (after the head, co-runners drawn at random among the
// jobs that fit: the partners a time-sharing OS scheduler gives a job, as in the paper's Linux baseline,
// though gang-like; seeded, so runs repeat).
//
// The quantum is counted in the RM's ticks: the list rotates at the first quantum tick (or timer) at least
// quantum_ms − half an RM quantum after the last rotation, and asks for a timer then (Decision::wake_at).
// With the RM's 100 ms quantum the sensors sample each job twice per policy quantum, as in the paper.
// Every job gets quanta, so there is no multiprogramming limit of its own (may_start is always true).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "policies/param_spec.hpp"
#include "policies/policy.hpp"

namespace cosched::policy {

class BusBandwidth final : public TabledPolicy<BusBandwidth> {
 public:
  enum class Mode { latest_quantum, quanta_window };
  explicit BusBandwidth(Mode mode) : mode_(mode) {}
  [[nodiscard]] std::string_view name() const override {
    return mode_ == Mode::latest_quantum ? "latest-quantum" : "quanta-window";
  }
  [[nodiscard]] std::unique_ptr<Policy> clone() const override { return std::make_unique<BusBandwidth>(*this); }
  [[nodiscard]] std::optional<double> time_quantum_s() const override { return quantum_s_; }
  Decision decide(const Snapshot& s) override;
  static const ParamTable<BusBandwidth>& param_table();
  void forget(JobId id) override;

  // The fitness of eq. 1/2, both arguments in bus transactions per µs.
  static double fitness(double abbw_per_proc, double bbw_per_thread);
  static constexpr double kBytesPerTransaction = 64;  // §3: "approximately 64 bytes ... with each bus transaction"
  static double to_tr_per_us(double bytes_per_s) { return bytes_per_s / (kBytesPerTransaction * 1e6); }

 private:
  struct Choice;
  // The bandwidth per thread (bytes/s) this policy reads from the job's samples; < 0 without one.
  [[nodiscard]] double per_thread(const JobView& j) const;
  // per_thread(j), or `fair` (the bus's share per thread, B/P) for a job without a sample.
  [[nodiscard]] double bbw_or(const JobView& j, double fair) const;
  // §4's election: on a rotation the list moves and the head runs by default; then the fittest fill the CPUs.
  void elect(const Snapshot& s, bool rotate);
  [[nodiscard]] std::string blind_reason(const Snapshot& s, double B) const;
  void rotate_list(bool blind, double now);
  Choice choose(const Snapshot& s, int free, double abbw, bool blind, double fair);

  Mode mode_;
  double quantum_s_ = 0.2;
  int window_ = 5;
  double bus_ = 0;        // bytes/s; 0: Machine::mem_bandwidth
  enum class Pick { fitness, list, random };
  Pick pick_ = Pick::fitness;
  std::uint64_t seed_ = 1;
  std::uint64_t rng_ = 1;  // splitmix64 state (pick=random)
  std::vector<JobId> list_;     // the applications list, head first
  std::vector<JobId> running_;  // elected for the current quantum
  double elected_at_ = -std::numeric_limits<double>::infinity();
  std::vector<std::pair<JobId, std::string>> why_;  // reasons of the latest election, per job
};

}  // namespace cosched::policy
