#include "counter_free.hpp"

#include <algorithm>

namespace cosched::sensors {

void CounterFree::sample(const std::vector<Interval>& jobs, std::vector<Reading>& out) {
  // Who ran next to whom: a job's first set of neighbours, and whether it has met others since.
  for (const Interval& j : jobs) {
    std::vector<policy::JobId> neighbours;
    for (const Interval& o : jobs) {
      if (o.id != j.id) neighbours.push_back(o.id);
    }
    JobState& st = jobs_[j.id];
    if (!st.seen) {
      st.seen = true;
      st.first_neighbours = std::move(neighbours);
    } else if (neighbours != st.first_neighbours) {
      st.varied = true;
    }
  }
  // 1. Each measured job's slowdown against its fastest interval at the same team size.
  std::vector<std::size_t> measured;  // indexes into jobs
  std::vector<double> slowdowns;
  std::vector<int> threads;
  double prior = 0;  // demand of co-runners without a measurement this time, from what they showed before
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Interval& j = jobs[i];
    JobState& st = jobs_[j.id];
    if (j.iteration_s > 0 && j.team > 0) {
      auto [it, fresh] = st.alone_s.emplace(j.team, j.iteration_s);
      if (!fresh) it->second = std::min(it->second, j.iteration_s);
      measured.push_back(i);
      slowdowns.push_back(j.iteration_s / it->second);
      threads.push_back(j.threads);
    } else if (st.memory_fraction >= 0) {
      prior += model_demand({j.threads, st.memory_fraction}, cal_);
    }
  }
  // 2. The model backward, when contention is visible: new memory fractions for every measured job.
  std::vector<double> fractions;
  if (infer_memory_fractions(slowdowns, threads, prior, cal_, fractions)) {
    for (std::size_t k = 0; k < measured.size(); ++k) {
      JobState& st = jobs_[jobs[measured[k]].id];
      st.learned.push_back(fractions[k]);
      if (st.learned.size() > kLearned) st.learned.erase(st.learned.begin());
      std::vector<double> sorted = st.learned;
      std::sort(sorted.begin(), sorted.end());
      const std::size_t n = sorted.size();
      st.memory_fraction = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
  }
  // 3. Readings: the consumption m·n·b / s where m is known, the slowdown alone otherwise.
  for (std::size_t k = 0; k < measured.size(); ++k) {
    const Interval& j = jobs[measured[k]];
    const JobState& st = jobs_[j.id];
    Reading r;
    r.id = j.id;
    r.slowdown = slowdowns[k];
    if (cal_.calibrated() && st.memory_fraction >= 0) {
      r.has_rate = true;
      // The traffic while running, over the share of the interval it ran: bytes per second of wall time, as
      // the other backends count them.
      r.bytes_per_s = model_demand({j.threads, st.memory_fraction}, cal_) / slowdowns[k] * j.cpu_share;
    } else if (cal_.calibrated() && st.varied && slowdowns[k] - 1 <= cal_.min_slowdown) {
      r.has_rate = true;  // never seen slowed: 0, until a memory-bound neighbour shows otherwise
      r.bytes_per_s = 0;
    }
    out.push_back(r);
  }
}

}  // namespace cosched::sensors
