// The resource manager's side of the simulation: the snapshot kept up to date, the daemon's decision core
// (rm/decision/decision_core.hpp: the policy's call, its answer made safe, stops, placement, the decision
// log) and its actions applied to the modelled jobs; reports delivered at quantum ticks as Daemon::poll_reports
// delivers them: the measured speedup and the waiting-time efficiency, one chosen by rm::choose_estimate.
#include <algorithm>
#include <map>

#include "cosched/log.hpp"
#include "rm/job/estimate.hpp"
#include "rm/decision/decision_core.hpp"
#include "sim/simulator.hpp"

namespace cosched::sim {

namespace {
constexpr int kBadAllocationWarnings = 10;
}  // namespace

policy::JobView* Simulator::view_of(policy::JobId id) {
  auto pos = std::lower_bound(snapshot_.jobs.begin(), snapshot_.jobs.end(), id,
                              [](const policy::JobView& v, policy::JobId x) { return v.id < x; });
  return pos != snapshot_.jobs.end() && pos->id == id ? &*pos : nullptr;
}

bool Simulator::flush_job_update(policy::JobId id) {
  auto it = running_.find(id);
  if (it == running_.end() || !it->second.update_pending) return false;
  Slot& slot = it->second;
  slot.update_pending = false;
  const policy::JobView* v = view_of(id);
  if (!slot.job->started()) {
    slot.job->start(now_, v->allocation);
    if (!v->runnable) slot.job->reallocate(now_, v->allocation, false);
  } else {
    // Called even when the net count is unchanged: the CPU set moved (reallocation cost, runnable changes).
    slot.job->reallocate(now_, v->allocation, v->runnable);
    ++stats_.reallocations;
  }
  note_report(id, slot);  // an iteration ending at this instant may have published one
  schedule(id);
  return true;
}

void Simulator::flush_job_updates() {
  // Admission order, so that the event sequence does not depend on which decision touched a job first.
  std::sort(pending_updates_.begin(), pending_updates_.end());
  for (policy::JobId id : pending_updates_) flush_job_update(id);
  pending_updates_.clear();
}

bool Simulator::note_analyzing(Slot& slot) {
  // As the daemon notes it from the arena each quantum (Daemon::note_team); here at the iteration boundary
  // where the phase moves, so that skipping idle ticks changes nothing.
  const auto& analyzer = slot.job->analyzer();
  const auto phase = analyzer.phase();
  if (phase != sa::Phase::baseline && phase != sa::Phase::measuring) {
    slot.analyzing_since = -1;
    return false;
  }
  if (slot.analyzing_since < 0) {
    slot.analyzing_since = now_;
    slot.iterations_at_analyzing = analyzer.iterations();
  }
  return true;
}

// As Daemon::follow_sharing: under --baseline auto a job's baseline waits while it is alone, that is unless
// another job runs or one waits for admission.
void Simulator::follow_sharing() {
  if (config_.analyzer.baseline != "shared") return;
  const bool sharing = rm::machine_shared(snapshot_);
  for (auto& [id, slot] : running_) {
    if (slot.job->set_baseline_waits(now_, !sharing)) schedule(id);
  }
}

// As Daemon::follow_check: under --baseline auto (here "shared": the policy uses speedups) a job runs its
// baseline only where the policy says the check could change a decision (Policy::speedup_check_matters), asked
// with the view the daemon builds for it; --baseline always and never are what they say. The job hears of it as
// libruntime passes the RM's rm_no_baseline flag on: sa::Analyzer::set_baseline_enabled.
void Simulator::follow_check(policy::JobId id, Slot& slot, const policy::JobView& v) {
  if (config_.analyzer.baseline != "shared") return;
  policy::JobView q;
  q.id = v.id;
  q.request = v.request;
  q.allocation = v.allocation;
  q.perf = v.perf;
  const bool wanted = policy_.speedup_check_matters(q);
  if (wanted == slot.baseline_check) return;
  slot.baseline_check = wanted;
  if (slot.job->set_baseline_enabled(now_, wanted)) schedule(id);
}

// The job table as the decision core takes it: every simulated job is a job of its own, on any CPU. Kept in
// core_jobs_, in the snapshot's order, and changed where the snapshot changes (admit, depart, apply), so that
// a decision costs nothing for the jobs it leaves alone: cosched-sim makes millions of them.
rm::CoreJob Simulator::core_job_of(const policy::JobView& v, const Slot& slot) {
  rm::CoreJob j;
  j.id = v.id;
  j.allocation = v.allocation;
  j.cpus = slot.cpus;
  // A catalog `team: fixed` job weighs one per CPU like any other, as under the daemon's default
  // --cpu-share job, where a job's share of a CPU is one job's whatever its threads (and as cpu_sharing.cpp
  // models it).
  j.processes.push_back({v.id, v.allocation, slot.cpus, v.runnable, slot.state});
  return j;
}

rm::CoreJob& Simulator::core_job(policy::JobId id) {
  auto pos = std::lower_bound(core_jobs_.begin(), core_jobs_.end(), id,
                              [](const rm::CoreJob& j, policy::JobId x) { return j.id < x; });
  return *pos;  // every running job has one (admit)
}

bool Simulator::decide(policy::Event event, policy::JobId subject) {
  snapshot_.now = now_;
  snapshot_.event = event;
  snapshot_.explain = static_cast<bool>(decisions_);
  snapshot_.subject = subject;
  ++stats_.decisions;
  // The queuing system's count of waiting jobs, as qsubmit tells the daemon with each may_start question.
  snapshot_.queued = static_cast<int>(queue_.size());
  follow_sharing();
  // As the daemon reads each job's phase from its arena: whether a report is on its way, and since when.
  for (auto& v : snapshot_.jobs) {
    auto it = running_.find(v.id);
    if (it == running_.end()) continue;
    Slot& slot = it->second;
    note_analyzing(slot);
    v.analyzing = slot.analyzing_since >= 0;
    v.analyzing_since = slot.analyzing_since;
    v.analyzed_iterations = v.analyzing ? slot.job->analyzer().iterations() - slot.iterations_at_analyzing : 0;
  }
  std::vector<rm::CoreJob>& jobs = core_jobs_;
  // A rotating policy's state can move on while no allocation changes (gang re-runs the row of a job that
  // just arrived, and every other row ages a step): that is no fixed point, the daemon's next tick decides
  // otherwise. Its rotation key before and after tells.
  policy_key_before_.clear();
  const bool keyed = policy_.rotation_key(policy_key_before_);
  const rm::Proposal p = core_.propose(policy_, snapshot_, jobs);
  // Every stop happens: a simulated job is never caught writing its report (Daemon::stop_unit).
  for (const auto& [id, why] : p.stops) {
    for (rm::CoreJob& j : jobs) {
      if (j.id != id) continue;
      for (rm::CoreProcess& proc : j.processes) proc.runnable = false;
    }
  }
  // Without a decision log the simulator needs only the processes whose action is not none.
  const rm::Settled settled =
      core_.settle(p, jobs, {std::string(policy_.name()), rm_may_start_, std::nullopt, decisions_ != nullptr, false});
  const bool changed = apply(p.decision, settled);
  if (changed || !keyed) return changed;
  policy_key_after_.clear();
  policy_.rotation_key(policy_key_after_);
  return policy_key_after_ != policy_key_before_;
}

bool Simulator::apply(const policy::Decision& d, const rm::Settled& s) {
  for (const std::string& e : s.errors) {
    if (stats_.bad_allocations++ < kBadAllocationWarnings) COSCHED_ERROR(sim, "{}", e);
  }
  // A progress-rate interval is sampled with one set of partners (as the daemon's).
  for (policy::JobId id : s.partners_changed) running_.at(id).mark_open = false;
  groups_ = d.co_schedule;

  for (const rm::ProcessAction& a : s.processes) {
    Slot& slot = running_.at(a.id);
    slot.state = a.state;
    rm::CoreJob& c = core_job(a.id);
    c.processes.front().state = a.state;
    if (!a.moved && !a.stopped_now && !a.resumed) continue;
    policy::JobView& v = *view_of(a.id);
    slot.mark_open = false;  // a sensing interval is one allocation, run all along
    v.allocation = a.count;
    v.runnable = a.running;
    slot.cpus = a.cpus;
    c.allocation = c.processes.front().allocation = a.count;
    c.cpus = c.processes.front().cpus = a.cpus;
    c.processes.front().runnable = a.running;
    recorder_.allocation(slot.index, now_, v.runnable ? v.allocation : 0,
                         records_cpu_lists() ? slot.cpus.to_vector() : std::vector<int>{});
    // The job itself hears of it at the end of this instant (flush_job_updates), net of any later change at
    // the same time: a program reads its allocation at its next parallel region, not between two decisions.
    if (!slot.update_pending) {
      slot.update_pending = true;
      pending_updates_.push_back(a.id);
    }
  }

  rm_may_start_ = s.may_start;
  if (s.wake_at) {
    // As the daemon's timerfd: one pending wake-up, the latest request replaces it (rm::wake_time).
    ++timer_generation_;
    const double at = *s.wake_at;
    events_.push(at, EventKind::timer, -1, timer_generation_);
    // A wake-up a hair after a grid tick (a policy's time plus a quantum, summed in floats) meets that tick
    // first: the daemon ticks every quantum, and its policy takes that tick for the wake-up (a policy's
    // times compare with a slack). So that tick runs here too, needed or not (pushed twice, it runs once).
    const auto k = static_cast<std::int64_t>(std::floor(at / config_.quantum_s));
    const double grid = static_cast<double>(k) * config_.quantum_s;
    if (k > last_tick_ && grid >= now_ && at - grid <= kTickSnapS) events_.push(grid, EventKind::quantum, k);
  }
  if (decisions_ && s.noteworthy) log_decision(s);
  return s.changed || s.may_start_changed;
}

void Simulator::on_tick(std::int64_t index) {
  tick_scheduled_ = false;
  tick_at_now_ = true;
  last_tick_ = index;
  ++stats_.ticks;
  sample_sensors();  // Daemon::on_quantum: first, before anything moves
  // Daemon::on_quantum → poll_reports: read every fresh report first, then one decide(report) per job, in
  // admission order; then decide(quantum).
  std::sort(pending_reports_.begin(), pending_reports_.end());
  std::vector<policy::JobId> fresh;
  for (policy::JobId id : pending_reports_) {
    auto it = running_.find(id);
    if (it == running_.end()) continue;
    Slot& slot = it->second;
    slot.report_pending = false;
    // Daemon::read_estimates: the job's two estimates, each kept until a newer valid one comes. A report that
    // fails the RM's range checks is never used (the last good one stays, under the new seq).
    bool moved = false;
    const std::uint64_t seq = slot.job->analyzer().report_seq();
    if (seq != slot.delivered_seq) {
      slot.delivered_seq = seq;
      policy::Perf p;
      if (slot.job->analyzer().perf(p)) {
        slot.measured = p;
        slot.measured_below = rm::measured_below_waiting(p, slot.waiting) ? slot.measured_below + 1 : 0;
        moved = true;
      } else {
        slot.measured.seq = seq;
      }
    }
    if (const rm::WaitingEstimate& w = slot.job->waiting(); w.seq != slot.waiting.seq) {
      slot.waiting = w;
      moved = moved || w.valid;
    }
    policy::JobView* v = view_of(id);
    if (v == nullptr || !moved) continue;
    // Daemon::poll_reports: one estimate for the policy (rm/job/estimate.hpp), the daemon's own choice.
    const rm::ChosenEstimate c = rm::choose_estimate(slot.measured, slot.waiting, v->allocation, slot.measured_below);
    if (!c.perf.valid || c.perf.seq == v->perf.seq) continue;
    v->perf = c.perf;
    COSCHED_DEBUG(sim, "t={:.3f} job {}: {} speedup {:.3f} efficiency {:.3f} at {} CPUs (allocation {})", now_, id,
                  policy::to_string(c.perf.kind), c.perf.speedup, c.perf.efficiency, c.perf.cpus, v->allocation);
    follow_check(id, slot, *v);
    rm::push_history(v->history, c.perf, now_);
    fresh.push_back(id);
  }
  pending_reports_.clear();
  for (policy::JobId id : fresh) {
    if (running_.count(id) == 0) continue;
    ++stats_.reports;
    decide(policy::Event::report, id);
  }
  // Another tick is needed only if this one's quantum decision was not a fixed point.
  tick_needed_ = decide(policy::Event::quantum, -1);
  open_sensor_intervals();
}

void Simulator::log_decision(const rm::Settled& s) {
  // The core's record, as the daemon writes it, plus each job's SWF number.
  nlohmann::json entry = s.record;
  nlohmann::json jobs = nlohmann::json::array();
  for (std::size_t i = 0; i < s.entries.size(); ++i) {
    nlohmann::json e = s.entries[i];
    e["swf"] = jobs_[running_.at(s.processes[i].id).index].number;
    jobs.push_back(std::move(e));
  }
  entry["jobs"] = std::move(jobs);
  decisions_(entry);
}

}  // namespace cosched::sim
