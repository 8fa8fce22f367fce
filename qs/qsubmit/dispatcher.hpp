// The replay's decisions, as a pure object driven by time and observations (no clock, no processes, no
// sockets), so tests run it on fake time against a fake RM:
//   - arrivals: a job joins the queue at its submit time;
//   - selection (PDPA paper §3.2, the QS decides *which*): qs::select_next, FCFS or shortest request;
//   - admission (§4.3, the RM decides *when*): a fixed ML, or the RM's may_start answer.
//
// Asking the RM is cheap but its answer goes stale: a job we started is unknown to the RM until it registers
// (when its OpenMP runtime starts, after the program's own set-up), and the answer can change on its own
// (PDPA flips to "yes" when a job's measurement shrinks it). So an answer is used at most once, a new one is
// wanted whenever something changed or `query_interval` passed, and each question says how many of our
// started jobs the RM may not know yet (`starting`, up to `registration_grace` after each start, for
// programs that never register): the RM counts them as running, so the next job need not wait for the
// previous one's set-up.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "qs/queue_policy.hpp"

namespace cosched::qsubmit {

// Closed workloads (SWF fields 17-18): `job` arrives `think` seconds after job `after` ended.
struct Succession {
  std::int64_t job = 0;
  std::int64_t after = 0;
  double think = 0;
};

struct DispatcherConfig {
  qs::Selection selection = qs::Selection::fcfs;
  int fixed_ml = 0;                  // > 0: start while fewer run; 0: ask the RM
  double query_interval = 0.1;       // s between RM questions while a job waits
  double registration_grace = 3.0;   // s to wait for a started job to appear at the RM
};

class Dispatcher {
 public:
  // `jobs` in any order; their `submit` is the arrival time in the run.
  // Jobs named in `closed` arrive when their predecessor ends (release_successors), not at their submit.
  Dispatcher(std::vector<qs::QueuedJob> jobs, DispatcherConfig config, const std::vector<Succession>& closed = {});

  // Moves every job with submit <= now into the queue.
  void advance(double now);

  // True when the next step needs a fresh may_start answer from the RM.
  [[nodiscard]] bool wants_rm_answer(double now) const;
  // What to tell the RM with the question: started jobs not seen registered, within registration_grace.
  [[nodiscard]] int starting(double now) const;
  // The RM's answer to a question asked at `now` that said `starting_asked` jobs were being started.
  void rm_answered(bool may_start, double now, int starting_asked);

  // The job to start now, if the admission rule allows one; it counts as running from here on. Call again
  // until it returns nothing (a fixed ML can admit several at once).
  std::optional<qs::QueuedJob> start_next(double now);

  // Observations. A started job `registered` once the RM lists it; it `ended` when its process exited
  // (also for jobs that could not be started at all). `rm_changed` says the RM's allocations moved.
  void registered(std::int64_t id);
  void ended(std::int64_t id);
  void rm_changed() { changed_ = true; }
  // Closed workloads: job `id` ended at `now`; its successors arrive after their think time. Returns them,
  // with their arrival time as `submit`.
  std::vector<qs::QueuedJob> release_successors(std::int64_t id, double now);

  // When the caller should call again at the latest: the next arrival, the next RM question or the end of a
  // registration grace; +infinity when only a job's end can change anything.
  [[nodiscard]] double next_deadline(double now) const;

  [[nodiscard]] bool finished() const {
    return future_.empty() && queue_.empty() && running_.empty() && held_.empty();
  }
  [[nodiscard]] int queued() const { return static_cast<int>(queue_.size()); }
  [[nodiscard]] int running() const { return static_cast<int>(running_.size()); }
  [[nodiscard]] int done() const { return done_; }
  [[nodiscard]] int total() const { return total_; }

 private:
  struct Running {
    double started = 0;
    bool registered = false;
  };
  [[nodiscard]] bool asks_rm() const { return config_.fixed_ml == 0; }

  DispatcherConfig config_;
  std::deque<qs::QueuedJob> future_;   // not yet arrived, by submit time
  std::map<std::int64_t, std::vector<std::pair<qs::QueuedJob, double>>> held_;  // by predecessor: job, think
  std::vector<qs::QueuedJob> queue_;   // arrived, in arrival order
  std::map<std::int64_t, Running> running_;
  std::optional<bool> answer_;         // the RM's latest may_start, until used or outdated
  int answered_starting_ = 0;          // starting() when it was asked: the answer counted that many
  double last_question_ = -1e300;
  bool changed_ = true;                // something happened since the last answer
  int done_ = 0;
  int total_ = 0;
};

}  // namespace cosched::qsubmit
