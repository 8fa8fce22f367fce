// MemBUS's two phases as pure functions over plain values (Koukis & Koziris, "Memory and network bandwidth
// aware scheduling of multiprogrammed workloads on clusters of SMPs", ICPADS 2006, §4, Algorithms 1 and 2).
// The policy object (membus.hpp) and cosched-cluster (the reduction over MPI) both call them.
#pragma once

#include <cstddef>
#include <vector>

namespace cosched::policy {

// What Algorithm 2 knows of application i on this node: p_i processes (CPUs) and its predicted bandwidth
// per process, averaged over the last w quanta (§4): memory BW^M (which includes the network's DMA traffic,
// BW^M = BW^C + BW^N) and network BW^N, in bytes per second.
struct MembusDemand {
  int procs = 1;
  double mem_per_proc = 0;
  double net_per_proc = 0;
};

// The inverse fitness of §4 (Fig. 3): the Euclidean distance between the application's demand per process
// and the ideal point (BW^M_rem / P_rem, BW^N_rem / P_rem). Smaller fits better.
double membus_distance(const MembusDemand& d, int p_rem, double bwm_rem, double bwn_rem);

// Algorithm 2, the local phase: S_l over `list` (the node's application list, head first; Algorithm 1 moves
// the applications that ran to its end each quantum, so the head has waited longest). The head is always
// selected ("to prevent processor starvation", §4); then, while CPUs remain, the fitting application with
// the smallest distance. P CPUs, M and N the node's memory and network bandwidth (bytes/s).
// Two additions of ours where the listing is silent: an application is selected at most once (line 12 does
// not exclude those already in S_l, which would select the best one again and again), and the loop ends when
// no application fits in P_rem (line 16 with best = −1 would not terminate). The head is clamped to P CPUs.
std::vector<int> membus_select(const std::vector<MembusDemand>& list, int cpus, double mem_bw, double net_bw);

// Algorithm 1, lines 10–11: S_total = Σ_l S_l over the nodes, and the applications in decreasing order of
// S_total (their popularity). Ties keep the index order (our choice: every node must derive the same order,
// and the index order is the one the reduction was done over).
std::vector<std::size_t> membus_reduce(const std::vector<std::vector<int>>& local, std::vector<int>* total = nullptr);

// Algorithm 1, lines 14–16: "while there are unallocated processors, resume applications based on position
// in sorted S_total": walking `order`, an application is resumed when its p_i CPUs are still free. procs[i] <= 0
// marks an application with no process on this node (skipped).
std::vector<int> membus_allocate(const std::vector<std::size_t>& order, const std::vector<int>& procs, int cpus);

}  // namespace cosched::policy
