// MemBUS (Koukis & Koziris, ICPADS 2006, §4-§5): gang scheduling that chooses which applications run
// together by their memory and network bandwidth, so that the memory bus and the NIC are neither saturated
// nor idle.
//
// Every quantum q (0.5 s, the paper's §6 value) Algorithm 1 runs: the applications that ran move to the end
// of the node's list, and Algorithm 2 (membus_select.hpp) picks candidates — the head of the list, then,
// while CPUs remain, the application whose bandwidth per process is nearest (Euclidean distance) to the
// node's remaining bandwidth per remaining CPU, (BW^M_rem / P_rem, BW^N_rem / P_rem). An application's
// bandwidth is predicted as its mean over the last w quanta it ran (w = 2, §6). Memory bandwidth comes from
// the sensors (JobView::bandwidth), network bandwidth from the PMPI wrappers (JobView::network); BW^M
// includes the network's (§4: BW^M = BW^C + BW^N, the NIC's DMA crosses the memory bus).
//
// On a cluster, cosched-cluster sums the nodes' candidate arrays with MPI (the reduction, Algorithm 1 lines
// 10-11) and hands each node the agreed order (Snapshot::cluster): the node then resumes applications in
// that order while CPUs remain (lines 14-16) and switches only when a new order arrives. With no order for
// `stale` quanta (coordinator gone) the node schedules alone with Algorithm 2's choice: the local policy.
//
// Our choices (the paper gives no value): M = mem_bw and N = net_bw default to 10000 and 1250 MB/s (a node's
// memory bus and a 10 Gb/s NIC; set them from a microbenchmark, §4); an application with no sample yet is
// predicted at 0; an application's processes are its CPUs, p_i = min(request, P). In local mode CPUs the
// selection leaves idle between switches go to applications that fit (a job arriving mid-quantum runs at
// once when it fits); with an agreed order they stay idle, strict by design (every node runs the same gang).
#pragma once

#include <deque>
#include <map>

#include "membus_select.hpp"
#include "policies/param_spec.hpp"
#include "policies/policy.hpp"

namespace cosched::policy {

class Membus final : public TabledPolicy<Membus> {
 public:
  [[nodiscard]] std::string_view name() const override { return "membus"; }
  [[nodiscard]] std::unique_ptr<Policy> clone() const override { return std::make_unique<Membus>(*this); }
  Decision decide(const Snapshot& s) override;
  [[nodiscard]] std::optional<double> time_quantum_s() const override { return q_; }
  static const ParamTable<Membus>& param_table();
  void forget(JobId id) override;
  [[nodiscard]] std::optional<std::vector<JobId>> cluster_candidates(const Snapshot& s) const override;

  // The prediction for job `v` (its window's mean), per process, bytes/s: what Algorithm 2 compares.
  [[nodiscard]] MembusDemand demand(const JobView& v, int cpus) const;

 private:
  struct Sample {
    double mem = 0;  // BW^M per process (memory including the network's), bytes/s
    double net = 0;  // BW^N per process, bytes/s
  };
  // The list with jobs that left removed and new ones appended (admission order).
  [[nodiscard]] std::vector<JobId> list_for(const Snapshot& s) const;
  [[nodiscard]] std::vector<JobId> select_local(const Snapshot& s, const std::vector<JobId>& list) const;
  void record_samples(const Snapshot& s);

  double q_ = 0.5;          // quantum, seconds (§6)
  int w_ = 2;               // window, quanta (§6)
  double mem_bw_ = 10000e6; // M, bytes/s (our choice)
  double net_bw_ = 1250e6;  // N, bytes/s (our choice)
  int stale_ = 3;           // quanta without a cluster order before the node schedules alone (our choice)

  std::vector<JobId> list_;     // Algorithm 1's application list, head first
  std::vector<JobId> running_;  // the applications of the current quantum
  double switched_at_ = -1;
  std::uint64_t cluster_seq_ = 0;  // the last cluster order applied
  std::map<JobId, std::deque<Sample>> window_;
};

}  // namespace cosched::policy
