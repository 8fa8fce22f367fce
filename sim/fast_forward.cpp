// Fast-forward of steady rotations (docs/simulator.md, "Steady rotations"). Under time sharing the daemon
// decides every quantum, and between two arrivals a workload log can hold hours of quanta that only repeat
// the same turn of the rotation: the same decisions, the same CPUs, the same work done by each job. The
// engine notes the whole state at each quantum tick (the policy's rotation_key, the snapshot, the placement,
// each job's state less its work and clock) and, once the state of K ticks ago recurs with nothing but ticks
// in between, moves on by as many whole turns as fit before anything else can happen: the next arrival or
// timer, or the end of a job or of an iteration it observes.
// Each job gets n times its work of the last turn, the recorder n copies of the turn (or of its totals),
// the policy skip_rotation(n·K). What follows is simulated tick by tick again, so a job ends, and a job
// arrives, exactly as without the skip.
// The jobs' CPU sets are in the state only where something reads them: the recorder's CPU lists, or CPUs that
// jobs share (cpu_sharing.cpp). Otherwise a turn can repeat on other CPUs: placement keeps a running job where
// it is and puts a resumed one where CPUs are free, so under a sliding window the sets rarely come back to
// what they were, though every count and every job's work do. The skip then leaves the jobs on the CPUs of
// the turn it repeats, where every quantum's run may have put them elsewhere: with no CPU shared in the turn,
// that changes no job's work.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string_view>

#include "policies/rotation_key.hpp"
#include "sim/simulator.hpp"

namespace cosched::sim {

namespace {
// Our choices: a turn longer than this many quanta is never looked for (gang's rows and the DSS windows of
// the logs tried are far shorter). A skip ends at least this much of a turn before the next event it can
// see coming (a job's end or observed iteration end, in its work; an arrival or timer, in time), and what
// is left is simulated tick by tick: a fiftieth of a turn (a quantum or more once a turn has 50) is still far
// above the skip's rounding, microseconds on the longest logs tried, and leaves less to tick through than
// the quarter of a turn used before (docs/simulator.md, "Steady rotations").
constexpr std::size_t kMaxTurnQuanta = 256;
constexpr std::size_t kMarks = kMaxTurnQuanta + 1;
constexpr double kMarginTurns = 0.02;
constexpr std::size_t kHashedPrefix = 64;  // our choice: past the policy keys of gang and the DSS windows
}  // namespace

bool Simulator::cpu_sets_in_key() const {
  return cpus_shared_ || records_cpu_lists();
}

bool Simulator::rotation_key(RotationMark& m) const {
  std::string& key = m.key;
  key.clear();
  if (!policy_.rotation_key(key)) return false;
  m.done.clear();
  m.held.clear();
  policy::KeyWriter w(key);  // one writer for the rest: an append to the key per 256 bytes
  const bool sets = cpu_sets_in_key();
  w << queue_.size() << rm_may_start_ << snapshot_.jobs.size() << sets;
  // The running jobs in id order, as the snapshot's (admission order): walked side by side, not looked up.
  auto it = running_.begin();
  for (const policy::JobView& v : snapshot_.jobs) {
    while (it != running_.end() && it->first < v.id) ++it;
    const Slot& slot = it != running_.end() && it->first == v.id ? it->second : running_.at(v.id);
    const Recorder::Position held = recorder_.position(slot.index, now_);
    m.done.push_back(slot.job->progress().done_at(now_));
    m.held.push_back(held);
    w << v.id << v.allocation << v.runnable << v.perf.seq << held.open;
    if (sets) {
      for (std::uint64_t word : slot.cpus.words()) w << word;
      w << ~std::uint64_t{0};  // ends the CPU set's words (an all-ones word ends none)
    }
    w.text(slot.state);
    slot.job->append_key(w, now_);
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
  if (cpus_shared_) ++shared_ticks_;
  if (marks_.size() < kMarks) marks_.resize(kMarks);
  const bool follows = marks_held_ > 0 && marks_[(marks_next_ + kMarks - 1) % kMarks].tick + 1 == last_tick_;
  if (!quiet || !follows) marks_held_ = 0;
  if (!quiet) return;

  // The ring's oldest slot is reused (its buffers kept: a mark is made at every tick).
  RotationMark& m = marks_[marks_next_];
  if (!rotation_key(m)) {
    marks_held_ = 0;
    return;
  }
  m.tick = last_tick_;
  // A filter, not the test: the key's length and its first bytes (the policy's own state, which moves at
  // every tick of a turn) rule out nearly every other tick; the whole key is compared where they match.
  m.hash = std::hash<std::string_view>{}(std::string_view(m.key).substr(0, kHashedPrefix)) ^ m.key.size();
  m.events = stats_.events;
  m.decisions = stats_.decisions;
  m.delivered = recorder_.delivered_at(now_);
  m.shared_ticks = shared_ticks_;
  marks_next_ = (marks_next_ + 1) % kMarks;
  marks_held_ = std::min(marks_held_ + 1, kMarks);

  // The latest earlier tick in the same state gives the turn's length.
  for (std::size_t turn = 1; turn < marks_held_ && turn <= kMaxTurnQuanta; ++turn) {
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
  // The state of `turn` ticks ago, which the key says is the state now: what the turn did from there, the
  // next turn does again (the key holds all that decides it, less each job's work and the clock).
  const RotationMark& m2 = mark_back(0);
  const RotationMark& m1 = mark_back(turn);
  // Nothing but the turn's ticks happened: no report, no job event, no timer, no arrival.
  if (m2.events - m1.events != turn || m2.decisions - m1.decisions != turn) return false;
  // Keys without CPU sets: no CPU shared at any tick of the turn, so where the jobs ran changed no one's work.
  if (!cpu_sets_in_key() && m2.shared_ticks != m1.shared_ticks) return false;
  const std::size_t jobs = snapshot_.jobs.size();
  const double period = static_cast<double>(turn) * config_.quantum_s;
  std::vector<double> work(jobs);
  double turns = std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < jobs; ++j) {
    // The recorder repeats the turn's segments from m1 (Recorder::repeat): none dropped since.
    const Recorder::Position &h1 = m1.held[j], &h2 = m2.held[j];
    if (h1.segments_kept != h2.segments_kept || h1.open != h2.open) return false;
    work[j] = m2.done[j] - m1.done[j];
    if (work[j] > 0) {
      const RunningJob& job = *running_.at(snapshot_.jobs[j].id).job;
      turns = std::min(turns, (job.next_own_work() - m2.done[j]) / work[j] - kMarginTurns);
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
  if (std::isfinite(horizon)) turns = std::min(turns, (horizon - now_) / period - kMarginTurns);
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
