#include "equal_efficiency.hpp"

#include <algorithm>
#include <cmath>
#include <queue>

#include <fmt/format.h>

#include "equipartition.hpp"

namespace cosched::policy {

double amdahl_efficiency(double f, int p) noexcept {
  if (p <= 1) return 1.0;
  return 1.0 / (p * (1.0 - f) + f);
}

std::optional<double> parallel_fraction(const Perf& perf) noexcept {
  if (!perf.valid) return std::nullopt;
  if (perf.amdahl_f >= 0.0 && perf.amdahl_f <= 1.0) return perf.amdahl_f;
  // One point at P = 1 says nothing about scaling.
  if (perf.cpus <= 1 || !(perf.efficiency > 0.0) || !std::isfinite(perf.efficiency)) return std::nullopt;
  const double p = perf.cpus;
  return std::clamp((p - 1.0 / perf.efficiency) / (p - 1.0), 0.0, 1.0);
}

std::optional<double> parallel_fraction(const JobView& job) noexcept {
  if (auto f = parallel_fraction(job.perf)) return f;
  if (!job.perf.valid) return std::nullopt;
  for (auto h = job.history.rbegin(); h != job.history.rend(); ++h) {
    if (h->cpus <= 1) continue;
    Perf point;
    point.valid = true;
    point.cpus = h->cpus;
    point.efficiency = h->efficiency;
    return parallel_fraction(point);
  }
  return std::nullopt;
}

std::vector<int> equal_efficiency_shares(const std::vector<JobView>& jobs, int cpus) {
  const std::size_t n = jobs.size();
  const std::vector<int> equal = equal_shares(jobs, cpus);
  std::vector<int> alloc(n, 1);
  std::vector<double> f(n, 1.0);
  int budget = cpus;
  // Unmeasured jobs keep an equal share: treating them as perfectly efficient (f = 1) would let a newcomer
  // take its whole request from jobs that have proven they scale, until its first report.
  for (std::size_t i = 0; i < n; ++i) {
    if (auto fit = parallel_fraction(jobs[i])) {
      f[i] = *fit;
      alloc[i] = 1;
    } else {
      f[i] = -1.0;
      alloc[i] = equal[i];
    }
    budget -= alloc[i];
  }
  // Greedy water filling on the extrapolated efficiency: the job that would use its next CPU best gets it.
  // Efficiencies are compared to 1e-6: Amdahl fits of equally scalable jobs differ in their last bits
  // (f = 0.99999999 vs 1), and ranking by that noise made the allocations flip at every report and quantum
  // (cosched-sim: 7.9 M reallocations for 1,000 jobs). Within that, the lowest id first, as before. The
  // rounded key is kept with its candidate: computed at each comparison, it was an eighth of a simulation.
  struct NextCpu {
    long long key;  // llround(efficiency of the next CPU × 1e6)
    JobId id;
    std::size_t index;
  };
  auto next_key = [&f, &alloc](std::size_t i) { return std::llround(amdahl_efficiency(f[i], alloc[i] + 1) * 1e6); };
  auto worse = [](const NextCpu& a, const NextCpu& b) {
    if (a.key != b.key) return a.key < b.key;
    return a.id > b.id;  // ties: lowest id first
  };
  std::priority_queue<NextCpu, std::vector<NextCpu>, decltype(worse)> best(worse);
  for (std::size_t i = 0; i < n; ++i) {
    if (f[i] >= 0.0 && alloc[i] < std::max(jobs[i].request, 1)) best.push({next_key(i), jobs[i].id, i});
  }
  while (budget > 0 && !best.empty()) {
    NextCpu c = best.top();
    best.pop();
    // The winner takes at least one CPU and keeps taking them while its next one still ranks first: one
    // heap step per run of CPUs. Its next CPU's efficiency only falls as it grows (p(1 - f) + f rises with
    // p), so where the run ends is found by bisection, not a CPU at a time.
    const std::size_t i = c.index;
    const int cap = std::max(jobs[i].request, 1);
    const int first = alloc[i] + 1;
    int last = std::min(alloc[i] + budget, cap);  // the run cannot pass these
    if (!best.empty()) {
      // The smallest allocation from `first` on whose next CPU no longer ranks first ends the run.
      auto ranks_first = [&](int a) {
        alloc[i] = a;
        return !worse({next_key(i), c.id, i}, best.top());
      };
      int lo = first;
      int hi = last;
      while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (ranks_first(mid)) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      last = lo;
    }
    budget -= last - (first - 1);
    alloc[i] = last;
    c.key = next_key(i);
    if (alloc[i] < cap) best.push(c);
  }
  return alloc;
}

namespace {
// "E=0.53": the status label of every job on every call, so built by hand (fmt's float path cost ~0.1 µs a
// job, a tenth of the whole decision on 1,000 jobs).
std::string efficiency_label(double e) {
  const long hundredths = std::lround(std::clamp(e, 0.0, 99.99) * 100.0);
  char text[8] = {'E', '=', 0, 0, 0, 0, 0, 0};
  int at = 2;
  if (hundredths >= 1000) text[at++] = static_cast<char>('0' + hundredths / 1000);
  text[at++] = static_cast<char>('0' + hundredths / 100 % 10);
  text[at++] = '.';
  text[at++] = static_cast<char>('0' + hundredths % 100 / 10);
  text[at++] = static_cast<char>('0' + hundredths % 10);
  return std::string(text, static_cast<std::size_t>(at));
}
}  // namespace

Decision EqualEfficiency::decide(const Snapshot& s) {
  Decision d;
  const auto shares = equal_efficiency_shares(s.jobs, s.machine.cpus);
  d.jobs.reserve(s.jobs.size());
  for (std::size_t i = 0; i < s.jobs.size(); ++i) {
    const auto& j = s.jobs[i];
    const auto f = parallel_fraction(j);
    Allocation a{j.id, shares[i], true, f ? efficiency_label(amdahl_efficiency(*f, shares[i])) : "unmeasured", ""};
    if (shares[i] != j.allocation) {
      a.reason = f ? fmt::format("efficiencies equalised: Amdahl f={:.3f} extrapolates E({})={:.2f} "
                                 "(request {}) → {} CPUs",
                                 *f, shares[i], amdahl_efficiency(*f, shares[i]), j.request, shares[i])
                   : fmt::format("no measurement yet: equal share of {} CPUs among {} jobs (request {}) → {} CPUs",
                                 s.machine.cpus, s.jobs.size(), j.request, shares[i]);
    }
    d.jobs.push_back(std::move(a));
  }
  // No multiprogramming-level policy of its own (the paper runs it under a fixed ML of four, §5).
  admit_while_a_cpu_is_unshared(s, d);
  sharing_.admit(s, d);
  return d;
}

const ParamTable<EqualEfficiency>& EqualEfficiency::param_table() {
  static const ParamTable<EqualEfficiency> t = {jobs_per_cpu_param(&EqualEfficiency::sharing_)};
  return t;
}

}  // namespace cosched::policy
