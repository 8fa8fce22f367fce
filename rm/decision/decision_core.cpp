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
        !(a[i].allowed == b[i].allowed) || a[i].threads != b[i].threads || a[i].resuming != b[i].resuming) {
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

DecisionCore::DecisionCore(CoreMachine machine) : machine_(std::move(machine)) { recent_.reserve(kRecentPlacements); }

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
  auto hit = std::find_if(recent_.begin(), recent_.end(), [&](const RecentPlacement& e) {
    return e.groups == groups && same_requests(reqs, e.requests);
  });
  if (hit == recent_.end()) {
    RecentPlacement fresh{reqs, groups, place_with_groups(machine_.order, machine_.core_of, reqs, groups)};
    if (recent_.size() < kRecentPlacements) {
      hit = recent_.insert(recent_.end(), std::move(fresh));
    } else {
      hit = recent_.begin() + static_cast<std::ptrdiff_t>(oldest_);
      *hit = std::move(fresh);
      oldest_ = (oldest_ + 1) % kRecentPlacements;
    }
  }
  for (const auto& r : reqs) placed_.push_back(&hit->placed.at(r.id));
  return placed_;
}

// Step 3, in the order it happens: which jobs run, resume or were stopped; the policy's counts made safe;
// placement; group partners; each process's action; the may_start answer and the log record.
Settled DecisionCore::settle(const Proposal& p, const std::vector<CoreJob>& jobs, const SettleContext& ctx) {
  Settled out;
  const Pass pass = classify(p, jobs);
  request(jobs, ctx, out);
  const std::vector<const CpuSet*>& placed = place(scratch_reqs_, p.decision.co_schedule);
  note_partners(p.decision, jobs, out);
  const bool every = ctx.every_process || ctx.log;
  for (std::size_t k = 0; k < scratch_placed_jobs_.size(); ++k) {
    const std::size_t i = scratch_placed_jobs_[k];
    act_on_placed(p, jobs[i], i, scratch_wants_[k], machine_.place_cpus ? *placed[k] : jobs[i].cpus, every, out);
  }
  act_on_stopped(jobs, every, out);
  out.changed = out.changed || pass.any_stopping || pass.any_resumed;
  finish(p, ctx, every, out);
  return out;
}

// Scratch kept in members from one decision to the next: a decision that changes nothing allocates nothing
// (cosched-sim makes millions of them).
DecisionCore::Pass DecisionCore::classify(const Proposal& p, const std::vector<CoreJob>& jobs) {
  const policy::Decision& d = p.decision;
  const std::size_t n = jobs.size();
  Pass pass;
  scratch_alloc_.assign(n, nullptr);
  scratch_running_.assign(n, 0);
  scratch_resuming_.assign(n, 0);
  scratch_stopping_.assign(n, 0);
  // Jobs resumed are placed with the others and continue once their CPUs and team are published; a stopped
  // job keeps its allocation and CPU set, which placement may give to the running jobs.
  scratch_processes_ = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const CoreJob& j = jobs[i];
    scratch_processes_ += j.processes.size();
    const policy::Allocation* a = allocation_of(d, i, j.id);
    scratch_alloc_[i] = a;
    scratch_running_[i] = any_running(j) ? 1 : 0;
    const bool run = a == nullptr || a->runnable;
    scratch_resuming_[i] = run && any_stopped(j) ? 1 : 0;
    pass.any_resumed = pass.any_resumed || scratch_resuming_[i] != 0;
  }
  for (const auto& [id, why] : p.stops) {
    auto j = std::find_if(jobs.begin(), jobs.end(), [id = id](const CoreJob& c) { return c.id == id; });
    if (j != jobs.end() && !any_running(*j)) {  // the caller did stop it
      scratch_stopping_[static_cast<std::size_t>(j - jobs.begin())] = 1;
      pass.any_stopping = true;
    }
  }
  return pass;
}

// The policy's word, made safe: one allocation per job that runs or resumes, each in [1, cpus].
void DecisionCore::request(const std::vector<CoreJob>& jobs, const SettleContext& ctx, Settled& out) {
  const int ncpu = machine_.cpus;
  scratch_reqs_.clear();
  scratch_wants_.clear();
  scratch_placed_jobs_.clear();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const CoreJob& j = jobs[i];
    if (scratch_resuming_[i] == 0 && scratch_running_[i] == 0) continue;
    const policy::Allocation* a = scratch_alloc_[i];
    int want = a != nullptr ? a->cpus : std::max(j.allocation, 1);
    if (a == nullptr || want < 1 || want > ncpu) {
      out.errors.push_back(fmt::format("{} gave job {} {} CPUs (must be 1..{}); keeping {}", ctx.policy, j.id,
                                       a == nullptr ? 0 : want, ncpu, std::max(j.allocation, 1)));
      want = std::clamp(std::max(j.allocation, 1), 1, ncpu);
    }
    // Without placement a request is only its count: CPU sets stay as they are, and are not copied.
    if (machine_.place_cpus) {
      scratch_reqs_.push_back({j.id, want, j.cpus, j.allowed, j.threads, scratch_resuming_[i] != 0});
    }
    scratch_wants_.push_back(want);
    scratch_placed_jobs_.push_back(i);
  }
}

// Each job's group partners (Decision::co_schedule), and the jobs whose partners changed.
void DecisionCore::note_partners(const policy::Decision& d, const std::vector<CoreJob>& jobs, Settled& out) {
  if (!d.co_schedule.empty() || !partners_.empty()) {
    out.partners = partners_of(d.co_schedule);
    for (const CoreJob& j : jobs) {
      if (partners_in(out.partners, j.id) != partners_in(partners_, j.id)) out.partners_changed.push_back(j.id);
    }
    partners_ = out.partners;
  }
  out.groups_changed = !out.partners_changed.empty();
}

// A running (or resuming) job's processes: the whole for a job of its own, a share for each rank
// (rank_split.hpp).
void DecisionCore::act_on_placed(const Proposal& p, const CoreJob& j, std::size_t i, int want, const CpuSet& job_cpus,
                                 bool every, Settled& out) const {
  if (!j.several) {
    act_on_process(p, j, i, j.processes.front(), 0, job_cpus, want, want, every, out);
    return;
  }
  const int nproc = static_cast<int>(j.processes.size());
  const std::vector<int> shares = rank_shares(want, nproc);
  const std::vector<CpuSet> slices = split_cpus(job_cpus, shares);
  out.job_allocation[j.id] = want;
  out.job_cpus[j.id] = job_cpus;
  for (int k = 0; k < nproc; ++k) {
    const auto kk = static_cast<std::size_t>(k);
    act_on_process(p, j, i, j.processes[kk], k, slices[kk], shares[kk], want, every, out);
  }
}

// A new action at the end of `out`, with room for one per process made at the first (scratch_processes_,
// counted by classify): a decision pays for one allocation or none (no actions), never for growth.
ProcessAction& DecisionCore::new_action(Settled& out) const {
  if (out.processes.empty()) out.processes.reserve(scratch_processes_);
  return out.processes.emplace_back();
}

// One process's action; `cpus` and `count` are its part of the job's `want`.
void DecisionCore::act_on_process(const Proposal& p, const CoreJob& j, std::size_t i, const CoreProcess& proc, int k,
                                  const CpuSet& cpus, int count, int want, bool every, Settled& out) const {
  static const std::string kNoReason;
  const policy::Allocation* a = scratch_alloc_[i];
  const std::string& reason = a != nullptr ? a->reason : kNoReason;
  // Without placement a job of its own keeps its CPU set, which is its process's (CoreJob::cpus).
  const bool same_cpus = (!machine_.place_cpus && !j.several) || cpus == proc.cpus;
  const bool moved = !same_cpus || count != proc.allocation;
  const std::string& state = a != nullptr ? a->state : proc.state;
  const bool restated = a != nullptr && a->state != proc.state;
  const bool resumed = scratch_resuming_[i] != 0 && !proc.runnable;
  std::string why;  // words for a reader only (SettleContext::every_process)
  if (every && moved) {
    why = !reason.empty() ? reason : "placement";
    if (j.several) why += fmt::format(" (rank {}: {} of the job's {})", k, count, want);
  } else if (every && restated && !proc.state.empty()) {
    // A state change without a new allocation (e.g. PDPA's INC waiting for CPUs) is a decision too.
    why = !reason.empty() ? reason : proc.state + " → " + state;
  } else if (every && p.event == policy::Event::report && p.subject == j.id && !reason.empty()) {
    why = reason;  // e.g. a report ignored
  }
  out.changed = out.changed || moved;
  if (!every && !moved && !restated && !resumed) return;
  ProcessAction& act = new_action(out);
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
  if (every) act.reason = reason;
  act.moved = moved;
  act.why = std::move(why);
  act.listed = moved || restated || scratch_resuming_[i] != 0 || !reason.empty();
}

// The jobs that sit this decision out (stopped now or before).
void DecisionCore::act_on_stopped(const std::vector<CoreJob>& jobs, bool every, Settled& out) const {
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const CoreJob& j = jobs[i];
    if (scratch_resuming_[i] != 0 || scratch_running_[i] != 0) continue;
    const policy::Allocation* a = scratch_alloc_[i];
    for (std::size_t k = 0; k < j.processes.size(); ++k) {
      const CoreProcess& proc = j.processes[k];
      const std::string& state = a != nullptr ? a->state : proc.state;
      const bool restated = state != proc.state;
      if (!every && scratch_stopping_[i] == 0 && !restated) continue;
      ProcessAction& act = new_action(out);
      act.id = proc.id;
      act.job = j.id;
      act.several = j.several;
      act.rank = static_cast<int>(k);
      act.from = act.count = proc.allocation;
      act.cpus = proc.cpus;
      act.running = false;
      act.stopped_now = scratch_stopping_[i] != 0;
      act.state = state;
      act.restated = restated;
      if (every && a != nullptr) act.reason = a->reason;
      act.listed = act.stopped_now;
    }
  }
}

// The may_start answer (the caller's hold applied), the wake-up, and the decision-log record.
void DecisionCore::finish(const Proposal& p, const SettleContext& ctx, bool every, Settled& out) {
  const policy::Decision& d = p.decision;
  out.may_start = d.may_start;
  if (every) out.may_start_reason = d.may_start_reason;
  if (ctx.hold && out.may_start) {
    out.may_start = false;
    out.may_start_reason = *ctx.hold;
  }
  out.may_start_changed = out.may_start != ctx.may_start_before;
  if (d.wake_at) out.wake_at = wake_time(*d.wake_at, p.now);

  const policy::Event e = p.event;
  out.noteworthy = out.changed || out.may_start_changed || out.groups_changed || e == policy::Event::arrival ||
                   e == policy::Event::departure || e == policy::Event::report || e == policy::Event::param_change;
  if (!ctx.log || !out.noteworthy) return;
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

void push_history(std::vector<policy::HistoryEntry>& history, const policy::Perf& p, double now) {
  history.push_back({p.cpus, p.speedup, p.efficiency, p.iteration_s, now});
  if (history.size() > kHistoryDepth) history.erase(history.begin());
}

bool machine_shared(const policy::Snapshot& s) { return s.jobs.size() >= 2 || s.queued > 0 || s.starting > 0; }

}  // namespace cosched::rm
