// CPUs shared by several running jobs (docs/simulator.md, "Jobs that share CPUs"). A space-sharing policy
// gives every job at least one CPU, so with more jobs than CPUs (a queue longer than the machine,
// policies/queue_sharing.hpp) some CPUs carry several jobs. The daemon's placement spreads the sharing evenly
// and the kernel time-shares each CPU among the jobs on it (one cpu cgroup each: cosched-rm's default
// --cpu-share job, rm/enforce/job_cpu_share.cpp): a job's work goes at its team's speed times
// the mean, over its CPUs, of 1 / (running jobs on that CPU). Without placement (--no-placement), the same
// with the machine as one pool: CPUs / Σ teams.
#include <algorithm>
#include <cmath>

#include "sim/simulator.hpp"

namespace cosched::sim {

void Simulator::update_cpu_sharing() {
  // Fewer running jobs than CPUs and nothing shared before: every share is 1 (each job holds CPUs of its own).
  if (!cpus_shared_ && running_.size() <= static_cast<std::size_t>(std::max(config_.cpus, 1))) return;
  long demand = 0;
  for (const auto& [id, slot] : running_) {
    if (slot.job->started()) demand += std::max(slot.job->team(), 0);
  }
  const bool shared = demand > config_.cpus;
  std::vector<int> holders;
  if (shared && config_.place_cpus) {
    const int top = cpu_order_.empty() ? 0 : *std::max_element(cpu_order_.begin(), cpu_order_.end());
    holders.assign(static_cast<std::size_t>(std::max(top, config_.cpus - 1) + 1), 0);
    for (const auto& [id, slot] : running_) {
      if (!slot.job->started() || slot.job->team() <= 0) continue;
      for (int cpu : slot.cpus.to_vector()) {
        if (cpu >= 0 && static_cast<std::size_t>(cpu) < holders.size()) ++holders[static_cast<std::size_t>(cpu)];
      }
    }
  }
  cpus_shared_ = false;
  for (auto& [id, slot] : running_) {
    RunningJob& j = *slot.job;
    double share = 1;
    if (shared && j.started() && j.team() > 0) {
      if (config_.place_cpus) {
        double sum = 0;
        int n = 0;
        for (int cpu : slot.cpus.to_vector()) {
          const int h = cpu >= 0 && static_cast<std::size_t>(cpu) < holders.size() ? holders[static_cast<std::size_t>(cpu)] : 1;
          sum += 1.0 / std::max(h, 1);
          ++n;
        }
        share = n > 0 ? sum / n : 1.0;
      } else {
        share = static_cast<double>(config_.cpus) / static_cast<double>(demand);
      }
    }
    cpus_shared_ |= share < 1;
    if (std::fabs(j.progress().cpu_share() - share) <= 1e-12) continue;
    j.set_cpu_share(now_, share);
    schedule(id);
  }
}

}  // namespace cosched::sim
