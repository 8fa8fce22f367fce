// The Dispatcher on fake time against a fake RM: arrivals, FCFS and shortest-request selection, a fixed
// ML, and the RM-driven ML (say which started jobs the RM may not know yet, use an answer once, re-ask on
// change and on a timer).
#include <gtest/gtest.h>

#include <cmath>

#include "dispatcher.hpp"

namespace qsub = cosched::qsubmit;
namespace qs = cosched::qs;

namespace {

std::vector<qs::QueuedJob> jobs(std::initializer_list<qs::QueuedJob> list) { return list; }

// Starts everything admitted at `now`; returns the ids in start order.
std::vector<std::int64_t> start_all(qsub::Dispatcher& d, double now) {
  std::vector<std::int64_t> out;
  while (auto j = d.start_next(now)) out.push_back(j->id);
  return out;
}

// A fake RM: a may_start flag the test sets; counts the questions and keeps the last `starting` asked with.
struct FakeRm {
  bool may_start = false;
  int questions = 0;
  int starting = -1;
  // One turn of the replay loop's RM part at `now`.
  void serve(qsub::Dispatcher& d, double now) {
    if (d.wants_rm_answer(now)) {
      ++questions;
      starting = d.starting(now);
      d.rm_answered(may_start, now, starting);
    }
  }
};

qsub::DispatcherConfig fixed_ml(int ml, qs::Selection sel = qs::Selection::fcfs) {
  qsub::DispatcherConfig c;
  c.fixed_ml = ml;
  c.selection = sel;
  return c;
}

}  // namespace

TEST(Dispatcher, JobsArriveAtTheirSubmitTime) {
  qsub::Dispatcher d(jobs({{2, 5.0, 1}, {1, 1.0, 1}}), fixed_ml(1));
  d.advance(0.5);
  EXPECT_EQ(d.queued(), 0);
  EXPECT_DOUBLE_EQ(d.next_deadline(0.5), 1.0) << "sleep until the first arrival";
  d.advance(1.0);
  EXPECT_EQ(d.queued(), 1);
  EXPECT_EQ(start_all(d, 1.0), (std::vector<std::int64_t>{1}));
  EXPECT_DOUBLE_EQ(d.next_deadline(1.0), 5.0);
  d.advance(6.0);
  EXPECT_EQ(start_all(d, 6.0), std::vector<std::int64_t>{}) << "ML 1 is full";
  d.ended(1);
  EXPECT_EQ(start_all(d, 6.5), (std::vector<std::int64_t>{2}));
  d.ended(2);
  EXPECT_TRUE(d.finished());
  EXPECT_EQ(d.done(), 2);
}

TEST(Dispatcher, FixedMlAdmitsSeveralAtOnceInFcfsOrder) {
  qsub::Dispatcher d(jobs({{1, 0, 4}, {2, 0, 1}, {3, 0, 2}, {4, 0, 1}}), fixed_ml(3));
  d.advance(0);
  EXPECT_EQ(start_all(d, 0), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(d.running(), 3);
  EXPECT_EQ(d.queued(), 1);
  EXPECT_FALSE(d.wants_rm_answer(0)) << "a fixed ML never asks the RM";
}

TEST(Dispatcher, ShortestRequestFirst) {
  qsub::Dispatcher d(jobs({{1, 0, 4}, {2, 0, 2}, {3, 0, 1}, {4, 0, 2}}), fixed_ml(1, qs::Selection::shortest_request));
  d.advance(0);
  std::vector<std::int64_t> order;
  for (int i = 0; i < 4; ++i) {
    auto started = start_all(d, i);
    ASSERT_EQ(started.size(), 1U);
    order.push_back(started[0]);
    d.ended(started[0]);
  }
  EXPECT_EQ(order, (std::vector<std::int64_t>{3, 2, 4, 1})) << "ties go to the earlier submit, then the lower id";
}

TEST(Dispatcher, EmptyMachineAcceptsWithoutAsking) {
  FakeRm rm;
  qsub::Dispatcher d(jobs({{1, 0, 2}}), qsub::DispatcherConfig{});
  d.advance(0);
  rm.serve(d, 0);
  EXPECT_EQ(rm.questions, 0);
  EXPECT_EQ(start_all(d, 0), (std::vector<std::int64_t>{1}));
}

TEST(Dispatcher, AsksWithTheJobsTheRmMayNotKnowYet) {
  FakeRm rm;
  rm.may_start = true;
  qsub::Dispatcher d(jobs({{1, 0, 2}, {2, 0, 2}, {3, 0, 2}}), qsub::DispatcherConfig{});
  d.advance(0);
  EXPECT_EQ(start_all(d, 0), (std::vector<std::int64_t>{1})) << "one job per answer, and job 1 needs none";
  // Job 1 has not registered yet: the question counts it, so the RM can answer without waiting for it.
  rm.serve(d, 0.01);
  EXPECT_EQ(rm.questions, 1);
  EXPECT_EQ(rm.starting, 1);
  EXPECT_EQ(start_all(d, 0.01), (std::vector<std::int64_t>{2})) << "the yes admits exactly one job";
  rm.may_start = false;
  rm.serve(d, 0.02);
  EXPECT_EQ(rm.questions, 2) << "a start is a change: ask at once";
  EXPECT_EQ(rm.starting, 2);
  EXPECT_EQ(start_all(d, 0.02), std::vector<std::int64_t>{});
  d.registered(1);
  rm.serve(d, 0.03);
  EXPECT_EQ(rm.questions, 3) << "a registration is a change";
  EXPECT_EQ(rm.starting, 1) << "job 2 is not at the RM yet";
  rm.may_start = true;
  d.registered(2);
  rm.serve(d, 0.04);
  EXPECT_EQ(rm.starting, 0);
  EXPECT_EQ(start_all(d, 0.04), (std::vector<std::int64_t>{3}));
}

TEST(Dispatcher, AnAnswerCountingOtherStartingJobsIsNotUsed) {
  FakeRm rm;
  rm.may_start = true;
  qsub::DispatcherConfig c;
  c.registration_grace = 2.0;
  qsub::Dispatcher d(jobs({{1, 0, 2}, {2, 0, 2}}), c);
  d.advance(0);
  start_all(d, 0);
  rm.serve(d, 1.5);
  EXPECT_EQ(rm.starting, 1);
  // The answer counted job 1 as starting; at 2.0 its grace is over and it no longer counts: ask again.
  EXPECT_EQ(start_all(d, 2.0), std::vector<std::int64_t>{});
  EXPECT_TRUE(d.wants_rm_answer(2.0));
}

TEST(Dispatcher, ANoIsAskedAgainOnChangeOrAfterTheInterval) {
  FakeRm rm;
  qsub::Dispatcher d(jobs({{1, 0, 2}, {2, 1.0, 2}}), qsub::DispatcherConfig{});
  d.advance(0);
  start_all(d, 0);
  d.registered(1);
  d.advance(1.0);
  rm.serve(d, 1.0);
  EXPECT_EQ(rm.questions, 1);
  EXPECT_EQ(start_all(d, 1.0), std::vector<std::int64_t>{}) << "the RM said no: job 2 waits";
  rm.serve(d, 1.05);
  EXPECT_EQ(rm.questions, 1) << "nothing changed and 100 ms have not passed";
  EXPECT_NEAR(d.next_deadline(1.05), 1.1, 1e-9);
  rm.serve(d, 1.1);
  EXPECT_EQ(rm.questions, 2) << "at least every query_interval while a job waits";
  // PDPA measured job 1 and shrank it: the allocation moved, the answer may have too.
  rm.may_start = true;
  d.rm_changed();
  rm.serve(d, 1.12);
  EXPECT_EQ(rm.questions, 3);
  EXPECT_EQ(start_all(d, 1.12), (std::vector<std::int64_t>{2})) << "the second job starts while the first runs";
  EXPECT_EQ(d.running(), 2);
}

TEST(Dispatcher, AJobThatNeverRegistersStopsCountingAsStartingAfterTheGrace) {
  FakeRm rm;
  qsub::DispatcherConfig c;
  c.registration_grace = 2.0;
  qsub::Dispatcher d(jobs({{1, 0, 1}, {2, 0, 1}}), c);
  d.advance(0);
  start_all(d, 0);
  rm.serve(d, 1.0);
  EXPECT_EQ(rm.questions, 1);
  EXPECT_EQ(rm.starting, 1);
  EXPECT_EQ(start_all(d, 1.0), std::vector<std::int64_t>{}) << "the RM said no";
  EXPECT_DOUBLE_EQ(d.next_deadline(1.0), 1.1) << "ask again after query_interval";
  rm.serve(d, 1.95);
  EXPECT_EQ(rm.questions, 2);
  EXPECT_DOUBLE_EQ(d.next_deadline(1.96), 2.0) << "or when the grace ends, if sooner";
  rm.may_start = true;
  rm.serve(d, 2.0);
  EXPECT_EQ(rm.starting, 0);
  EXPECT_EQ(start_all(d, 2.0), (std::vector<std::int64_t>{2}));
}

TEST(Dispatcher, AnEndRefreshesTheAnswer) {
  FakeRm rm;
  qsub::Dispatcher d(jobs({{1, 0, 2}, {2, 0, 2}, {3, 0, 2}}), qsub::DispatcherConfig{});
  d.advance(0);
  start_all(d, 0);
  d.registered(1);
  rm.may_start = true;
  rm.serve(d, 0.01);
  start_all(d, 0.01);  // job 2
  d.registered(2);
  rm.may_start = false;
  rm.serve(d, 0.02);
  EXPECT_EQ(start_all(d, 0.02), std::vector<std::int64_t>{});
  d.ended(1);
  EXPECT_TRUE(d.wants_rm_answer(0.03)) << "an end is a change: ask at once";
  rm.may_start = true;
  rm.serve(d, 0.03);
  EXPECT_EQ(start_all(d, 0.03), (std::vector<std::int64_t>{3}));
  EXPECT_TRUE(std::isinf(d.next_deadline(0.03))) << "nothing waits: only an end can change anything";
}

TEST(Dispatcher, ClosedJobsArriveWhenTheirPredecessorEndsPlusThinkTime) {
  // Job 2 follows job 1 with a think time of 5 s; its own submit time (1 s) does not count.
  qsub::Dispatcher d(jobs({{1, 0, 2}, {2, 1, 2}}), fixed_ml(4), {{2, 1, 5.0}});
  d.advance(1);
  EXPECT_EQ(start_all(d, 1), (std::vector<std::int64_t>{1}));
  d.advance(20);
  EXPECT_TRUE(start_all(d, 20).empty());
  EXPECT_FALSE(d.finished());
  d.ended(1);
  auto released = d.release_successors(1, 30);
  ASSERT_EQ(released.size(), 1U);
  EXPECT_EQ(released[0].id, 2);
  EXPECT_DOUBLE_EQ(released[0].submit, 35);
  EXPECT_DOUBLE_EQ(d.next_deadline(30), 35);
  d.advance(34);
  EXPECT_TRUE(start_all(d, 34).empty());
  d.advance(35);
  EXPECT_EQ(start_all(d, 35), (std::vector<std::int64_t>{2}));
  d.ended(2);
  EXPECT_TRUE(d.finished());
}
