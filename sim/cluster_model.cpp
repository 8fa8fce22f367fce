#include "sim/cluster_model.hpp"

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>

#include "policies/bandwidth/membus.hpp"
#include "policies/registry.hpp"

namespace cosched::sim {

namespace {

Error bad(const std::string& m) { return make_error(Errc::invalid_argument, m); }

// The snapshot one node's policy sees: the jobs with their last quantum's measured bandwidths (what the
// sensors and the PMPI wrappers would report: demand × the rate the job achieved).
policy::Snapshot node_snapshot(const ClusterModel& m, const std::vector<int>& running, const std::vector<double>& rate,
                               double now) {
  policy::Snapshot s;
  s.machine.cpus = m.cpus;
  s.machine.cores = m.cpus;
  s.now = now;
  s.quantum = m.quantum;
  s.event = policy::Event::quantum;
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    const auto& j = m.jobs[i];
    policy::JobView v;
    v.id = static_cast<policy::JobId>(i + 1);
    v.request = j.procs;
    v.allocation = j.procs;
    v.runnable = running[i] != 0;
    if (running[i] != 0) {
      v.bandwidth.source = "model";
      v.bandwidth.push({now, j.procs * j.mem_mbs * 1e6 * rate[i], j.procs});
    }
    v.network.source = "model";
    v.network.push({now, running[i] != 0 ? j.procs * j.net_mbs * 1e6 * rate[i] : 0.0, j.procs});
    s.jobs.push_back(v);
  }
  return s;
}

std::vector<int> runnable_of(const policy::Decision& d) {
  std::vector<int> r;
  for (const auto& a : d.jobs) r.push_back(a.runnable ? 1 : 0);
  return r;
}

// Uncoordinated kernel time sharing on one node: the processes that hold the CPUs this quantum are a random
// draw (each job as likely as any other), filled while CPUs remain.
std::vector<int> linux_draw(const ClusterModel& m, std::mt19937_64& rng) {
  std::vector<std::size_t> order(m.jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<int> run(m.jobs.size(), 0);
  int left = m.cpus;
  for (std::size_t i : order) {
    const int p = std::min(m.jobs[i].procs, m.cpus);
    if (p > left) continue;
    run[i] = 1;
    left -= p;
  }
  return run;
}

}  // namespace

Result<ClusterJob> parse_cluster_job(const std::string& spec) {
  std::vector<std::string> f;
  std::stringstream ss(spec);
  for (std::string part; std::getline(ss, part, ',');) f.push_back(part);
  if (f.size() != 6) return bad("--job '" + spec + "': expected NAME,PROCS,MEM,NET,F,G (6 fields), got " + std::to_string(f.size()));
  ClusterJob j;
  j.name = f[0];
  const char* names[] = {"NAME", "PROCS", "MEM", "NET", "F", "G"};
  try {
    std::size_t used = 0;
    j.procs = std::stoi(f[1], &used);
    if (used != f[1].size() || j.procs < 1) return bad("--job '" + spec + "': field PROCS must be an integer >= 1");
    double* d[] = {&j.mem_mbs, &j.net_mbs, &j.mem_share, &j.net_share};
    for (int k = 0; k < 4; ++k) {
      *d[k] = std::stod(f[static_cast<std::size_t>(k + 2)], &used);
      if (used != f[static_cast<std::size_t>(k + 2)].size() || !(*d[k] >= 0) || (k >= 2 && *d[k] > 1)) {
        return bad("--job '" + spec + "': field " + names[k + 2] + (k >= 2 ? " must be in [0, 1]" : " must be >= 0"));
      }
    }
  } catch (const std::exception&) {
    return bad("--job '" + spec + "': fields PROCS..G must be numbers");
  }
  if (j.mem_share + j.net_share > 1) return bad("--job '" + spec + "': F + G must be at most 1");
  return j;
}

std::vector<double> node_rates(const ClusterModel& m, const std::vector<int>& running) {
  double dm = 0;
  double dn = 0;
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    if (running[i] == 0) continue;
    dm += m.jobs[i].procs * (m.jobs[i].mem_mbs + m.jobs[i].net_mbs);
    dn += m.jobs[i].procs * m.jobs[i].net_mbs;
  }
  const double sm = std::max(1.0, dm / m.mem_bw);
  const double sn = std::max(1.0, dn / m.net_bw);
  std::vector<double> r(m.jobs.size(), 0.0);
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    if (running[i] == 0) continue;
    r[i] = 1.0 / (1.0 + m.jobs[i].mem_share * (sm - 1.0) + m.jobs[i].net_share * (sn - 1.0));
  }
  return r;
}

ClusterOutcome run_cluster(const ClusterModel& m, ClusterScheduler s, std::uint64_t seed) {
  const std::size_t n = m.jobs.size();
  ClusterOutcome out;
  out.work.assign(n, 0.0);
  out.pairs.assign(n, std::vector<int>(n, 0));
  std::mt19937_64 rng(seed);
  std::vector<std::unique_ptr<policy::Policy>> pols;
  for (int k = 0; k < m.nodes; ++k) {
    auto p = policy::make_policy(s == ClusterScheduler::gang ? "gang" : "membus", policy::Machine{m.cpus, m.cpus, 1, 1},
                                 {{s == ClusterScheduler::gang ? "alternate" : "q", s == ClusterScheduler::gang ? "1" : "0.5"}});
    pols.push_back(std::move(*p));
  }
  std::vector<std::vector<int>> running(static_cast<std::size_t>(m.nodes), std::vector<int>(n, 0));
  std::vector<std::vector<double>> rate(static_cast<std::size_t>(m.nodes), std::vector<double>(n, 0.0));
  std::uint64_t seq = 0;
  const long quanta = static_cast<long>(m.duration / m.quantum);
  for (long q = 0; q < quanta; ++q) {
    const double now = static_cast<double>(q) * m.quantum;
    if (s == ClusterScheduler::linux_ts) {
      for (auto& r : running) r = linux_draw(m, rng);
    } else if (s == ClusterScheduler::gang) {
      for (int k = 0; k < m.nodes; ++k) {
        const auto ku = static_cast<std::size_t>(k);
        running[ku] = runnable_of(pols[ku]->decide(node_snapshot(m, running[ku], rate[ku], now)));
      }
    } else {
      // cosched-cluster's round: every node's candidates, summed; the agreed order back to every node.
      std::vector<std::vector<int>> local;
      for (int k = 0; k < m.nodes; ++k) {
        const auto ku = static_cast<std::size_t>(k);
        auto c = pols[ku]->cluster_candidates(node_snapshot(m, running[ku], rate[ku], now));
        std::vector<int> sl(n, 0);
        for (auto id : c.value_or(std::vector<policy::JobId>{})) sl[static_cast<std::size_t>(id - 1)] = 1;
        local.push_back(sl);
      }
      const auto order = policy::membus_reduce(local);
      ++seq;
      for (int k = 0; k < m.nodes; ++k) {
        const auto ku = static_cast<std::size_t>(k);
        auto snap = node_snapshot(m, running[ku], rate[ku], now);
        for (auto i : order) snap.cluster.order.push_back(static_cast<policy::JobId>(i + 1));
        snap.cluster.at = now;
        snap.cluster.seq = seq;
        running[ku] = runnable_of(pols[ku]->decide(snap));
      }
    }
    for (int k = 0; k < m.nodes; ++k) {
      const auto ku = static_cast<std::size_t>(k);
      rate[ku] = node_rates(m, running[ku]);
      for (std::size_t i = 0; i < n; ++i) {
        out.work[i] += m.quantum * rate[ku][i] / m.nodes;
        for (std::size_t j = 0; j < n; ++j) {
          if (i != j && running[ku][i] != 0 && running[ku][j] != 0) ++out.pairs[i][j];
        }
      }
    }
  }
  int procs = 0;
  for (const auto& j : m.jobs) procs += j.procs;
  const double ideal = static_cast<double>(quanta) * m.quantum * std::min(1.0, static_cast<double>(m.cpus) / procs);
  for (double w : out.work) out.normalized.push_back(w / ideal);
  return out;
}

}  // namespace cosched::sim
