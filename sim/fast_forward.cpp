// Fast-forward of steady rotations (docs/simulator.md, "Steady rotations"). Under time sharing the daemon
// decides every quantum, and between two arrivals a workload log can hold hours of quanta that only repeat
// the same turn of the rotation: the same decisions, the same CPUs, the same work done by each job. The
// engine notes the whole state at each quantum tick (the policy's rotation_key, the snapshot, the placement,
// each job's state less its work and clock) and, once a turn of K ticks has repeated exactly twice with
// nothing but ticks in between, moves on by as many whole turns as fit before anything else can happen: the
// next arrival or timer, or a job within two turns of its end or of the end of an iteration it observes.
// Each job gets n times its work of the last turn, the recorder n copies of the turn (or of its totals),
// the policy skip_rotation(n·K). What follows is simulated tick by tick again, so a job ends, and a job
// arrives, exactly as without the skip.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "policies/rotation_key.hpp"
#include "sim/simulator.hpp"

namespace cosched::sim {

namespace {
// Our choices: a turn longer than this many quanta is never looked for (gang's rows and the DSS windows of
// the logs tried are far shorter); a job this many turns or fewer from its own next event is simulated to
// it, tick by tick.
constexpr std::size_t kMaxTurnQuanta = 256;
constexpr std::size_t kMarks = 2 * kMaxTurnQuanta + 1;
constexpr double kEndMarginTurns = 2;

// Whether two turns' amounts (work, CPU·s) are the same up to float rounding: each is a sum over at most a
// slice per quantum of rate × a difference of two clock readings, each off by an ulp of the clock (a log's
// clock reaches 10^7 s), and the running total it came from is off by its own rounding. Our tolerance:
// 16 ulps of the clock per quantum at the turn's mean rate, plus 1e-12 of the total.
bool same_amount(double a, double b, double total, double now, std::size_t turn, double quantum) {
  const double rate = std::max(std::abs(a), std::abs(b)) / quantum;
  const double clock = 16 * std::numeric_limits<double>::epsilon() * std::max(now, 1.0) * static_cast<double>(turn);
  return std::abs(a - b) <= rate * clock + 1e-12 * std::abs(total);
}
}  // namespace

bool Simulator::rotation_key(std::string& key) const {
  key.clear();
  if (!policy_.rotation_key(key)) return false;
  {
    policy::KeyWriter w(key);
    w << queue_.size() << rm_may_start_ << snapshot_.jobs.size();
  }
  for (const policy::JobView& v : snapshot_.jobs) {
    const Slot& slot = running_.at(v.id);
    {
      policy::KeyWriter w(key);
      w << v.id << v.allocation << v.runnable << v.perf.seq << recorder_.position(slot.index, now_).open;
      for (std::uint64_t word : slot.cpus.words()) w << word;
      w << ~std::uint64_t{0};  // ends the CPU set's words (an all-ones word ends none)
      w.text(slot.state);
    }
    slot.job->append_key(key, now_);
  }
  return true;
}

void Simulator::note_rotation() {
  // Only a time-sharing policy that can say its state repeats, on a machine whose every change comes from
  // the decisions themselves (no sensors sampling, no memory contention), with nothing written per
  // decision, and jobs whose own futures are their work until their next event.
  bool quiet = !sensing_on_ && !contention_on_ && !decisions_ && pending_reports_.empty() && tick_needed_ &&
               !running_.empty();
  for (const auto& [id, slot] : running_) quiet = quiet && slot.job->quiet() && !slot.report_pending;
  if (marks_.size() < kMarks) marks_.resize(kMarks);
  const bool follows = marks_held_ > 0 && marks_[(marks_next_ + kMarks - 1) % kMarks].tick + 1 == last_tick_;
  if (!quiet || !follows) marks_held_ = 0;
  if (!quiet) return;

  // The ring's oldest slot is reused (its buffers kept: a mark is made at every tick).
  RotationMark& m = marks_[marks_next_];
  if (!rotation_key(m.key)) {
    marks_held_ = 0;
    return;
  }
  m.tick = last_tick_;
  m.hash = std::hash<std::string>{}(m.key);
  m.events = stats_.events;
  m.decisions = stats_.decisions;
  m.done.clear();
  m.held.clear();
  for (const policy::JobView& v : snapshot_.jobs) {
    const Slot& slot = running_.at(v.id);
    m.done.push_back(slot.job->progress().done_at(now_));
    m.held.push_back(recorder_.position(slot.index, now_));
  }
  m.delivered = recorder_.delivered_at(now_);
  marks_next_ = (marks_next_ + 1) % kMarks;
  marks_held_ = std::min(marks_held_ + 1, kMarks);

  // The latest earlier tick in the same state gives the turn's length; it must have held for two turns.
  for (std::size_t turn = 1; 2 * turn < marks_held_ && turn <= kMaxTurnQuanta; ++turn) {
    const RotationMark& before = mark_back(turn);
    if (before.hash != m.hash || before.key != m.key) continue;
    if (fast_forward(turn)) marks_held_ = 0;
    return;
  }
}

const Simulator::RotationMark& Simulator::mark_back(std::size_t ticks) const {
  return marks_[(marks_next_ + kMarks - 1 - ticks) % kMarks];
}

bool Simulator::fast_forward(std::size_t turn) {
  const RotationMark& m2 = mark_back(0);
  const RotationMark& m1 = mark_back(turn);
  const RotationMark& m0 = mark_back(2 * turn);
  if (m0.hash != m2.hash || m0.key != m2.key) return false;
  // Nothing but the turn's ticks happened in either turn: no report, no job event, no timer, no arrival.
  if (m1.events - m0.events != turn || m2.events - m1.events != turn) return false;
  if (m1.decisions - m0.decisions != turn || m2.decisions - m1.decisions != turn) return false;
  const std::size_t jobs = snapshot_.jobs.size();
  const double period = static_cast<double>(turn) * config_.quantum_s;
  std::vector<double> work(jobs);
  double turns = std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < jobs; ++j) {
    const double w1 = m1.done[j] - m0.done[j];
    const double w2 = m2.done[j] - m1.done[j];
    if (!same_amount(w1, w2, m2.done[j], now_, turn, config_.quantum_s)) return false;
    // The recorder saw the same turn twice: as many segments (while kept), and as many CPU·s.
    const Recorder::Position &h0 = m0.held[j], &h1 = m1.held[j], &h2 = m2.held[j];
    if (h0.segments_kept != h2.segments_kept || h1.segments_kept != h2.segments_kept) return false;  // dropped since
    if (h2.segments - h1.segments != h1.segments - h0.segments || h0.open != h2.open || h1.open != h2.open) return false;
    if (!same_amount(h1.cpu_seconds - h0.cpu_seconds, h2.cpu_seconds - h1.cpu_seconds, h2.cpu_seconds, now_, turn,
                     config_.quantum_s)) {
      return false;
    }
    work[j] = (m2.done[j] - m0.done[j]) / 2;
    if (work[j] > 0) {
      const RunningJob& job = *running_.at(snapshot_.jobs[j].id).job;
      turns = std::min(turns, (job.next_own_work() - m2.done[j]) / work[j] - kEndMarginTurns);
    }
  }
  // Anything queued other than the ticks and the jobs' own events (those move with the skip) bounds it.
  // A sampler's estimate due now came in neither turn: each turn restarts its warm-up, and it moves too.
  double horizon = std::numeric_limits<double>::infinity();
  events_.for_each([&](const SimEvent& e) {
    if (e.kind == EventKind::quantum || e.kind == EventKind::completion || e.kind == EventKind::iteration_end ||
        e.kind == EventKind::waiting || stale(e)) {
      return;
    }
    horizon = std::min(horizon, e.t);
  });
  if (std::isfinite(horizon)) turns = std::min(turns, std::floor((horizon - now_) / period) - 1);
  if (!(turns >= 1)) return false;
  const auto n = static_cast<std::uint64_t>(std::min(std::floor(turns), 1e15));

  // Move on by n turns: on the daemon's tick grid, as every tick is.
  const std::int64_t tick = last_tick_ + static_cast<std::int64_t>(n * turn);
  const double then = static_cast<double>(tick) * config_.quantum_s;
  const double skipped = then - now_;
  for (std::size_t j = 0; j < jobs; ++j) {
    Slot& slot = running_.at(snapshot_.jobs[j].id);
    slot.job->skip_rotation(skipped, static_cast<double>(n) * work[j]);
    recorder_.repeat(slot.index, m1.held[j], now_, period, n, skipped);
  }
  recorder_.repeat_machine(m1.delivered, now_, n, skipped);
  policy_.skip_rotation(n * turn);
  now_ = then;
  last_tick_ = tick;
  events_.drop_if([this](const SimEvent& e) { return e.kind == EventKind::quantum || stale(e); });
  tick_scheduled_ = false;
  tick_needed_ = true;
  for (const auto& [id, slot] : running_) schedule(id);
  schedule_tick();
  stats_.skipped_quanta += n * turn;
  ++stats_.fast_forwards;
  return true;
}

}  // namespace cosched::sim
