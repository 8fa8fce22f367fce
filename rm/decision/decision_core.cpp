#include "rm/decision/decision_core.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "rm/placement/rank_split.hpp"

namespace cosched::rm {

namespace {

bool any_running(const CoreJob& j) {
  if (j.processes.size() == 1) return j.processes.front().runnable;  // most jobs: no search
  return std::any_of(j.processes.begin(), j.processes.end(), [](const CoreProcess& p) { return p.runnable; });
}

bool any_stopped(const CoreJob& j) {
  return std::any_of(j.processes.begin(), j.processes.end(), [](const CoreProcess& p) { return !p.runnable; });
}

// Job i's allocation: a policy answers in the snapshot's order, so the i-th entry is tried before a search.
const policy::Allocation* allocation_of(const policy::Decision& d, std::size_t i, policy::JobId id) {
  return i < d.jobs.size() && d.jobs[i].id == id ? &d.jobs[i] : d.find(id);
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
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const CoreJob& j = jobs[i];
    const policy::Allocation* a = allocation_of(p.decision, i, j.id);
    const bool run = a == nullptr || a->runnable;
    if (!run && any_running(j)) p.stops.emplace_back(j.id, !a->reason.empty() ? a->reason : "policy");
  }
  return p;
}

const std::vector<const CpuSet*>& DecisionCore::place(const std::vector<PlaceRequest>& reqs,
                                                      const std::vector<std::vector<policy::JobId>>& groups) {
  placed_.clear();
  if (!machine_.place_cpus) return placed_;  // settle() reads each job's own CPU set
  placed_.reserve(reqs.size());
  if (!placed_once_ || groups != last_groups_ || !same_requests(reqs, last_requests_)) {
    last_placed_ = place_with_groups(machine_.order, machine_.core_of, reqs, groups);
    last_requests_ = reqs;
    last_groups_ = groups;
    placed_once_ = true;
  }
  for (const auto& r : reqs) placed_.push_back(&last_placed_.at(r.id));
  return placed_;
}

Settled DecisionCore::settle(const Proposal& p, const std::vector<CoreJob>& jobs, const SettleContext& ctx) {
  const policy::Decision& d = p.decision;
  const int ncpu = machine_.cpus;
  const bool every = ctx.every_process || ctx.log;
  const std::size_t n = jobs.size();
  Settled out;

  // Scratch kept in members from one decision to the next: a decision that changes nothing allocates nothing
  // (cosched-sim makes millions of them).
  std::vector<const policy::Allocation*>& alloc = scratch_alloc_;
  alloc.assign(n, nullptr);
  // Jobs resumed are placed with the others and continue once their CPUs and team are published; a stopped
  // job keeps its allocation and CPU set, which placement may give to the running jobs.
  std::vector<char>& resuming = scratch_resuming_;
  std::vector<char>& stopping = scratch_stopping_;
  std::vector<char>& running = scratch_running_;  // any of its processes runs (before this decision)
  resuming.assign(n, 0);
  stopping.assign(n, 0);
  running.assign(n, 0);
  bool any_resumed = false;
  for (std::size_t i = 0; i < n; ++i) {
    const CoreJob& j = jobs[i];
    alloc[i] = allocation_of(d, i, j.id);
    running[i] = any_running(j) ? 1 : 0;
    const bool run = alloc[i] == nullptr || alloc[i]->runnable;
    resuming[i] = run && any_stopped(j) ? 1 : 0;
    any_resumed = any_resumed || resuming[i] != 0;
  }
  bool any_stopping = false;
  for (const auto& [id, why] : p.stops) {
    auto j = std::find_if(jobs.begin(), jobs.end(), [id = id](const CoreJob& c) { return c.id == id; });
    if (j != jobs.end() && !any_running(*j)) {  // the caller did stop it
      stopping[static_cast<std::size_t>(j - jobs.begin())] = 1;
      any_stopping = true;
    }
  }

  // The policy's word, made safe: one allocation per job, each in [1, cpus].
  std::vector<PlaceRequest>& reqs = scratch_reqs_;
  std::vector<std::size_t>& placed_jobs = scratch_placed_jobs_;  // index in `jobs` of each request
  std::vector<int>& wants = scratch_wants_;  // each placed job's count
  reqs.clear();
  wants.clear();
  placed_jobs.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const CoreJob& j = jobs[i];
    if (resuming[i] == 0 && running[i] == 0) continue;
    const policy::Allocation* a = alloc[i];
    int want = a != nullptr ? a->cpus : std::max(j.allocation, 1);
    if (a == nullptr || want < 1 || want > ncpu) {
      out.errors.push_back(fmt::format("{} gave job {} {} CPUs (must be 1..{}); keeping {}", ctx.policy, j.id,
                                       a == nullptr ? 0 : want, ncpu, std::max(j.allocation, 1)));
      want = std::clamp(std::max(j.allocation, 1), 1, ncpu);
    }
    // Without placement a request is only its count: CPU sets stay as they are, and are not copied.
    if (machine_.place_cpus) reqs.push_back({j.id, want, j.cpus, j.allowed});
    wants.push_back(want);
    placed_jobs.push_back(i);
  }
  const std::vector<const CpuSet*>& placed = place(reqs, d.co_schedule);

  if (!d.co_schedule.empty() || !partners_.empty()) {
    out.partners = partners_of(d.co_schedule);
    for (const CoreJob& j : jobs) {
      if (partners_in(out.partners, j.id) != partners_in(partners_, j.id)) out.partners_changed.push_back(j.id);
    }
    partners_ = out.partners;
  }
  out.groups_changed = !out.partners_changed.empty();

  static const std::string kNoReason;
  for (std::size_t r_i = 0; r_i < placed_jobs.size(); ++r_i) {
    const std::size_t i = placed_jobs[r_i];
    const CoreJob& j = jobs[i];
    const int want = wants[r_i];
    const CpuSet& job_cpus = machine_.place_cpus ? *placed[r_i] : j.cpus;
    const policy::Allocation* a = alloc[i];
    const std::string& reason = a != nullptr ? a->reason : kNoReason;
    // One process's action; `cpus` and `count` are its part of the job's.
    auto act_on = [&](const CoreProcess& proc, int k, const CpuSet& cpus, int count) {
      // Without placement a job of its own keeps its CPU set, which is its process's (CoreJob::cpus).
      const bool same_cpus = (!machine_.place_cpus && !j.several) || cpus == proc.cpus;
      const bool moved = !same_cpus || count != proc.allocation;
      const std::string& state = a != nullptr ? a->state : proc.state;
      const bool restated = a != nullptr && a->state != proc.state;
      const bool resumed = resuming[i] != 0 && !proc.runnable;
      std::string why;
      if (moved) {
        why = !reason.empty() ? reason : "placement";
        if (j.several) why += fmt::format(" (rank {}: {} of the job's {})", k, count, want);
      } else if (restated && !proc.state.empty()) {
        // A state change without a new allocation (e.g. PDPA's INC waiting for CPUs) is a decision too.
        why = !reason.empty() ? reason : proc.state + " → " + state;
      } else if (p.event == policy::Event::report && p.subject == j.id && !reason.empty()) {
        why = reason;  // e.g. a report ignored
      }
      out.changed = out.changed || moved;
      if (!every && !moved && !restated && !resumed && why.empty()) return;
      ProcessAction act;
      act.id = proc.id;
      act.job = j.id;
      act.several = j.several;
      act.rank = k;
      act.from = proc.allocation;
      act.count = count;
      act.cpus = cpus;
      act.resumed = resumed;
      act.state = state;
      act.restated = restated;
      act.reason = reason;
      act.moved = moved;
      act.why = std::move(why);
      act.listed = moved || restated || resuming[i] != 0 || !reason.empty();
      out.processes.push_back(std::move(act));
    };
    if (!j.several) {
      act_on(j.processes.front(), 0, job_cpus, want);
      continue;
    }
    // A job of several: a share for each rank (rank_split.hpp).
    const int nproc = static_cast<int>(j.processes.size());
    const std::vector<int> shares = rank_shares(want, nproc);
    const std::vector<CpuSet> slices = split_cpus(job_cpus, shares);
    out.job_allocation[j.id] = want;
    out.job_cpus[j.id] = job_cpus;
    for (int k = 0; k < nproc; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      act_on(j.processes[kk], k, slices[kk], shares[kk]);
    }
  }
  // The jobs that sit this decision out (stopped now or before).
  for (std::size_t i = 0; i < n; ++i) {
    const CoreJob& j = jobs[i];
    if (resuming[i] != 0 || running[i] != 0) continue;
    const policy::Allocation* a = alloc[i];
    for (std::size_t k = 0; k < j.processes.size(); ++k) {
      const CoreProcess& proc = j.processes[k];
      const std::string& state = a != nullptr ? a->state : proc.state;
      const bool restated = state != proc.state;
      if (!every && stopping[i] == 0 && !restated) continue;
      ProcessAction act;
      act.id = proc.id;
      act.job = j.id;
      act.several = j.several;
      act.rank = static_cast<int>(k);
      act.from = act.count = proc.allocation;
      act.cpus = proc.cpus;
      act.running = false;
      act.stopped_now = stopping[i] != 0;
      act.state = state;
      act.restated = restated;
      act.reason = a != nullptr ? a->reason : "";
      act.listed = act.stopped_now;
      out.processes.push_back(std::move(act));
    }
  }
  out.changed = out.changed || any_stopping || any_resumed;

  out.may_start = d.may_start;
  if (every) out.may_start_reason = d.may_start_reason;
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
                  {"may_start_reason", out.may_start_reason}};  // every: set above
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
