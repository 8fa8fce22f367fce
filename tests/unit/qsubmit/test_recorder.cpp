// Segment recording: repeated samples merge, changes split, stops leave gaps, the end closes; the ML keeps
// only changes.
#include <gtest/gtest.h>

#include "recorder.hpp"

namespace qsub = cosched::qsubmit;

TEST(AllocationRecorder, IdenticalSamplesMergeIntoOneSegment) {
  qsub::AllocationRecorder r;
  for (int i = 0; i < 10; ++i) r.observe(0.1 * i, 2, {0, 1});
  r.finish(1.5);
  ASSERT_EQ(r.segments().size(), 1U);
  EXPECT_DOUBLE_EQ(r.segments()[0].t0, 0.0);
  EXPECT_DOUBLE_EQ(r.segments()[0].t1, 1.5);
  EXPECT_EQ(r.segments()[0].cpus, 2);
  EXPECT_EQ(r.segments()[0].cpu_list, (std::vector<int>{0, 1}));
}

TEST(AllocationRecorder, ChangesOfCountOrPlaceSplit) {
  qsub::AllocationRecorder r;
  r.observe(0.0, 2, {0, 1});
  r.observe(0.5, 2, {0, 1});
  r.observe(1.0, 1, {0});
  r.observe(1.5, 1, {1});  // same count, another CPU: a new segment too
  r.finish(2.0);
  const auto& s = r.segments();
  ASSERT_EQ(s.size(), 3U);
  EXPECT_DOUBLE_EQ(s[0].t1, 1.0);
  EXPECT_DOUBLE_EQ(s[1].t0, 1.0);
  EXPECT_DOUBLE_EQ(s[1].t1, 1.5);
  EXPECT_EQ(s[2].cpu_list, (std::vector<int>{1}));
  EXPECT_DOUBLE_EQ(s[2].t1, 2.0);
}

TEST(AllocationRecorder, StoppedTimeIsAGap) {
  qsub::AllocationRecorder r;
  r.observe(0.0, 1, {0});
  r.observe(1.0, 0, {});
  r.observe(1.5, 0, {});
  r.observe(2.0, 1, {0});
  r.finish(3.0);
  const auto& s = r.segments();
  ASSERT_EQ(s.size(), 2U);
  EXPECT_DOUBLE_EQ(s[0].t1, 1.0);
  EXPECT_DOUBLE_EQ(s[1].t0, 2.0);
  EXPECT_DOUBLE_EQ(s[1].t1, 3.0);
}

TEST(AllocationRecorder, ZeroLengthSegmentsAreDropped) {
  qsub::AllocationRecorder r;
  r.observe(1.0, 2, {0, 1});
  r.observe(1.0, 1, {0});     // replaced at the same instant
  r.observe(1.0, 2, {0, 1});  // and back: one segment goes on
  r.observe(2.0, 2, {0, 1});
  r.finish(2.0);
  ASSERT_EQ(r.segments().size(), 1U);
  EXPECT_DOUBLE_EQ(r.segments()[0].t0, 1.0);
  EXPECT_DOUBLE_EQ(r.segments()[0].t1, 2.0);

  qsub::AllocationRecorder blip;  // A, then B for no time at all, then A again: A simply goes on
  blip.observe(0.0, 2, {0, 1});
  blip.observe(1.0, 1, {0});
  blip.observe(1.0, 2, {0, 1});
  blip.finish(2.0);
  ASSERT_EQ(blip.segments().size(), 1U);
  EXPECT_DOUBLE_EQ(blip.segments()[0].t0, 0.0);
  EXPECT_DOUBLE_EQ(blip.segments()[0].t1, 2.0);

  qsub::AllocationRecorder never;
  never.observe(3.0, 2, {});
  never.finish(3.0);
  EXPECT_TRUE(never.segments().empty());
}

TEST(AllocationRecorder, StaleSamplesAndLateFinishAreHarmless) {
  qsub::AllocationRecorder r;
  r.observe(1.0, 2, {});
  r.observe(2.0, 2, {});
  r.observe(1.5, 1, {});  // older than what we have: ignored
  r.finish(2.5);
  r.finish(9.0);          // already closed
  ASSERT_EQ(r.segments().size(), 1U);
  EXPECT_DOUBLE_EQ(r.segments()[0].t1, 2.5);
}

TEST(MlRecorder, KeepsOnlyChanges) {
  qsub::MlRecorder ml;
  ml.observe(0.0, 0, 1);
  ml.observe(0.1, 0, 1);
  ml.observe(0.2, 1, 0);
  ml.observe(0.3, 1, 0);
  ml.observe(0.4, 1, 1);
  ASSERT_EQ(ml.samples().size(), 3U);
  EXPECT_DOUBLE_EQ(ml.samples()[1].t, 0.2);
  EXPECT_EQ(ml.samples()[2].queued, 1);
}
