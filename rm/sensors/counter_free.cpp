#include "counter_free.hpp"

#include <algorithm>

namespace cosched::sensors {

void CounterFree::sample(const std::vector<Interval>& jobs, std::vector<Reading>& out) {
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
    for (std::size_t k = 0; k < measured.size(); ++k) jobs_[jobs[measured[k]].id].memory_fraction = fractions[k];
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
      r.bytes_per_s = model_demand({j.threads, st.memory_fraction}, cal_) / slowdowns[k];
    }
    out.push_back(r);
  }
}

}  // namespace cosched::sensors
