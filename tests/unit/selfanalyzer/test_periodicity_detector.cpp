// Dynamic Periodicity Detector: periods 1..20, hundreds of regions per step, the max_period bound, prologues,
// successive phases,
// nesting, non-periodic streams, anchors and signatures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "selfanalyzer/periodicity_detector.hpp"

namespace cosched::sa {
namespace {

using Ids = std::vector<std::uint64_t>;

// Distinct, code-address-like region ids.
Ids loop_body(int length, std::uint64_t base = 0x401000) {
  Ids ids;
  for (int i = 0; i < length; ++i) ids.push_back(base + 0x40 * static_cast<std::uint64_t>(i));
  return ids;
}

Ids repeat(const Ids& body, int times) {
  Ids out;
  for (int k = 0; k < times; ++k) out.insert(out.end(), body.begin(), body.end());
  return out;
}

Ids random_ids(int n, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  Ids out;
  for (int i = 0; i < n; ++i) out.push_back(rng() | 1);  // never equal to a loop_body id (even)
  return out;
}

Ids concat(Ids a, const Ids& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

struct Trace {
  std::vector<PeriodicityDetector::Step> steps;
  int first_lock_at = -1;  // event index where a non-zero period was first locked
};

Trace feed(PeriodicityDetector& dpd, const Ids& ids) {
  Trace trace;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    trace.steps.push_back(dpd.push(ids[i]));
    if (trace.first_lock_at < 0 && trace.steps.back().period != 0) trace.first_lock_at = static_cast<int>(i);
  }
  return trace;
}

PeriodicityDetector make_dpd(int max_period = 64) { return PeriodicityDetector(max_period, 2, 6); }

class SimplePeriod : public ::testing::TestWithParam<int> {};

TEST_P(SimplePeriod, FindsThePeriodAndMarksEveryIterationStart) {
  const int period = GetParam();
  const Ids body = loop_body(period);
  const Ids stream = repeat(body, 12);
  auto dpd = make_dpd();
  const Trace trace = feed(dpd, stream);

  EXPECT_EQ(dpd.period(), period);
  // Confirmation needs max(2·period, 6) matches after the first copy: at most 3 periods (+6 for tiny ones).
  ASSERT_GE(trace.first_lock_at, 0);
  EXPECT_LE(trace.first_lock_at, 3 * period + 6);
  // Once locked, boundaries fall exactly on the loop's first region, once per period.
  for (std::size_t i = static_cast<std::size_t>(trace.first_lock_at); i < stream.size(); ++i) {
    EXPECT_EQ(trace.steps[i].period, period) << "event " << i;
    EXPECT_EQ(trace.steps[i].boundary, i % static_cast<std::size_t>(period) == 0) << "event " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Periods, SimplePeriod, ::testing::Values(1, 2, 3, 7, 20, 64));

TEST(PeriodicityDetector, PeriodLongerThanMaxPeriodIsNotFound) {
  auto dpd = make_dpd(16);
  feed(dpd, repeat(loop_body(17), 20));
  EXPECT_EQ(dpd.period(), 0);
}

TEST(PeriodicityDetector, ToleratesARandomPrologue) {
  const Ids body = loop_body(7);
  const Ids stream = concat(random_ids(41, 7), repeat(body, 10));
  auto dpd = make_dpd();
  const Trace trace = feed(dpd, stream);
  EXPECT_EQ(dpd.period(), 7);
  EXPECT_GE(trace.first_lock_at, 41);
  for (std::size_t i = 0; i < stream.size(); ++i) {
    if (trace.steps[i].boundary) {
      EXPECT_EQ(stream[i], body[0]) << "event " << i;
    }
  }
}

TEST(PeriodicityDetector, DetectsASecondIterativePhaseAfterTheFirst) {
  const Ids first = loop_body(3, 0x401000);
  const Ids second = loop_body(5, 0x402000);
  const Ids stream = concat(repeat(first, 20), repeat(second, 20));
  auto dpd = make_dpd();
  const Trace trace = feed(dpd, stream);

  EXPECT_EQ(trace.steps[59].period, 3);  // last event of phase one
  EXPECT_EQ(dpd.period(), 5);
  int changes_after_phase_one = 0;
  for (std::size_t i = 60; i < stream.size(); ++i) changes_after_phase_one += trace.steps[i].lock_changed;
  EXPECT_EQ(changes_after_phase_one, 2);  // lost 3, locked 5: no flapping in between
}

TEST(PeriodicityDetector, NestedLoopsReportTheOutermostPeriod) {
  // A (B C)^4 D repeated: the inner period 2 may be seen first, the outer 10 must win and stay.
  const std::uint64_t a = 0xa0, b = 0xb0, c = 0xc0, d = 0xd0;
  const Ids body = {a, b, c, b, c, b, c, b, c, d};
  const Ids stream = repeat(body, 15);
  auto dpd = make_dpd();
  const Trace trace = feed(dpd, stream);
  EXPECT_EQ(dpd.period(), 10);
  for (std::size_t i = 30; i < stream.size(); ++i) {
    EXPECT_EQ(trace.steps[i].period, 10) << "event " << i;
    EXPECT_EQ(trace.steps[i].boundary, stream[i] == a) << "event " << i;
  }
}

TEST(PeriodicityDetector, TwoLevelsOfNesting) {
  // ((A (B C)^3)^2 D): inner 2, middle 7, outer 15.
  const Ids middle = {1, 2, 3, 2, 3, 2, 3};
  Ids body = repeat(middle, 2);
  body.push_back(4);
  auto dpd = make_dpd();
  feed(dpd, concat(random_ids(10, 3), repeat(body, 10)));
  EXPECT_EQ(dpd.period(), 15);
}

// One time step of a hydrodynamics proxy application: about 490 outermost regions, most of them inside inner
// loops of periods 1, 2, 12, 14 and 26 (the loops a detector limited to 128 locked onto and lost).
Ids hydro_step() {
  Ids step = {0x9000, 0x9040};                                  // step prologue
  step = concat(step, repeat({0xa000}, 40));                     // period 1
  step = concat(step, repeat({0xb000, 0xb040}, 30));             // period 2
  step.push_back(0x9080);
  step = concat(step, repeat(loop_body(12, 0xc000), 8));         // period 12
  step = concat(step, repeat(loop_body(14, 0xd000), 7));         // period 14
  step.push_back(0x90c0);
  step = concat(step, repeat(loop_body(26, 0xe000), 5));         // period 26
  step = concat(step, repeat({0xa000}, 61));                     // the period-1 loop again
  step.push_back(0x9100);
  return step;
}

TEST(PeriodicityDetector, FindsATimeStepOfHundredsOfRegionsAcrossItsInnerLoops) {
  const Ids step = hydro_step();
  ASSERT_EQ(step.size(), 490U);
  const Ids stream = concat(random_ids(50, 7), repeat(step, 8));
  PeriodicityDetector dpd(1024, 2, 6);  // the default max_period
  const Trace trace = feed(dpd, stream);
  EXPECT_EQ(dpd.period(), 490);
  // The inner loops lock first; the step is locked within 4 steps of the loop (one to see a window recur,
  // two to confirm), and for good: one boundary per step from then on.
  std::size_t locked_at = 0;
  while (locked_at < stream.size() && trace.steps[locked_at].period != 490) ++locked_at;
  EXPECT_LE(locked_at, 50U + 4 * 490);
  std::vector<std::size_t> boundaries;
  for (std::size_t i = locked_at; i < stream.size(); ++i) {
    EXPECT_EQ(trace.steps[i].period, 490) << "event " << i;
    if (trace.steps[i].boundary) boundaries.push_back(i);
  }
  ASSERT_GE(boundaries.size(), 4U);
  for (std::size_t k = 1; k < boundaries.size(); ++k) EXPECT_EQ(boundaries[k] - boundaries[k - 1], 490U);
}

TEST(PeriodicityDetector, LongestPeriodIsFoundWithTheLargestSetting) {
  const Ids body = loop_body(5000, 0x800000);
  PeriodicityDetector dpd(8192, 2, 6);
  feed(dpd, repeat(body, 4));
  EXPECT_EQ(dpd.period(), 5000);
}

TEST(PeriodicityDetector, NonPeriodicStreamsNeverLock) {
  {
    auto dpd = make_dpd();
    const Trace trace = feed(dpd, random_ids(5000, 11));
    EXPECT_EQ(trace.first_lock_at, -1);
  }
  {
    // Random draws from 40 distinct regions: repeats are frequent, periodicity is not.
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> pick(0, 39);
    Ids stream;
    for (int i = 0; i < 5000; ++i) stream.push_back(0x1000 + static_cast<std::uint64_t>(pick(rng)));
    auto dpd = make_dpd();
    const Trace trace = feed(dpd, stream);
    EXPECT_EQ(trace.first_lock_at, -1);
  }
}

TEST(PeriodicityDetector, OneOddRegionBreaksTheLockOnlyBriefly) {
  const Ids body = loop_body(4);
  Ids stream = repeat(body, 10);
  stream.push_back(0x9999);  // e.g. a checkpoint region once
  stream = concat(stream, repeat(body, 10));
  auto dpd = make_dpd();
  const Trace trace = feed(dpd, stream);
  EXPECT_EQ(trace.steps[39].period, 4);
  EXPECT_EQ(trace.steps[40].period, 0);
  EXPECT_EQ(dpd.period(), 4);
}

TEST(PeriodicityDetector, SignatureIdentifiesTheLoopWhateverTheAnchor) {
  const Ids body = loop_body(5);
  auto plain = make_dpd();
  feed(plain, repeat(body, 6));
  auto shifted = make_dpd();
  feed(shifted, concat(random_ids(3, 1), concat(Ids(body.begin() + 2, body.end()), repeat(body, 6))));
  auto other = make_dpd();
  Ids changed_body = body;
  changed_body[3] = 0x7777;
  feed(other, repeat(changed_body, 6));

  ASSERT_EQ(plain.period(), 5);
  ASSERT_EQ(shifted.period(), 5);
  ASSERT_EQ(other.period(), 5);
  EXPECT_EQ(plain.signature(), shifted.signature());
  EXPECT_NE(plain.signature(), other.signature());
}

TEST(PeriodicityDetector, ResetForgetsEverything) {
  auto dpd = make_dpd();
  feed(dpd, repeat(loop_body(3), 10));
  ASSERT_EQ(dpd.period(), 3);
  dpd.reset();
  EXPECT_EQ(dpd.period(), 0);
  EXPECT_EQ(dpd.signature(), 0U);
  const Trace trace = feed(dpd, repeat(loop_body(2), 2));  // too short to confirm anything
  EXPECT_EQ(trace.first_lock_at, -1);
}

// The steady-state shortcut (header, "Steady state") must not change what the detector says: the same
// streams through a detector that never takes it give the same period, boundaries and lock changes at
// every event, and the same signature; so does a detector asked steady_peek() before each event, advanced by
// steady_advance() when it accepts the event (libcosched's fast path) and pushed otherwise. Streams: long
// steady loops broken by an odd region, by a shifted phase, by another loop, by noise, with inner loops, at
// several max_period settings.
TEST(PeriodicityDetector, SteadyStateShortcutChangesNothing) {
  std::mt19937 rng(7);
  for (int max_period : {8, 64, 1024}) {
    for (int round = 0; round < 12; ++round) {
      Ids stream;
      for (int phase = 0; phase < 6; ++phase) {
        const int len = 1 + static_cast<int>(rng() % static_cast<unsigned>(std::min(max_period, 300)));
        Ids body = loop_body(len, 0x401000 + 0x100000 * static_cast<std::uint64_t>(rng() % 3));
        if (len > 6 && rng() % 2 == 0) {  // an inner loop: B C repeated inside the body
          const Ids inner = loop_body(2, 0x900000);
          body.insert(body.begin() + 2, inner.begin(), inner.end());
          body.insert(body.begin() + 2, inner.begin(), inner.end());
        }
        const int times = 2 + static_cast<int>(rng() % 40) + 2 * max_period / static_cast<int>(body.size());
        stream = concat(stream, repeat(body, times));
        switch (rng() % 4) {
          case 0: stream.push_back(0x9999); break;                                  // one odd region
          case 1: stream = concat(stream, random_ids(1 + rng() % 50, rng())); break;  // noise
          case 2: stream = concat(stream, Ids(body.begin(), body.begin() + static_cast<long>(body.size() / 2))); break;
          default: break;                                                              // straight into the next
        }
      }
      PeriodicityDetector fast(max_period, 2, 6, true);
      PeriodicityDetector reference(max_period, 2, 6, false);
      PeriodicityDetector peeked(max_period, 2, 6, true);  // libcosched's fast path: steady_peek first
      for (std::size_t i = 0; i < stream.size(); ++i) {
        const auto a = fast.push(stream[i]);
        const auto b = reference.push(stream[i]);
        const int next = peeked.steady_peek(stream[i]);
        if (next >= 0) {
          ASSERT_EQ(peeked.steady_advance(), next == 1) << "event " << i;
          ASSERT_EQ(a.boundary, next == 1) << "max_period " << max_period << " round " << round << " event " << i;
          ASSERT_EQ(a.period, peeked.period());
          ASSERT_FALSE(a.lock_changed);
        } else {
          const auto c = peeked.push(stream[i]);
          ASSERT_EQ(a.boundary, c.boundary) << "max_period " << max_period << " round " << round << " event " << i;
          ASSERT_EQ(a.period, c.period);
          ASSERT_EQ(a.lock_changed, c.lock_changed);
        }
        ASSERT_EQ(a.period, b.period) << "max_period " << max_period << " round " << round << " event " << i;
        ASSERT_EQ(a.boundary, b.boundary) << "max_period " << max_period << " round " << round << " event " << i;
        ASSERT_EQ(a.lock_changed, b.lock_changed) << "max_period " << max_period << " round " << round << " event " << i;
        ASSERT_EQ(fast.signature(), reference.signature()) << "event " << i;
      }
    }
  }
}

// A loop that runs long enough to reach the steady state, then a different loop: found as before.
TEST(PeriodicityDetector, LeavesTheSteadyStateForANewLoop) {
  auto dpd = make_dpd(64);
  const Trace first = feed(dpd, repeat(loop_body(7), 200));  // 1400 events: far past saturation
  ASSERT_EQ(dpd.period(), 7);
  int boundaries = 0;
  for (std::size_t i = 700; i < first.steps.size(); ++i) boundaries += first.steps[i].boundary ? 1 : 0;
  EXPECT_EQ(boundaries, 100);  // one per iteration in the steady state too
  feed(dpd, repeat(loop_body(5, 0x700000), 60));
  EXPECT_EQ(dpd.period(), 5);
}

}  // namespace
}  // namespace cosched::sa
