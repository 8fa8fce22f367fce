// cosched-sim's cluster model (`cosched-sim cluster`, docs/simulator.md "Cluster model"): s SMP nodes of P
// CPUs, each with a memory bus of M MB/s and a NIC of N MB/s, and jobs that run p_i processes on every node
// (Koukis & Koziris §4 assume jobs span all nodes). Time advances in quanta; each quantum a scheduler chooses
// which jobs run on each node, and a job progresses at a rate its node's contention sets. The schedulers are
// the daemon's policy objects where one exists: `membus` (one Membus per node, their candidates reduced with
// membus_reduce as cosched-cluster does, DESIGN rule 2) and `gang` (one Gang per node); `linux` models
// uncoordinated kernel time sharing.
//
// The contention model is ours (the paper measures, it gives no model): with D_M = Σ_running p_j (m_j + n_j)
// and D_N = Σ_running p_j n_j on a node (§4: the NIC's DMA crosses the memory bus),
//     rate_i = 1 / (1 + f_i (max(1, D_M / M) − 1) + g_i (max(1, D_N / N) − 1))
// where f_i and g_i are the shares of job i's time spent on memory and on the network when it runs alone:
// an oversubscribed resource stretches those shares in proportion. A job's progress in a quantum is the mean
// of its rates over the nodes (0 where it did not run).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cosched/error.hpp"

namespace cosched::sim {

struct ClusterJob {
  std::string name;
  int procs = 1;          // p_i: processes (CPUs) on every node
  double mem_mbs = 0;     // m_i: memory bandwidth per process when running alone, MB/s
  double net_mbs = 0;     // n_i: network bandwidth per process when running alone, MB/s
  double mem_share = 0;   // f_i: share of its time spent on memory when alone, [0, 1]
  double net_share = 0;   // g_i: share of its time spent on the network when alone, [0, 1]
};

struct ClusterModel {
  int nodes = 4;
  int cpus = 2;
  double mem_bw = 750;    // M, MB/s per node
  double net_bw = 250;    // N, MB/s per node
  double quantum = 0.5;   // s (MemBUS §6)
  double duration = 600;  // s (the paper's 10-minute runs)
  std::vector<ClusterJob> jobs;
};

enum class ClusterScheduler { membus, gang, linux_ts };

struct ClusterOutcome {
  std::vector<double> work;        // units of work done per job (1 per second when alone and uncontended)
  std::vector<double> normalized;  // work / ideal, ideal = duration × min(1, P / Σ p) (the fair share)
  std::vector<std::vector<int>> pairs;  // co-run counts: pairs[i][j] = node-quanta job i ran with job j
};

// Parses "NAME,PROCS,MEM,NET,F,G" (a --job value); errors name the field.
Result<ClusterJob> parse_cluster_job(const std::string& spec);

// The rate of each job on one node given which jobs run there (the model above); 0 for jobs not running.
std::vector<double> node_rates(const ClusterModel& m, const std::vector<int>& running);

ClusterOutcome run_cluster(const ClusterModel& m, ClusterScheduler s, std::uint64_t seed);

}  // namespace cosched::sim
