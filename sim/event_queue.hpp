// The discrete-event core of cosched-sim: a time-ordered queue of events with a total, documented order, so a
// run is a pure function of its inputs (same seed, same jobs.csv byte for byte). It knows nothing about jobs,
// policies or models; sim/simulator.cpp gives the events their meaning.
//
// Order: earlier time first; at the same time by kind (the enum order below); then by insertion (FIFO).
// The kind order encodes what happens "at the same instant" and why:
//   completion     a job that ends at t frees its CPUs before anything else looks at the machine at t
//   iteration_end  a report published at t is known to the tick at t
//   waiting        a waiting-time estimate published at t (sim/waiting_model.hpp): known to the tick at t too
//   arrival        a job submitted at t meets the machine after t's completions
//   timer          Decision::wake_at, after the facts of t are in
//   quantum        the RM's periodic tick (delivers reports, then Event::quantum), last: it sees all of t
//   resume         a job starts sampling iterations again (no decision depends on it at t)
//
// Cancellation is lazy: an event carries the generation of its job at push time, and the engine drops a
// popped event whose generation is stale. That keeps push/pop O(log n) with no search; drop_if clears out
// the stale ones when they pile up (the order is total, so the heap's layout never shows).
#pragma once

#include <cstdint>
#include <algorithm>
#include <vector>

namespace cosched::sim {

enum class EventKind : std::uint8_t { completion = 0, iteration_end, waiting, arrival, timer, quantum, resume };

const char* to_string(EventKind k) noexcept;

struct SimEvent {
  double t = 0;
  EventKind kind = EventKind::quantum;
  std::int64_t subject = -1;     // job (policy JobId) or workload index for arrivals; -1 for none
  std::uint64_t generation = 0;  // the subject's generation when pushed (lazy cancellation)
  std::uint64_t seq = 0;         // insertion order: the last tie-breaker
};

// "a comes after b": the comparator the std heap algorithms want for a min-queue.
struct EventAfter {
  bool operator()(const SimEvent& a, const SimEvent& b) const noexcept {
    if (a.t != b.t) return a.t > b.t;
    if (a.kind != b.kind) return a.kind > b.kind;
    return a.seq > b.seq;
  }
};

class EventQueue {
 public:
  void push(double t, EventKind kind, std::int64_t subject = -1, std::uint64_t generation = 0) {
    heap_.push_back(SimEvent{t, kind, subject, generation, next_seq_++});
    std::push_heap(heap_.begin(), heap_.end(), EventAfter{});
  }
  [[nodiscard]] bool empty() const noexcept { return heap_.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return heap_.size(); }
  [[nodiscard]] const SimEvent& top() const { return heap_.front(); }
  SimEvent pop() {
    std::pop_heap(heap_.begin(), heap_.end(), EventAfter{});
    SimEvent e = heap_.back();
    heap_.pop_back();
    return e;
  }
  // Removes every event `drop` says yes to, in O(n).
  template <class Pred>
  void drop_if(Pred drop) {
    std::erase_if(heap_, drop);
    std::make_heap(heap_.begin(), heap_.end(), EventAfter{});
  }
  // Calls f on every queued event, in no particular order.
  template <class F>
  void for_each(F f) const {
    for (const SimEvent& e : heap_) f(e);
  }
  [[nodiscard]] std::uint64_t pushed() const noexcept { return next_seq_; }

 private:
  std::vector<SimEvent> heap_;  // a binary heap under EventAfter
  std::uint64_t next_seq_ = 0;
};

}  // namespace cosched::sim
