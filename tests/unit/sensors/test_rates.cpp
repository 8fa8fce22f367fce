// Progress rates (sensors/rates.hpp): which source a job's rate comes from, the correction for time spent
// waiting for a CPU, and the replay file (rates as a function of the group partners).
#include <gtest/gtest.h>

#include "sensors/rates.hpp"

using namespace cosched::sensors;

namespace {

RateInterval interval() {
  RateInterval iv;
  iv.id = 3;
  iv.seconds = 0.1;
  iv.threads = 1;
  return iv;
}

}  // namespace

TEST(Rates, AutoPrefersAppWorkThenIterationsThenRegions) {
  auto s = RateSensor::make("auto");
  ASSERT_TRUE(s.ok());
  RateInterval iv = interval();
  iv.regions = 40;
  // Nothing but regions: 40 per 0.1 s.
  auto r = s->sample(iv, 5.0);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->source, "regions");
  EXPECT_DOUBLE_EQ(r->per_s, 400.0);
  EXPECT_DOUBLE_EQ(r->at, 5.0);
  // A loop the SelfAnalyzer found: 1 / 0.02 s, net of CPU wait already.
  iv.has_loop = true;
  iv.iteration_s = 0.02;
  r = s->sample(iv, 5.0);
  EXPECT_EQ(r->source, "iterations");
  EXPECT_DOUBLE_EQ(r->per_s, 50.0);
  // A loop but no clean iteration this interval: no sample (never a switch to regions).
  iv.iteration_s = 0;
  EXPECT_FALSE(s->sample(iv, 5.0).has_value());
  // The program reports work: 3e6 units in 0.1 s, threads waiting for a CPU a quarter of it → per running s.
  iv.reports_work = true;
  iv.work = 3e6;
  iv.cpu_share = 0.75;
  r = s->sample(iv, 5.0);
  EXPECT_EQ(r->source, "app-work");
  EXPECT_DOUBLE_EQ(r->per_s, 3e6 / (0.1 * 0.75));
  // Reporting zero work is a rate of zero: no sample.
  iv.work = 0;
  EXPECT_FALSE(s->sample(iv, 5.0).has_value());
}

TEST(Rates, ReplayDividesByEachPartnersFactor) {
  auto r = RateReplay::parse("alone * 1000\nalone 2 500   # job 2 is slower\nwith 1 2 2.0\nwith 1 * 1.1\n"
                             "with * 1 1.5\n",
                             "t.rates");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_DOUBLE_EQ(*r->rate(1, {}), 1000.0);
  EXPECT_DOUBLE_EQ(*r->rate(1, {2}), 500.0);           // its own line for partner 2
  EXPECT_DOUBLE_EQ(*r->rate(1, {3}), 1000.0 / 1.1);    // (1, *)
  EXPECT_DOUBLE_EQ(*r->rate(1, {2, 3}), 1000.0 / 2.0 / 1.1);
  EXPECT_DOUBLE_EQ(*r->rate(2, {1}), 500.0 / 1.5);     // (*, 1)
  EXPECT_DOUBLE_EQ(*r->rate(3, {4}), 1000.0);          // no factor: 1
}

TEST(Rates, BadReplayLinesNameTheFileAndLine) {
  auto bad = [](const char* text) { return RateReplay::parse(text, "t.rates").error().message; };
  EXPECT_EQ(bad("alone 1 0\n"), "t.rates:1: RATE must be a finite number > 0");
  EXPECT_EQ(bad("\nwith 1 x 2\n"), "t.rates:2: PARTNER must be a job id >= 1 or *, not 'x'");
  EXPECT_EQ(bad("alone 0 5\n"), "t.rates:1: JOB must be a job id >= 1 or *, not '0'");
  EXPECT_EQ(bad("slow 1 2\n"), "t.rates:1: expected a line 'alone JOB RATE' or 'with JOB PARTNER FACTOR', not 'slow'");
  EXPECT_EQ(bad("with 1 2\n"), "t.rates:1: expected: with JOB PARTNER FACTOR");
  EXPECT_FALSE(RateSensor::make("fastest").ok());
  EXPECT_EQ(RateSensor::make("replay:/nonexistent/x").error().message,
            "cannot read the rate replay file /nonexistent/x");
}
