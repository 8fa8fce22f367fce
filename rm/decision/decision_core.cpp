#include "rm/decision/decision_core.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "rm/placement/rank_split.hpp"

namespace cosched::rm {

namespace {

bool any_running(const CoreJob& j) {
  return std::any_of(j.processes.begin(), j.processes.end(), [](const CoreProcess& p) { return p.runnable; });
}

bool any_stopped(const CoreJob& j) {
  return std::any_of(j.processes.begin(), j.processes.end(), [](const CoreProcess& p) { return !p.runnable; });
}

const policy::Allocation* allocation_of(const policy::Decision& d, policy::JobId id) { return d.find(id); }

bool contains(const std::vector<policy::JobId>& v, policy::JobId id) {
  return std::find(v.begin(), v.end(), id) != v.end();
}

std::map<policy::JobId, std::vector<policy::JobId>> partners_of(const std::vector<std::vector<policy::JobId>>& groups) {
  std::map<policy::JobId, std::vector<policy::JobId>> partners;
  for (const auto& g : groups) {
    for (policy::JobId id : g) {
      for (policy::JobId o : g) {
        if (o != id) partners[id].push_back(o);
      }
    }
  }
  return partners;
}

const std::vector<policy::JobId>& partners_in(const std::map<policy::JobId, std::vector<policy::JobId>>& m,
                                              policy::JobId id) {
  static const std::vector<policy::JobId> none;
  auto it = m.find(id);
  return it == m.end() ? none : it->second;
}

bool same_requests(const std::vector<PlaceRequest>& a, const std::vector<PlaceRequest>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].id != b[i].id || a[i].count != b[i].count || !(a[i].current == b[i].current) ||
        !(a[i].allowed == b[i].allowed)) {
      return false;
    }
  }
  return true;
}

nlohmann::json entry_of(const ProcessAction& a) {
  nlohmann::json e = {{"id", a.id},
                      {"allocated", a.count},
                      {"cpus", a.cpus.to_string()},
                      {"run", a.running ? "running" : "stopped"},
                      {"state", a.state},
                      {"reason", a.reason}};
  if (a.several) e["job"] = a.job;
  return e;
}

}  // namespace

DecisionCore::DecisionCore(CoreMachine machine) : machine_(std::move(machine)) {}

Proposal DecisionCore::propose(policy::Policy& policy, const policy::Snapshot& s,
                               const std::vector<CoreJob>& jobs) const {
  Proposal p;
  p.decision = policy.decide(s);
  p.event = s.event;
  p.subject = s.subject;
  p.now = s.now;
  // Time sharing: jobs the policy stops leave their CPUs before the others are placed on them. A job of
  // several processes is stopped whole.
  for (const CoreJob& j : jobs) {
    const policy::Allocation* a = allocation_of(p.decision, j.id);
    const bool run = a == nullptr || a->runnable;
    if (!run && any_running(j)) p.stops.emplace_back(j.id, !a->reason.empty() ? a->reason : "policy");
  }
  return p;
}

const std::map<policy::JobId, CpuSet>& DecisionCore::place(const std::vector<PlaceRequest>& reqs,
                                                    const std::vector<std::vector<policy::JobId>>& groups) {
  if (!machine_.place_cpus) {
    last_placed_.clear();
    for (const auto& r : reqs) last_placed_[r.id] = r.current;
    return last_placed_;
  }
  if (placed_once_ && groups == last_groups_ && same_requests(reqs, last_requests_)) return last_placed_;
  last_placed_ = place_with_groups(machine_.order, machine_.core_of, reqs, groups);
  last_requests_ = reqs;
  last_groups_ = groups;
  placed_once_ = true;
  return last_placed_;
}

Settled DecisionCore::settle(const Proposal& p, const std::vector<CoreJob>& jobs, const SettleContext& ctx) {
  const policy::Decision& d = p.decision;
  const int ncpu = machine_.cpus;
  Settled out;

  // Jobs resumed are placed with the others and continue once their CPUs and team are published; a stopped
  // job keeps its allocation and CPU set, which placement may give to the running jobs.
  std::vector<policy::JobId> resuming;
  std::vector<policy::JobId> stopping;
  for (const CoreJob& j : jobs) {
    const policy::Allocation* a = allocation_of(d, j.id);
    const bool run = a == nullptr || a->runnable;
    if (run && any_stopped(j)) resuming.push_back(j.id);
  }
  for (const auto& [id, why] : p.stops) {
    auto j = std::find_if(jobs.begin(), jobs.end(), [id = id](const CoreJob& c) { return c.id == id; });
    if (j != jobs.end() && !any_running(*j)) stopping.push_back(id);  // the caller did stop it
  }

  // The policy's word, made safe: one allocation per job, each in [1, cpus].
  std::vector<PlaceRequest> reqs;
  std::vector<const CoreJob*> placed_jobs;
  for (const CoreJob& j : jobs) {
    if (!any_running(j) && !contains(resuming, j.id)) continue;
    const policy::Allocation* a = allocation_of(d, j.id);
    int want = a != nullptr ? a->cpus : std::max(j.allocation, 1);
    if (a == nullptr || want < 1 || want > ncpu) {
      out.errors.push_back(fmt::format("{} gave job {} {} CPUs (must be 1..{}); keeping {}", ctx.policy, j.id,
                                       a == nullptr ? 0 : want, ncpu, std::max(j.allocation, 1)));
      want = std::clamp(std::max(j.allocation, 1), 1, ncpu);
    }
    reqs.push_back({j.id, want, j.cpus, j.allowed});
    placed_jobs.push_back(&j);
  }
  const std::map<policy::JobId, CpuSet>& placed = place(reqs, d.co_schedule);

  out.partners = partners_of(d.co_schedule);
  for (const CoreJob& j : jobs) {
    if (partners_in(out.partners, j.id) != partners_in(partners_, j.id)) out.partners_changed.push_back(j.id);
  }
  out.groups_changed = !out.partners_changed.empty();
  partners_ = out.partners;

  for (std::size_t i = 0; i < reqs.size(); ++i) {
    const CoreJob& j = *placed_jobs[i];
    const PlaceRequest& r = reqs[i];
    const CpuSet& job_cpus = placed.at(r.id);
    const policy::Allocation* a = allocation_of(d, j.id);
    const std::string reason = a != nullptr ? a->reason : "";
    // Each process's part: the whole for a job of its own, a share for each rank (rank_split.hpp).
    const int n = static_cast<int>(j.processes.size());
    const std::vector<int> shares = j.several ? rank_shares(r.count, n) : std::vector<int>{r.count};
    const std::vector<CpuSet> slices = j.several ? split_cpus(job_cpus, shares) : std::vector<CpuSet>{job_cpus};
    out.job_allocation[j.id] = r.count;
    out.job_cpus[j.id] = job_cpus;
    const bool resumed = contains(resuming, j.id);
    for (int k = 0; k < n; ++k) {
      const CoreProcess& proc = j.processes[static_cast<std::size_t>(k)];
      ProcessAction act;
      act.id = proc.id;
      act.job = j.id;
      act.several = j.several;
      act.rank = k;
      act.from = proc.allocation;
      act.count = shares[static_cast<std::size_t>(k)];
      act.cpus = slices[static_cast<std::size_t>(k)];
      act.resumed = resumed && !proc.runnable;
      act.state = a != nullptr ? a->state : proc.state;
      act.restated = a != nullptr && a->state != proc.state;
      act.reason = reason;
      act.moved = !(act.cpus == proc.cpus) || act.count != proc.allocation;
      if (act.moved) {
        act.why = !reason.empty() ? reason : "placement";
        if (j.several) {
          act.why += fmt::format(" (rank {}: {} of the job's {})", k, act.count, r.count);
        }
      } else if (act.state != proc.state && !proc.state.empty()) {
        // A state change without a new allocation (e.g. PDPA's INC waiting for CPUs) is a decision too.
        act.why = !reason.empty() ? reason : proc.state + " → " + act.state;
      } else if (p.event == policy::Event::report && p.subject == j.id && !reason.empty()) {
        act.why = reason;  // e.g. a report ignored
      }
      act.listed = act.moved || act.restated || resumed || !reason.empty();
      out.changed = out.changed || act.moved;
      out.processes.push_back(std::move(act));
    }
  }
  // The jobs that sit this decision out (stopped now or before).
  for (const CoreJob& j : jobs) {
    if (any_running(j) || contains(resuming, j.id)) continue;
    const policy::Allocation* a = allocation_of(d, j.id);
    for (std::size_t k = 0; k < j.processes.size(); ++k) {
      const CoreProcess& proc = j.processes[k];
      ProcessAction act;
      act.id = proc.id;
      act.job = j.id;
      act.several = j.several;
      act.rank = static_cast<int>(k);
      act.from = act.count = proc.allocation;
      act.cpus = proc.cpus;
      act.running = false;
      act.stopped_now = contains(stopping, j.id);
      act.state = a != nullptr ? a->state : proc.state;
      act.restated = act.state != proc.state;
      act.reason = a != nullptr ? a->reason : "";
      act.listed = act.stopped_now;
      out.processes.push_back(std::move(act));
    }
  }
  out.changed = out.changed || !stopping.empty() || !resuming.empty();

  out.may_start = d.may_start;
  out.may_start_reason = d.may_start_reason;
  if (ctx.hold && out.may_start) {
    out.may_start = false;
    out.may_start_reason = *ctx.hold;
  }
  out.may_start_changed = out.may_start != ctx.may_start_before;
  out.wake_at = d.wake_at;

  const policy::Event e = p.event;
  out.noteworthy = out.changed || out.may_start_changed || out.groups_changed || e == policy::Event::arrival ||
                   e == policy::Event::departure || e == policy::Event::report || e == policy::Event::param_change;
  if (ctx.log && out.noteworthy) {
    out.record = {{"t", p.now},
                  {"event", policy::to_string(e)},
                  {"subject", p.subject},
                  {"policy", ctx.policy},
                  {"may_start", out.may_start},
                  {"may_start_reason", out.may_start_reason}};
    if (!d.co_schedule.empty()) out.record["groups"] = d.co_schedule;  // co-runners: SMT siblings / adjacent cores
    out.entries.reserve(out.processes.size());
    for (const ProcessAction& a : out.processes) out.entries.push_back(entry_of(a));
  }
  return out;
}

void push_history(std::vector<policy::HistoryEntry>& history, const policy::Perf& p, double now) {
  history.push_back({p.cpus, p.speedup, p.efficiency, p.iteration_s, now});
  if (history.size() > kHistoryDepth) history.erase(history.begin());
}

bool machine_shared(const policy::Snapshot& s) { return s.jobs.size() >= 2 || s.queued > 0 || s.starting > 0; }

}  // namespace cosched::rm
