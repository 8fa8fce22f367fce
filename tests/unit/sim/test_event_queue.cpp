// The event queue's total order: time, then kind, then insertion (sim/event_queue.hpp).
#include <gtest/gtest.h>

#include <vector>

#include "sim/event_queue.hpp"

using cosched::sim::EventKind;
using cosched::sim::EventQueue;

TEST(EventQueue, EarlierTimeFirst) {
  EventQueue q;
  q.push(3.0, EventKind::arrival, 3);
  q.push(1.0, EventKind::arrival, 1);
  q.push(2.0, EventKind::arrival, 2);
  std::vector<std::int64_t> order;
  while (!q.empty()) order.push_back(q.pop().subject);
  EXPECT_EQ(order, (std::vector<std::int64_t>{1, 2, 3}));
}

TEST(EventQueue, SameTimeFollowsKindOrder) {
  // Completions free CPUs before arrivals look at the machine; the quantum tick sees everything of t.
  EventQueue q;
  q.push(5.0, EventKind::resume, 6);
  q.push(5.0, EventKind::quantum, 5);
  q.push(5.0, EventKind::timer, 4);
  q.push(5.0, EventKind::arrival, 3);
  q.push(5.0, EventKind::iteration_end, 2);
  q.push(5.0, EventKind::completion, 1);
  std::vector<EventKind> kinds;
  while (!q.empty()) kinds.push_back(q.pop().kind);
  EXPECT_EQ(kinds, (std::vector<EventKind>{EventKind::completion, EventKind::iteration_end, EventKind::arrival,
                                           EventKind::timer, EventKind::quantum, EventKind::resume}));
}

TEST(EventQueue, FullTiesAreFirstInFirstOut) {
  EventQueue q;
  for (int i = 0; i < 100; ++i) q.push(1.0, EventKind::iteration_end, i);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(q.pop().subject, i);
}

TEST(EventQueue, InterleavedPushPopKeepsOrderAndCountsPushes) {
  EventQueue q;
  q.push(2.0, EventKind::arrival, 1);
  q.push(1.0, EventKind::completion, 2, 7);
  auto e = q.pop();
  EXPECT_EQ(e.subject, 2);
  EXPECT_EQ(e.generation, 7u);
  q.push(1.5, EventKind::arrival, 3);
  EXPECT_EQ(q.pop().subject, 3);
  EXPECT_EQ(q.pop().subject, 1);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.pushed(), 3u);
}

TEST(EventQueue, DroppingEventsKeepsTheOthersInOrder) {
  // Subject k at time 99 - k; dropping the odd subjects leaves the even ones, popped from subject 98 down, and
  // an event pushed after the drop takes its place among them.
  EventQueue q;
  for (int k = 0; k < 100; ++k) q.push(99.0 - k, k % 2 ? EventKind::completion : EventKind::arrival, k);
  q.drop_if([](const cosched::sim::SimEvent& e) { return e.subject % 2 == 1; });
  EXPECT_EQ(q.size(), 50u);
  q.push(50.5, EventKind::timer, 1000);
  std::vector<std::int64_t> order;
  while (!q.empty()) order.push_back(q.pop().subject);
  std::vector<std::int64_t> want;
  for (int k = 98; k >= 50; k -= 2) want.push_back(k);
  want.push_back(1000);  // t = 50.5 comes after subject 50 (t = 49) and before 48 (t = 51)
  for (int k = 48; k >= 0; k -= 2) want.push_back(k);
  EXPECT_EQ(order, want);
  EXPECT_EQ(q.pushed(), 101u);
}
