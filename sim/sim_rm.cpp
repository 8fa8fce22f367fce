// The resource manager's side of the simulation, mirroring rm/daemon/daemon_jobs.cpp call for call: build the
// snapshot, call the policy, make its answer safe (every allocation in [1, cpus]), place CPUs with the
// daemon's own rm::place(), apply, and deliver reports at quantum ticks (Daemon::poll_reports): the measured
// speedup and the waiting-time efficiency, one of them chosen by the daemon's rm::choose_estimate.
#include <algorithm>
#include <map>

#include "cosched/log.hpp"
#include "rm/job/estimate.hpp"
#include "rm/placement/placement.hpp"
#include "sim/simulator.hpp"

namespace cosched::sim {

namespace {
constexpr std::size_t kHistoryDepth = 16;  // as the daemon keeps (rm/daemon/daemon_jobs.cpp)
constexpr int kBadAllocationWarnings = 10;
}  // namespace

policy::JobView* Simulator::view_of(policy::JobId id) {
  auto pos = std::lower_bound(snapshot_.jobs.begin(), snapshot_.jobs.end(), id,
                              [](const policy::JobView& v, policy::JobId x) { return v.id < x; });
  return pos != snapshot_.jobs.end() && pos->id == id ? &*pos : nullptr;
}

void Simulator::flush_job_update(policy::JobId id) {
  auto it = running_.find(id);
  if (it == running_.end() || !it->second.update_pending) return;
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
  const bool sharing = running_.size() >= 2 || !queue_.empty();
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

bool Simulator::decide(policy::Event event, policy::JobId subject) {
  follow_sharing();
  snapshot_.now = now_;
  snapshot_.event = event;
  snapshot_.subject = subject;
  ++stats_.decisions;
  // The queuing system's count of waiting jobs, as qsubmit tells the daemon with each may_start question.
  snapshot_.queued = static_cast<int>(queue_.size());
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
  const policy::Decision d = policy_.decide(snapshot_);
  return apply(d, event, subject);
}

bool Simulator::apply(const policy::Decision& d, policy::Event event, policy::JobId subject) {
  const int ncpu = config_.cpus;
  const std::size_t n = snapshot_.jobs.size();
  std::vector<int> want(n);
  std::vector<char> runnable(n);
  bool counts_changed = false;
  for (std::size_t i = 0; i < n; ++i) {
    const policy::JobView& v = snapshot_.jobs[i];
    const policy::Allocation* a = i < d.jobs.size() && d.jobs[i].id == v.id ? &d.jobs[i] : d.find(v.id);
    int w = a != nullptr ? a->cpus : 0;
    if (a == nullptr || w < 1 || w > ncpu) {
      // The daemon's rule: a missing or out-of-range allocation keeps the job where it is.
      if (stats_.bad_allocations++ < kBadAllocationWarnings) {
        COSCHED_ERROR(sim, "{} gave job {} {} CPUs (must be 1..{}); keeping {}", policy_.name(), v.id, w, ncpu,
                      std::max(v.allocation, 1));
      }
      w = std::clamp(std::max(v.allocation, 1), 1, ncpu);
    }
    want[i] = w;
    runnable[i] = a != nullptr ? a->runnable : 1;
    counts_changed |= w != v.allocation;
  }

  // With every count and group unchanged rm::place() keeps every CPU set as it is, so it only runs after a
  // change. Co-scheduled groups are placed as the daemon places them (rm::place_with_groups): only the
  // runnable jobs are grouped; stopped ones keep CPUs the groups may use.
  const bool groups_changed = d.co_schedule != groups_;
  std::map<policy::JobId, CpuSet> placed;
  if (config_.place_cpus && (counts_changed || groups_changed)) {
    std::vector<rm::PlaceRequest> requests;
    requests.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      requests.push_back({snapshot_.jobs[i].id, want[i], running_.at(snapshot_.jobs[i].id).cpus, {}});
    }
    placed = rm::place_with_groups(cpu_order_, core_of_, requests, d.co_schedule);
  }
  if (groups_changed) {
    // A progress-rate interval is sampled with one set of partners (as the daemon's).
    for (auto& [id, slot] : running_) slot.mark_open = false;
    groups_ = d.co_schedule;
  }

  bool changed = false;
  for (std::size_t i = 0; i < n; ++i) {
    policy::JobView& v = snapshot_.jobs[i];
    Slot& slot = running_.at(v.id);
    auto p = placed.find(v.id);
    const bool moved = want[i] != v.allocation || (runnable[i] != 0) != v.runnable ||
                       (p != placed.end() && !(p->second == slot.cpus));
    if (!moved) continue;
    changed = true;
    slot.mark_open = false;  // a sensing interval is one allocation, run all along
    v.allocation = want[i];
    v.runnable = runnable[i] != 0;
    if (p != placed.end()) slot.cpus = p->second;
    recorder_.allocation(slot.index, now_, v.runnable ? v.allocation : 0,
                         config_.place_cpus ? slot.cpus.to_vector() : std::vector<int>{});
    // The job itself hears of it at the end of this instant (flush_job_updates), net of any later change at
    // the same time: a program reads its allocation at its next parallel region, not between two decisions.
    if (!slot.update_pending) {
      slot.update_pending = true;
      pending_updates_.push_back(v.id);
    }
  }

  const bool ml_changed = d.may_start != rm_may_start_;
  rm_may_start_ = d.may_start;
  if (d.wake_at) {
    // As the daemon's timerfd: one pending wake-up, the latest request replaces it, at least 1 ms ahead.
    ++timer_generation_;
    events_.push(std::max(*d.wake_at, now_ + 0.001), EventKind::timer, -1, timer_generation_);
  }
  if (decisions_) {
    const bool noteworthy = changed || ml_changed || groups_changed || event == policy::Event::arrival ||
                            event == policy::Event::departure || event == policy::Event::report;
    if (noteworthy) log_decision(d, event, subject);
  }
  return changed || ml_changed;
}

void Simulator::on_tick(std::int64_t index) {
  tick_scheduled_ = false;
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
    v->history.push_back({c.perf.cpus, c.perf.speedup, c.perf.efficiency, c.perf.iteration_s, now_});
    if (v->history.size() > kHistoryDepth) v->history.erase(v->history.begin());
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

void Simulator::log_decision(const policy::Decision& d, policy::Event event, policy::JobId subject) {
  // The daemon's decision-log entry (rm/daemon/daemon_jobs.cpp), plus each job's SWF number.
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& v : snapshot_.jobs) {
    const Slot& slot = running_.at(v.id);
    const policy::Allocation* a = d.find(v.id);
    jobs.push_back({{"id", v.id},
                    {"swf", jobs_[slot.index].number},
                    {"allocated", v.allocation},
                    {"cpus", slot.cpus.to_string()},
                    {"state", a != nullptr ? a->state : ""},
                    {"reason", a != nullptr ? a->reason : ""}});
  }
  nlohmann::json entry = {{"t", now_},
                          {"event", policy::to_string(event)},
                          {"subject", subject},
                          {"policy", policy_.name()},
                          {"may_start", d.may_start},
                          {"may_start_reason", d.may_start_reason},
                          {"jobs", std::move(jobs)}};
  if (!d.co_schedule.empty()) entry["groups"] = d.co_schedule;
  decisions_(entry);
}

}  // namespace cosched::sim
