#include "vtq_dss.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "policies/job_list.hpp"
#include "policies/space/dss.hpp"

namespace cosched::policy {

namespace {
constexpr double kSlack = 1e-9;  // a timer that fires at the quantum's end counts as the end

}  // namespace

double VtqDss::cpu_time(JobId id) const {
  auto it = cpu_time_.find(id);
  return it == cpu_time_.end() ? 0 : it->second;
}

double VtqDss::quantum(JobId id) const {
  auto it = quantum_.find(id);
  return it == quantum_.end() ? 0 : it->second;
}

void VtqDss::forget(JobId id) {
  cpu_time_.erase(id);
  quantum_.erase(id);
  fillers_.erase(id);
}

void VtqDss::charge_fillers(double now) {
  for (auto& [id, f] : fillers_) {
    cpu_time_[id] += f.first * std::max(now - f.second, 0.0);  // eq. 7 with the time the hole lasted
    f.second = now;
  }
}

void VtqDss::start_phase(const Snapshot& s) {
  gangs_.clear();
  repository_.clear();
  next_gang_ = 0;
  const std::size_t n = s.jobs.size();
  if (n == 0) return;
  const int P = std::max(s.machine.cpus, 1);
  const std::size_t start = head_ < 0 ? 0 : position_at_or_after(s.jobs, head_);
  const double bound = limits_.request_factor * P;  // Inequality 5
  const std::size_t max_jobs = static_cast<std::size_t>(limits_.max_jobs > 0 ? limits_.max_jobs : P);
  std::vector<std::vector<JobId>> cut;
  double sum = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const auto& j = s.jobs[(start + k) % n];
    const double rho = std::max(j.request, 1);
    if (cut.empty() || sum + rho > bound || cut.back().size() >= max_jobs) {
      cut.emplace_back();
      sum = 0;
    }
    cut.back().push_back(j.id);
    sum += rho;
  }
  if (cut.size() >= 2) {
    // §3.2.3: the last gang of the queue goes to the repository queue.
    repository_ = std::move(cut.back());
    cut.pop_back();
  }
  gangs_ = std::move(cut);
  // Our choice: the next phase's cut begins with this phase's repository, which so waits one phase at most.
  head_ = repository_.empty() ? s.jobs[start].id : repository_.front();
}

void VtqDss::start_step(const Snapshot& s) {
  gang_.clear();
  fillers_.clear();
  step_end_ = -1;
  const int P = std::max(s.machine.cpus, 1);
  const double q0 = s.quantum > 0 ? s.quantum : 0.1;
  for (int guard = 0; guard < 2 && gang_.empty(); ++guard) {
    if (next_gang_ >= gangs_.size()) start_phase(s);
    while (gang_.empty() && next_gang_ < gangs_.size()) {
      for (JobId id : gangs_[next_gang_]) {
        if (s.find(id) != nullptr) gang_.push_back({id, 1, 0});
      }
      ++next_gang_;
    }
  }
  if (gang_.empty()) return;
  // Admission order, as sw-dss: DSS's tie-breaks then do not depend on where the queue's cut began.
  std::sort(gang_.begin(), gang_.end(), [](const Member& a, const Member& b) { return a.id < b.id; });

  std::vector<int> requests;
  for (const auto& m : gang_) requests.push_back(s.find(m.id)->request);
  const std::vector<int> x = dss_partition(requests, P, true);
  double t_w = 0;  // eq. 8
  double width = 0;
  for (std::size_t i = 0; i < gang_.size(); ++i) {
    t_w += cpu_time(gang_[i].id);
    width += x[i];
  }
  const double n = static_cast<double>(gang_.size());
  const double target = t_w / n + q0 * width / n;  // every job's T after this step (eq. 9, our reading)
  double longest = 0;
  for (std::size_t i = 0; i < gang_.size(); ++i) {
    Member& m = gang_[i];
    m.cpus = x[i];
    double q = q0;  // §3.2.3: the uniform base quantum for a job scheduled for the first time
    if (quantum_.count(m.id) != 0) {
      q = std::clamp((target - cpu_time(m.id)) / m.cpus, min_factor_ * q0, max_factor_ * q0);
    }
    quantum_[m.id] = q;
    cpu_time_[m.id] += q * m.cpus;  // eq. 7
    m.until = s.now + q;
    longest = std::max(longest, q);
  }
  step_end_ = s.now + longest;  // §3.2.3: the step lasts the gang's longest quantum
}

void VtqDss::refill_holes(const Snapshot& s, const std::vector<JobId>& running, int free, bool new_step) {
  int held = 0;
  bool fillers_present = true;
  for (const auto& [id, f] : fillers_) {
    held += f.first;
    fillers_present &= s.find(id) != nullptr && !contains(running, id);
  }
  if (!new_step && held == free && fillers_present) return;
  charge_fillers(s.now);  // what the holes gave so far, before they change
  // Repository first, then jobs outside the gang, then gang jobs whose quantum ended (our choice: a CPU never
  // idles while a job waits).
  fillers_.clear();
  std::vector<JobId> candidates;
  auto add = [&](JobId id) {
    if (s.find(id) != nullptr && !contains(running, id) && !contains(candidates, id)) candidates.push_back(id);
  };
  for (JobId id : repository_) add(id);
  for (const auto& j : s.jobs) {
    bool in_gang = false;
    for (const auto& m : gang_) in_gang |= m.id == j.id;
    if (!in_gang) add(j.id);
  }
  for (const auto& m : gang_) add(m.id);
  if (candidates.size() > static_cast<std::size_t>(free)) candidates.resize(static_cast<std::size_t>(free));
  std::vector<int> requests;
  for (JobId id : candidates) requests.push_back(s.find(id)->request);
  const std::vector<int> x = dss_partition(requests, free, true);
  for (std::size_t i = 0; i < candidates.size(); ++i) fillers_[candidates[i]] = {x[i], s.now};
}

Allocation VtqDss::allocation_for(const JobView& j, const std::vector<JobId>& running, int P, bool explain) const {
  Allocation a{j.id, std::clamp(j.allocation > 0 ? j.allocation : j.request, 1, P), false, "waiting", ""};
  const Member* m = nullptr;
  for (const auto& g : gang_) {
    if (g.id == j.id) m = &g;
  }
  const bool in_gang = contains(running, j.id);
  const auto f = in_gang ? fillers_.end() : fillers_.find(j.id);
  const bool filler = f != fillers_.end();
  if (in_gang) {
    a.cpus = m->cpus;
    a.runnable = true;
    a.state = "gang";
  } else if (filler) {
    a.cpus = std::max(f->second.first, 1);
    a.runnable = true;
    a.state = contains(repository_, j.id) ? "hole (repository)" : "hole";
  } else if (contains(repository_, j.id)) {
    a.state = "repository";
  }
  // No change, or no one to read it: nothing to explain (a reason formatted is a cost every step for every job).
  if (!explain || (a.runnable == j.runnable && a.cpus == j.allocation)) return a;
  if (in_gang) {
    a.reason = fmt::format("vtq-dss: its gang runs; DSS gives {} CPU(s), quantum q={:.0f} ms (T={:.3f} CPU·s)", m->cpus,
                           quantum(j.id) * 1000, cpu_time(j.id));
  } else if (filler) {
    a.reason = fmt::format("vtq-dss: fills {} CPU(s) the gang leaves idle until the step ends", a.cpus);
  } else {
    a.reason = m != nullptr ? "vtq-dss: its quantum in this step ended" : "vtq-dss: another gang runs";
  }
  return a;
}

Decision VtqDss::decide(const Snapshot& s) {
  const int P = std::max(s.machine.cpus, 1);
  bool gang_present = false;
  for (const auto& m : gang_) gang_present |= s.find(m.id) != nullptr;
  bool new_step = false;
  if (!gang_present || s.now >= step_end_ - kSlack) {
    // Eq. 7 for the holes' jobs is charged only here and where the holes change, never at the quanta in
    // between: the T_i then come out the same whether the RM asks at every quantum or only at wake_at (a sum
    // of the same pieces, in the same order).
    charge_fillers(s.now);
    start_step(s);
    new_step = true;
  }

  // The gang's jobs still within their quantum, and the CPUs the others left.
  int free = P;
  std::vector<JobId> running;
  for (const auto& m : gang_) {
    if (s.find(m.id) != nullptr && m.until > s.now + kSlack) {
      running.push_back(m.id);
      free -= m.cpus;
    }
  }
  refill_holes(s, running, std::max(free, 0), new_step);

  Decision d;
  d.jobs.reserve(s.jobs.size());
  for (const auto& j : s.jobs) d.jobs.push_back(allocation_for(j, running, P, s.explain));
  // Next: the earliest quantum end of a running job, or the step's end.
  double wake = step_end_;
  for (const auto& g : gang_) {
    if (g.until > s.now + kSlack) wake = std::min(wake, g.until);
  }
  if (wake > s.now) d.wake_at = wake;
  d.may_start = true;
  d.may_start_reason = "time sharing: every job gets quanta";
  return d;
}

const ParamTable<VtqDss>& VtqDss::param_table() {
  static const ParamTable<VtqDss> t = {
      window_factor_param(member<VtqDss, double>([](auto& p) -> auto& { return p.limits_.request_factor; })),
      window_jobs_param(member<VtqDss, long>([](auto& p) -> auto& { return p.limits_.max_jobs; })),
      real_param<VtqDss>("min_quantum", 0.01, 1, "shortest quantum, in base quanta (our choice: 0.25)",
                         member<VtqDss, double>([](auto& p) -> auto& { return p.min_factor_; })),
      real_param<VtqDss>("max_quantum", 1, 100, "longest quantum, in base quanta (our choice: 4)",
                         member<VtqDss, double>([](auto& p) -> auto& { return p.max_factor_; })),
  };
  return t;
}

}  // namespace cosched::policy
