// Progress of one job: rate = S(team), stalls on team changes, exact event targets.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/job_progress.hpp"

using cosched::catalog::SpeedupModel;
using cosched::sim::JobProgress;

TEST(JobProgress, GoesAtTheSpeedupOfItsTeam) {
  SpeedupModel linear;  // amdahl with serial 0
  JobProgress p(100, linear);
  p.set_team(0, 4, 1.0);  // the first team costs nothing
  EXPECT_DOUBLE_EQ(p.rate(), 4.0);
  EXPECT_DOUBLE_EQ(p.time_when(100), 25.0);
  p.advance(10);
  EXPECT_DOUBLE_EQ(p.done(), 40.0);
}

TEST(JobProgress, ATeamChangeStallsTheJob) {
  SpeedupModel linear;
  JobProgress p(100, linear);
  p.set_team(0, 4, 0.5);
  p.advance(10);         // 40 done
  p.set_team(10, 2, 0.5);  // stalled until 10.5
  EXPECT_DOUBLE_EQ(p.stalled_until(), 10.5);
  p.advance(10.25);
  EXPECT_DOUBLE_EQ(p.done(), 40.0);
  EXPECT_DOUBLE_EQ(p.time_when(60), 10.5 + 10.0);
  p.advance(11.5);
  EXPECT_DOUBLE_EQ(p.done(), 42.0);
  p.set_team(11.5, 2, 0.5);  // same team: free
  EXPECT_DOUBLE_EQ(p.stalled_until(), 10.5);
}

TEST(JobProgress, AStoppedJobNeverArrives) {
  SpeedupModel linear;
  JobProgress p(10, linear);
  p.set_team(0, 1, 0);
  p.set_team(1, 0, 0);
  EXPECT_TRUE(std::isinf(p.time_when(10)));
  p.advance(100);
  EXPECT_DOUBLE_EQ(p.done(), 1.0);
}

TEST(JobProgress, SnapMovesOnlyForwardAndNeverPastTheTotal) {
  SpeedupModel linear;
  JobProgress p(10, linear);
  p.set_team(0, 1, 0);
  p.advance(2.9999999);
  p.snap_to(3.0);
  EXPECT_DOUBLE_EQ(p.done(), 3.0);
  p.snap_to(2.0);
  EXPECT_DOUBLE_EQ(p.done(), 3.0);
  p.snap_to(11.0);
  EXPECT_DOUBLE_EQ(p.done(), 10.0);
  EXPECT_DOUBLE_EQ(p.time_when(5.0), 2.9999999);  // already there: now
}
