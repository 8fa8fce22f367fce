#include "sw_dss.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "policies/space/dss.hpp"
#include "policies/param_util.hpp"
#include "policies/rotation_key.hpp"

namespace cosched::policy {

Decision SlidingWindowDss::decide(const Snapshot& s) {
  const int P = std::max(s.machine.cpus, 1);
  const std::size_t n = s.jobs.size();
  std::vector<int>& requests = scratch_.requests;
  requests.resize(n);
  for (std::size_t i = 0; i < n; ++i) requests[i] = s.jobs[i].request;

  std::size_t start = start_ < 0 ? 0 : position_at_or_after(s.jobs, start_);
  std::vector<std::size_t>& window = scratch_.window;
  gang_from(requests, start, P, limits_, window);
  if (s.event == Event::quantum && window.size() < n) {
    // The quantum ended: the next scheduling step (§3.2.1 / §3.2.2).
    start = step_ == Step::window ? (window.back() + 1) % n : (window.front() + 1) % n;
    gang_from(requests, start, P, limits_, window);
  }
  start_ = n == 0 ? -1 : s.jobs[start].id;

  // DSS within the window (§3.2.1: "applies DSS for the selected processes"), in admission order so that a
  // window holding every job is the plain DSS partition whatever its starting point.
  std::sort(window.begin(), window.end());
  std::vector<int>& win_requests = scratch_.win_requests;
  std::vector<int>& place = scratch_.place;  // each job's index in the window, -1 outside it
  win_requests.clear();
  place.assign(n, -1);
  for (std::size_t k = 0; k < window.size(); ++k) {
    win_requests.push_back(requests[window[k]]);
    place[window[k]] = static_cast<int>(k);
  }
  const std::vector<int> alloc = dss_partition(win_requests, P, fill_remainder_);
  long w = 0;
  for (int r : win_requests) w += std::max(r, 1);

  Decision d;
  d.jobs.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& j = s.jobs[i];
    const bool runs = place[i] >= 0;
    const int cpus = runs ? alloc[static_cast<std::size_t>(place[i])]
                          : std::clamp(j.allocation > 0 ? j.allocation : j.request, 1, P);
    Allocation& a = d.jobs.emplace_back();
    a.id = j.id;
    a.cpus = cpus;
    a.runnable = runs;
    a.state = std::string(runs ? "window" : "waiting");  // constructed, not assigned: a far shorter path
    if (s.explain && (runs != j.runnable || (runs && cpus != j.allocation))) {
      a.reason = runs ? fmt::format("{}: in the window of {} job(s), Σρ={} ≤ {}P (Ineq. 5); DSS over the window: "
                                    "ρ={} → {} CPU(s)",
                                    name(), window.size(), w, format_param(limits_.request_factor), j.request, cpus)
                      : fmt::format("{}: outside the window of {} job(s) this quantum", name(), window.size());
    }
  }
  d.may_start = true;
  d.may_start_reason = "time sharing: every job gets quanta";
  return d;
}

bool SlidingWindowDss::rotation_key(std::string& key) const {
  KeyWriter(key) << step_ << limits_.request_factor << limits_.max_jobs << fill_remainder_ << start_;
  return true;
}

const ParamTable<SlidingWindowDss>& SlidingWindowDss::param_table() {
  using S = SlidingWindowDss;
  static const ParamTable<S> t = {
      window_factor_param(member<S, double>([](auto& p) -> auto& { return p.limits_.request_factor; })),
      window_jobs_param(member<S, long>([](auto& p) -> auto& { return p.limits_.max_jobs; })),
      flag_param<S>("fill_remainder",
                    "1: CPUs left idle by the floor of eq. 2 go to the largest remainders (default); 0: idle (paper)",
                    member<S, long>([](auto& p) -> auto& { return p.fill_remainder_; })),
  };
  return t;
}

}  // namespace cosched::policy
