// `cosched-sim cluster`: the cluster model (sim/cluster_model.hpp) under membus, gang and uncoordinated time
// sharing side by side. docs/simulator.md "Cluster model", docs/reproductions.md "MemBUS §6".
#include <CLI/CLI.hpp>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "cosched/cli.hpp"
#include "sim/cluster_model.hpp"

namespace cosched::sim {

namespace {

// Koukis & Koziris Fig. 1: memory bandwidth of each benchmark alone on one CPU (MB/s). The network figures and
// the time shares are ours (the paper gives none): f_i = m_i / m_CG (CG, the most memory-bound, spends all its
// time on memory), network shares small except IS (all-to-all) and CG (§3: network contention slows CG by up
// to 2x).
const std::map<std::string, ClusterJob>& npb_models() {
  static const std::map<std::string, ClusterJob> t = {
      {"BT", {"BT", 1, 373, 10, 373.0 / 674, 0.05}}, {"CG", {"CG", 1, 674, 40, 0.9, 0.1}},
      {"EP", {"EP", 1, 162, 1, 162.0 / 674, 0.0}},   {"FT", {"FT", 1, 384, 30, 384.0 / 674, 0.1}},
      {"IS", {"IS", 1, 475, 60, 475.0 / 674, 0.2}},  {"LU", {"LU", 1, 491, 15, 491.0 / 674, 0.05}},
      {"MG", {"MG", 1, 565, 20, 565.0 / 674, 0.05}}, {"SP", {"SP", 1, 567, 20, 567.0 / 674, 0.05}},
  };
  return t;
}

}  // namespace

int cluster_main(int argc, char** argv) {
  CLI::App app{"cosched-sim cluster: s nodes of P CPUs with a memory bus and a NIC each, jobs spanning every "
               "node, run under membus (the daemon's policy, reduced across nodes as cosched-cluster does), gang "
               "and uncoordinated time sharing, side by side. Prints each job's throughput normalised to its fair "
               "share."};
  ClusterModel m;
  std::vector<std::string> specs;
  std::string paper;
  std::uint64_t seed = 1;
  app.add_option("--nodes", m.nodes, "s: nodes")->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option("--cpus", m.cpus, "P: CPUs per node")->check(CLI::Range(1, 1024))->capture_default_str();
  app.add_option("--mem-bw", m.mem_bw, "M: memory bandwidth per node, MB/s")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--net-bw", m.net_bw, "N: network bandwidth per node, MB/s")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--quantum", m.quantum, "seconds per quantum")->check(CLI::Range(0.001, 3600.0))->capture_default_str();
  app.add_option("--duration", m.duration, "seconds simulated")->check(CLI::Range(0.001, 1e7))->capture_default_str();
  app.add_option("--job", specs, "a job: NAME,PROCS,MEM,NET,F,G (processes per node, MB/s per process alone, "
                                 "time shares on memory and network alone); repeatable");
  app.add_option("--paper-workload", paper, "the MemBUS paper's §6 workload CG×2 + X×2, X one of BT CG EP FT IS LU "
                                            "MG SP (Fig. 1 bandwidths; see docs/reproductions.md)");
  app.add_option("--seed", seed, "seed of the uncoordinated scheduler's draws")->capture_default_str();
  COSCHED_CLI_PARSE(app, argc, argv);

  if (!paper.empty()) {
    auto it = npb_models().find(paper);
    if (it == npb_models().end()) {
      std::cerr << "cosched-sim cluster: --paper-workload " << paper << ": not one of BT CG EP FT IS LU MG SP\n";
      return 2;
    }
    const ClusterJob& cg = npb_models().at("CG");
    for (int k = 0; k < 2; ++k) m.jobs.push_back(cg);
    for (int k = 0; k < 2; ++k) m.jobs.push_back(it->second);
  }
  for (const auto& s : specs) {
    auto j = parse_cluster_job(s);
    if (!j) {
      std::cerr << "cosched-sim cluster: " << j.error().message << "\n";
      return 2;
    }
    m.jobs.push_back(*j);
  }
  if (m.jobs.empty()) {
    std::cerr << "cosched-sim cluster: no jobs (--job or --paper-workload)\n";
    return 2;
  }
  const auto mb = run_cluster(m, ClusterScheduler::membus, seed);
  const auto gg = run_cluster(m, ClusterScheduler::gang, seed);
  const auto lx = run_cluster(m, ClusterScheduler::linux_ts, seed);
  std::cout << fmt::format("{} nodes × {} CPUs, M {} MB/s, N {} MB/s, q {} s, {} s\n", m.nodes, m.cpus, m.mem_bw,
                           m.net_bw, m.quantum, m.duration);
  std::cout << fmt::format("{:<4} {:<6} {:>8} {:>8} {:>8}   {}\n", "job", "name", "membus", "gang", "linux",
                           "membus co-runs (node-quanta with each other job)");
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    std::string co;
    for (std::size_t j = 0; j < m.jobs.size(); ++j) {
      if (j != i) co += fmt::format(" {}:{}", j + 1, mb.pairs[i][j]);
    }
    std::cout << fmt::format("{:<4} {:<6} {:>8.3f} {:>8.3f} {:>8.3f}  {}\n", i + 1, m.jobs[i].name, mb.normalized[i],
                             gg.normalized[i], lx.normalized[i], co);
  }
  return 0;
}

}  // namespace cosched::sim
