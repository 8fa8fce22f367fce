#include <gtest/gtest.h>

#include "selfanalyzer/change_detector.hpp"

namespace cosched::sa {
namespace {

using Verdict = ChangeDetector::TimeVerdict;

ChangeDetector make_detector() { return ChangeDetector(2.0, 0.5, 2, 3); }

TEST(ChangeDetector, StructureChangesOnNewPeriodOrSignature) {
  auto cd = make_detector();
  EXPECT_TRUE(cd.structure_changed(3, 111));   // first structure ever
  EXPECT_FALSE(cd.structure_changed(3, 111));  // the same loop again (lock lost and regained)
  EXPECT_TRUE(cd.structure_changed(4, 111));   // new period
  EXPECT_TRUE(cd.structure_changed(4, 222));   // same period, new region mix
  cd.forget_structure();
  EXPECT_TRUE(cd.structure_changed(4, 222));
}

TEST(ChangeDetector, AcceptsEverythingBeforeEnoughSamples) {
  auto cd = make_detector();
  EXPECT_EQ(cd.classify(100.0, 1.0, 2), Verdict::accept);
  EXPECT_EQ(cd.classify(100.0, 1.0, 2), Verdict::accept);
}

TEST(ChangeDetector, OneJumpIsAnOutlierTwoAreAChange) {
  auto cd = make_detector();
  EXPECT_EQ(cd.classify(1.9, 1.0, 3), Verdict::accept);
  EXPECT_EQ(cd.classify(0.51, 1.0, 3), Verdict::accept);
  EXPECT_EQ(cd.classify(2.1, 1.0, 3), Verdict::outlier);
  EXPECT_EQ(cd.classify(2.5, 1.0, 3), Verdict::changed);
  // After a change the count starts again.
  EXPECT_EQ(cd.classify(0.4, 1.0, 3), Verdict::outlier);
  EXPECT_EQ(cd.classify(0.3, 1.0, 3), Verdict::changed);
}

TEST(ChangeDetector, NormalSampleOrOppositeJumpClearsTheRun) {
  auto cd = make_detector();
  EXPECT_EQ(cd.classify(3.0, 1.0, 5), Verdict::outlier);
  EXPECT_EQ(cd.classify(1.0, 1.0, 5), Verdict::accept);
  EXPECT_EQ(cd.classify(3.0, 1.0, 5), Verdict::outlier);
  EXPECT_EQ(cd.classify(0.2, 1.0, 5), Verdict::outlier);  // other side: a new run of one
  EXPECT_EQ(cd.classify(3.0, 1.0, 5), Verdict::outlier);
  cd.reset_times();
  EXPECT_EQ(cd.classify(3.0, 1.0, 5), Verdict::outlier);
}

TEST(ChangeDetector, NoMedianNoJudgement) {
  auto cd = make_detector();
  EXPECT_EQ(cd.classify(3.0, 0.0, 5), Verdict::accept);
}

}  // namespace
}  // namespace cosched::sa
