// The event loop, the jobs' own events and the queuing system's side (qsubmit's rules from
// qs/queue_policy.hpp). The resource manager's side is in sim_rm.cpp.
#include "sim/simulator.hpp"

#include <algorithm>
#include <cmath>

#include "cosched/log.hpp"

namespace cosched::sim {

namespace {

// Each job's noise stream: from the run's seed and the job's SWF number, so it does not depend on the
// order in which jobs happen to start (splitmix64 finaliser as the mixer).
std::uint64_t job_seed(std::uint64_t seed, std::int64_t number) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (static_cast<std::uint64_t>(number) + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

Simulator::Simulator(const SimConfig& config, const std::vector<JobSpec>& jobs, policy::Policy& policy)
    : config_(config), jobs_(jobs), policy_(policy),
      recorder_(jobs, config.segment_bytes, config.cpus) {
  cpu_order_ = config_.cpu_order;
  core_of_ = config_.core_of;
  if (cpu_order_.size() != static_cast<std::size_t>(std::max(config_.cpus, 1)) || core_of_.size() != cpu_order_.size()) {
    cpu_order_.resize(static_cast<std::size_t>(std::max(config_.cpus, 1)));
    core_of_.resize(cpu_order_.size());
    for (std::size_t i = 0; i < cpu_order_.size(); ++i) cpu_order_[i] = core_of_[i] = static_cast<int>(i);
  }
  for (std::size_t i = 0; i < cpu_order_.size(); ++i) core_of_cpu_[cpu_order_[i]] = core_of_[i];
  core_ = rm::DecisionCore(rm::CoreMachine{config_.cpus, cpu_order_, core_of_, config_.place_cpus});
  const int cores = core_of_.empty() ? 1 : *std::max_element(core_of_.begin(), core_of_.end()) + 1;
  snapshot_.machine = policy::Machine{config_.cpus, cores, std::max(config_.packages, 1), std::max(1, config_.cpus / cores)};
  for (const auto& j : jobs_) {
    smt_on_ = smt_on_ || (j.app != nullptr && j.app->smt_sensitivity > 0 && j.app->smt_intensity >= 0);
  }
  smt_on_ = smt_on_ && cores < config_.cpus;
  snapshot_.quantum = config_.quantum_s;
  for (const auto& j : jobs_) usable_ += j.usable() ? 1 : 0;
  // Closed workloads (SWF fields 17-18): a job naming a predecessor present in the workload is released when
  // that one ends; every other job at its submit time.
  std::map<std::int64_t, std::size_t> by_number;
  for (std::size_t i = 0; i < jobs_.size(); ++i) by_number.emplace(jobs_[i].number, i);
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    if (jobs_[i].preceding >= 0 && by_number.count(jobs_[i].preceding) != 0 && jobs_[i].preceding != jobs_[i].number) {
      successors_[jobs_[i].preceding].push_back(i);
    } else {
      open_.push_back(i);
    }
  }
  snapshot_.machine.mem_bandwidth = config_.memory.machine_bytes_per_s;
  contention_on_ = config_.memory.calibrated() || smt_on_;
  // Sensing costs a tick every quantum: only when the run models memory at all (--mem-bandwidth given), or
  // when the policy learns from progress rates (the co-scheduling policies report what they learned).
  rates_on_ = policy_.pairs().has_value();
  sensing_on_ = (config_.sensor != "none" && config_.memory.machine_bytes_per_s > 0) || rates_on_;
  sensors_ = make_sensors(config_.sensor, config_.memory);
  // The daemon samples every quantum; so must the simulator while anything can be sampled.
  if (sensing_on_) config_.every_quantum = true;
  // cosched-rm's --baseline auto: jobs measure a baseline only when the policy uses speedups, and only while
  // they share the machine ("shared": Daemon::follow_sharing, Simulator::follow_sharing).
  if (config_.analyzer.baseline == "auto") config_.analyzer.baseline = policy_.uses_speedup() ? "shared" : "never";
}

Simulator::~Simulator() = default;

void Simulator::run(const ProgressFn& progress) {
  // As cosched-rm at start-up: one decision on the empty machine, so may-start has an answer at once.
  decide(policy::Event::quantum, -1);
  // Estimates nothing reads: the jobs run without the SelfAnalyzer's and the sampler's events. Their reports
  // would reach decide(report), which changes nothing under such a policy; with baseline "never" neither
  // changes what a job runs at (docs/simulator.md, "Estimates nothing reads").
  if (!config_.model_unread_estimates && !decisions_ && config_.analyzer.baseline == "never" &&
      !policy_.uses_speedup() && !policy_.reacts_to_reports()) {
    config_.analyzer.enabled = false;
  }
  if (!open_.empty()) events_.push(std::max(jobs_[open_[0]].submit, 0.0), EventKind::arrival, 0);
  for (;;) {
    // Time is about to move on (or nothing is left at this instant): the jobs get the RM's last word.
    if (events_.empty() || events_.top().t > now_) {
      if (!pending_updates_.empty()) {
        flush_job_updates();
        update_contention();  // the running set or its teams may have changed
        update_cpu_sharing();
      }
      if (tick_at_now_) {
        tick_at_now_ = false;
        if (config_.fast_forward) note_rotation();
      }
    }
    if (events_.empty()) break;
    if (events_.size() > compact_at_) compact_events();
    SimEvent e = events_.pop();
    handle(e);
    if (progress && (stats_.events & 0xffff) == 0) progress(now_, finished_, jobs_.size());
  }
  for (const auto& [id, slot] : running_) stats_.baseline_iterations += slot.job->baseline_iterations();
  if (!running_.empty() || !queue_.empty()) {
    COSCHED_WARN(sim, "simulation stopped at t={:.3f} s with {} job(s) running and {} queued: nothing left could "
                      "make progress (a policy that stops jobs without a wake_at?)",
                 now_, running_.size(), queue_.size());
  }
  if (progress) progress(now_, finished_, jobs_.size());
}

bool Simulator::stale(const SimEvent& e) const {
  if (e.kind == EventKind::arrival) return false;
  // A tick pushed twice (for a timer, decide(), and as the next tick) runs once.
  if (e.kind == EventKind::quantum) return e.subject <= last_tick_;
  if (e.kind == EventKind::timer) return e.generation != timer_generation_;
  auto it = running_.find(e.subject);
  if (it == running_.end()) return true;  // a job that ended never runs again
  const RunningJob& j = *it->second.job;
  return (e.kind == EventKind::waiting ? j.waiting_generation() : j.generation()) != e.generation;
}

void Simulator::handle(const SimEvent& e) {
  now_ = std::max(now_, e.t);
  // A cancelled event does nothing, not even the flush below: so dropping it unpopped (compact_events) changes
  // nothing either.
  if (stale(e)) {
    ++stats_.stale_events;
    return;
  }
  const bool job_event = e.kind == EventKind::completion || e.kind == EventKind::iteration_end ||
                         e.kind == EventKind::waiting || e.kind == EventKind::resume;
  // A job's own event sees the allocation decided for it earlier at this instant, which may replace the event.
  if (job_event && flush_job_update(e.subject)) {
    if (stale(e)) {
      ++stats_.stale_events;
      return;
    }
  }
  ++stats_.events;
  switch (e.kind) {
    case EventKind::arrival:
      if (e.subject >= 0) {
        // The open jobs' chain: subject indexes open_; the next one is pushed as this one arrives.
        const auto k = static_cast<std::size_t>(e.subject);
        if (k + 1 < open_.size()) {
          events_.push(std::max(jobs_[open_[k + 1]].submit, now_), EventKind::arrival, static_cast<std::int64_t>(k + 1));
        }
        on_arrival(open_[k]);
      } else {
        on_arrival(static_cast<std::size_t>(-e.subject - 1));  // a closed job released by its predecessor
      }
      break;
    case EventKind::completion:
      depart(e.subject);
      break;
    case EventKind::iteration_end: {
      Slot& s = running_.at(e.subject);
      s.job->on_boundary(now_);
      // A job still waiting for its first report counts its iterations towards a bound a policy may apply
      // (PDPA's unmeasured_iterations): the next tick must look at it.
      const policy::JobView* v = view_of(e.subject);
      if (note_analyzing(s) && v != nullptr && !v->perf.valid) tick_needed_ = true;
      note_report(e.subject, s);
      schedule(e.subject);
      break;
    }
    case EventKind::waiting: {
      // The job's sampler publishes its waiting-time estimate; the RM reads it at its next tick.
      Slot& s = running_.at(e.subject);
      s.job->on_waiting(now_);
      ++stats_.waiting_estimates;
      note_report(e.subject, s);
      break;
    }
    case EventKind::resume:
      running_.at(e.subject).job->on_resume(now_);
      schedule(e.subject);
      break;
    case EventKind::timer:
      tick_needed_ |= decide(policy::Event::timer, -1);
      break;
    case EventKind::quantum:
      on_tick(e.subject);
      break;
  }
  try_start();
  update_contention();  // a team may have changed inside a job (its SelfAnalyzer's phases)
  update_cpu_sharing();
  schedule_tick();
}

void Simulator::on_arrival(std::size_t index) {
  const JobSpec& j = jobs_[index];
  if (j.preceding >= 0 && successors_.count(j.preceding) != 0) recorder_.submitted(index, now_);
  if (!j.usable()) {
    release_successors(index);  // a chain goes on past a job that cannot run
    return;  // reported as never started (Recorder), never silently dropped
  }
  queue_.push_back(qs::QueuedJob{static_cast<std::int64_t>(index), j.submit, j.request});
  stats_.max_queue = std::max(stats_.max_queue, queue_.size());
  tick_needed_ = true;  // the queue's length is in the snapshot (Snapshot::queued)
  note_ml();
}

void Simulator::try_start() {
  // qsubmit's admission loop: while the rule allows, the selected job starts; each start is an arrival for
  // the RM, whose decision answers may-start for the next one.
  while (!queue_.empty() &&
         qs::may_start(static_cast<int>(running_.size()), config_.fixed_ml, rm_may_start_)) {
    const int pick = qs::select_next(queue_, config_.selection);
    const auto index = static_cast<std::size_t>(queue_[static_cast<std::size_t>(pick)].id);
    queue_.erase(queue_.begin() + pick);
    admit(index);
  }
}

void Simulator::admit(std::size_t index) {
  const JobSpec& spec = jobs_[index];
  const policy::JobId id = next_id_++;
  Slot slot;
  slot.index = index;
  slot.job = std::make_unique<RunningJob>(spec, config_.analyzer, config_.timing, job_seed(config_.seed, spec.number));
  running_.emplace(id, std::move(slot));
  stats_.max_running = std::max(stats_.max_running, static_cast<int>(running_.size()));

  policy::JobView v;
  v.id = id;
  v.request = spec.request;
  v.allocation = 0;  // the arrival decision gives the first allocation (apply() starts the job)
  v.arrival = now_;
  core_jobs_.push_back(core_job_of(v, running_.at(id)));
  snapshot_.jobs.push_back(std::move(v));
  recorder_.started(index, now_);
  note_ml();
  tick_needed_ |= decide(policy::Event::arrival, id);
}

void Simulator::release_successors(std::size_t index) {
  auto it = successors_.find(jobs_[index].number);
  if (it == successors_.end()) return;
  for (std::size_t next : it->second) {
    events_.push(now_ + jobs_[next].think, EventKind::arrival, -static_cast<std::int64_t>(next) - 1);
  }
}

void Simulator::depart(policy::JobId id) {
  auto it = running_.find(id);
  if (it == running_.end()) return;
  recorder_.ended(it->second.index, now_);
  stats_.baseline_iterations += it->second.job->baseline_iterations();
  release_successors(it->second.index);
  ++finished_;
  running_.erase(it);
  sensors_.forget(id);
  auto pos = std::lower_bound(snapshot_.jobs.begin(), snapshot_.jobs.end(), id,
                              [](const policy::JobView& v, policy::JobId x) { return v.id < x; });
  if (pos != snapshot_.jobs.end() && pos->id == id) {
    core_jobs_.erase(core_jobs_.begin() + (pos - snapshot_.jobs.begin()));
    snapshot_.jobs.erase(pos);
  }
  policy_.forget(id);
  note_ml();
  tick_needed_ |= decide(policy::Event::departure, id);
}

void Simulator::compact_events() {
  // Every reallocation pushes a job's next events again and leaves the old ones to be dropped when popped; under
  // time sharing (a reallocation every quantum) they would outnumber the live ones many times over and make every
  // push and pop dearer. Dropping them is invisible: the queue's order is total, and a stale event does nothing.
  events_.drop_if([this](const SimEvent& e) { return stale(e); });
  compact_at_ = std::max(kMinCompactAt, 2 * events_.size());  // our choice: amortised O(1) per push
}

void Simulator::schedule(policy::JobId id) {
  Slot& slot = running_.at(id);
  const RunningJob& job = *slot.job;
  RunningJob::Next next = job.next_event();
  if (next.kind == EventKind::completion && std::isfinite(next.t)) {
    // A job that ends with its time slice ends at the quantum tick, before it (the queue's order at one
    // instant), whichever way float sums of its work have rounded. Our tolerance, a thousandth of a quantum
    // (100 µs by default), is above the drift of a skipped rotation: n turns of work added at once round
    // otherwise than n turns simulated one by one, by up to a few µs on a 1,000-job log (docs/simulator.md,
    // "Steady rotations"); and below anything a real RM sees of a job's end.
    const double tick = std::round(next.t / config_.quantum_s) * config_.quantum_s;
    if (std::abs(next.t - tick) <= kEndSnapQuanta * config_.quantum_s) {
      next.t = tick;
    } else {
      // Elsewhere on a microsecond grid (our choice: far below what a real RM sees of a job's end). Jobs of
      // the same work on the same CPUs end together, not a rounding apart in an order the float sums chose:
      // otherwise the RM decides between their ends, and how it does depends on how the work was added up
      // (seen with --closed workloads of identical jobs, with the skip of steady rotations and without).
      next.t = std::round(next.t / kEndGridS) * kEndGridS;
    }
  }
  if (std::isfinite(next.t)) events_.push(std::max(next.t, now_), next.kind, id, job.generation());
  if (std::isfinite(job.resume_at())) events_.push(std::max(job.resume_at(), now_), EventKind::resume, id, job.generation());
  // The sampler's event has its own generation, which moves only when its time does: once per warm-up,
  // not once per iteration.
  if (std::isfinite(job.waiting_due()) && slot.waiting_pushed != job.waiting_generation()) {
    slot.waiting_pushed = job.waiting_generation();
    events_.push(std::max(job.waiting_due(), now_), EventKind::waiting, id, job.waiting_generation());
  }
}

void Simulator::note_report(policy::JobId id, Slot& slot) {
  // A report the RM has not read yet waits for the next tick (Daemon::poll_reports runs each quantum).
  stats_.iterations = stats_.iterations - slot.observed + slot.job->iterations_observed();
  slot.observed = slot.job->iterations_observed();
  if (slot.report_pending) return;
  if (slot.job->analyzer().report_seq() == slot.delivered_seq && slot.job->waiting().seq == slot.waiting.seq) return;
  slot.report_pending = true;
  pending_reports_.push_back(id);
}

void Simulator::schedule_tick() {
  if (tick_scheduled_) return;
  const bool wanted = tick_needed_ || !pending_reports_.empty() ||
                      (config_.every_quantum && (!running_.empty() || !queue_.empty()));
  if (!wanted) return;
  // The daemon's ticks lie on a fixed grid k × quantum. The next one is the first grid point at or after
  // now that has not run yet: a tick at this very instant comes after the current event (the tie order of
  // event_queue.hpp), exactly as when the engine had scheduled it earlier for another reason.
  auto k = static_cast<std::int64_t>(std::ceil(now_ / config_.quantum_s));
  if (static_cast<double>(k) * config_.quantum_s < now_) ++k;
  k = std::max(k, last_tick_ + 1);
  events_.push(static_cast<double>(k) * config_.quantum_s, EventKind::quantum, k);
  tick_scheduled_ = true;
}

void Simulator::note_ml() {
  recorder_.ml(now_, static_cast<int>(running_.size()), static_cast<int>(queue_.size()));
}

const char* to_string(EventKind k) noexcept {
  switch (k) {
    case EventKind::completion: return "completion";
    case EventKind::iteration_end: return "iteration_end";
    case EventKind::waiting: return "waiting";
    case EventKind::arrival: return "arrival";
    case EventKind::timer: return "timer";
    case EventKind::quantum: return "quantum";
    case EventKind::resume: return "resume";
  }
  return "?";
}

}  // namespace cosched::sim
