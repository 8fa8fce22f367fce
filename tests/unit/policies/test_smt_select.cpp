// The selection and allocation steps of Feliu's Algorithms 5-8 (policies/coschedule/smt_select.hpp), with
// values worked by hand in the comments. Bandwidths in transactions/µs per thread, as in the thesis.
#include <gtest/gtest.h>

#include "policies/coschedule/smt_select.hpp"

using namespace cosched::policy;

namespace {

Candidate job(JobId id, double bw, double progress = 0, bool light = true, bool close = false, double intensity = 0) {
  Candidate c;
  c.id = id;
  c.bw = bw;
  c.progress = progress;
  c.light = light;
  c.close = close;
  c.intensity = intensity;
  return c;
}

std::vector<JobId> ids(const std::vector<Pick>& picks) {
  std::vector<JobId> v;
  for (const auto& p : picks) v.push_back(p.id);
  return v;
}

std::vector<JobId> whole(const std::vector<Pick>& picks) {
  std::vector<JobId> v;
  for (const auto& p : picks) {
    if (p.whole_core) v.push_back(p.id);
  }
  return v;
}

}  // namespace

TEST(SmtSelect, OatrIsTheMeanBandwidthTimesTheContexts) {
  // Algorithm 5 line 2: (4 + 2 + 0.5) / 3 × 4 contexts = 8.6667; a job without a sample is left out.
  EXPECT_NEAR(oatr({job(1, 4), job(2, 2), job(3, 0.5), job(4, -1)}, 4), 26.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(oatr({job(1, -1)}, 4), 0.0);
  EXPECT_DOUBLE_EQ(fitness(1.875, 2), 8.0);  // 1 / |1.875 − 2|
}

TEST(SmtSelect, AlgorithmFiveHeadThenFittest) {
  // OATR over A 4, B 2, C 0.5, D 1 on 2 contexts: 7.5/4 × 2 = 3.75. The head A is selected by default:
  // BW_Remain = 3.75 − 4 = −0.25 for 1 context. Fitness: B 1/2.25 = 0.444, C 1/0.75 = 1.333, D 1/1.25 = 0.8.
  const std::vector<Candidate> list = {job(1, 4), job(2, 2), job(3, 0.5), job(4, 1)};
  const double target = oatr(list, 2);
  EXPECT_DOUBLE_EQ(target, 3.75);
  EXPECT_EQ(ids(select_by_fitness(list, 2, target, {1}, {})), (std::vector<JobId>{1, 3}));
  // Without the head rule, the first pick is the fittest for 3.75/2 = 1.875 per context: B (1/0.125 = 8);
  // then 1.75 for one: D (1/0.75 = 1.33) beats C (1/1.25 = 0.8) and A (1/2.25).
  EXPECT_EQ(ids(select_by_fitness(list, 2, target, {}, {})), (std::vector<JobId>{2, 4}));
}

TEST(SmtSelect, AlgorithmEightPrefersJobsMoreThanOneBehind) {
  // Progress A 5, B 3.5, C 4.5, D 2: MaxP = 5, Progress + 1 < 5 for B and D only. Target 3.75 on 2 contexts:
  // among B, D for 1.875: B (8) over D (1/0.875); then D, the only one left behind, though C would fit 1.75
  // better (1/1.25 vs 1/0.75)... D: 1/|1.75 − 1| = 1.33 and it is preferred anyway.
  const std::vector<Candidate> list = {job(1, 4, 5), job(2, 2, 3.5), job(3, 0.5, 4.5), job(4, 1, 2)};
  std::vector<char> behind;
  for (const auto& c : list) behind.push_back(c.progress + 1 < 5 ? 1 : 0);
  EXPECT_EQ(ids(select_by_fitness(list, 2, 3.75, {}, behind)), (std::vector<JobId>{2, 4}));
  // Three contexts: B and D, then the fittest of all for BW_Remain (5.625 − 2 − 1) / 1 = 2.625: A (1/1.375)
  // beats C (1/2.125).
  EXPECT_EQ(ids(select_by_fitness(list, 3, 5.625, {}, behind)), (std::vector<JobId>{2, 4, 1}));
}

TEST(SmtSelect, EstimationQuantumReservesWholeCores) {
  // 2 SMT2 cores (4 contexts). A heavy, its rate alone expired; B light and close to expire; C light; D heavy.
  const std::vector<Candidate> list = {job(1, 9, 1, false), job(2, 0.1, 3, true, true), job(3, 0.2, 2, true),
                                       job(4, 8, 0, false)};
  // A heavy target: a core of its own; no other reservation; the other core's 2 contexts go to the light
  // jobs, lowest progress first (C then B); D waits.
  auto p = select_for_estimation(list, 1, 2, 2);
  EXPECT_EQ(ids(p), (std::vector<JobId>{1, 3, 2}));
  EXPECT_EQ(whole(p), (std::vector<JobId>{1}));
  // A light target B: its core, then the light job close to expire... C is not close: it shares the other core
  // alone. A and D are heavy: they wait, and a context stays free.
  p = select_for_estimation(list, 2, 2, 2);
  EXPECT_EQ(ids(p), (std::vector<JobId>{2, 3}));
  EXPECT_EQ(whole(p), (std::vector<JobId>{2}));
  // C close to expire too: both light jobs get whole cores.
  auto list2 = list;
  list2[2].close = true;
  p = select_for_estimation(list2, 2, 2, 2);
  EXPECT_EQ(whole(p), (std::vector<JobId>{2, 3}));
}

TEST(SmtSelect, FairnessGivesLaggardsWholeCores) {
  // Progress 10, 9, 8, 7.5: average 8.625; 5 % below is under 8.19375: D (7.5) and C (8), lowest first,
  // get whole cores; that takes both cores of the SMT2 machine.
  const std::vector<Candidate> list = {job(1, 0, 10), job(2, 0, 9), job(3, 0, 8), job(4, 0, 7.5)};
  auto p = select_for_fairness(list, 2, 2);
  EXPECT_EQ(ids(p), (std::vector<JobId>{4, 3}));
  EXPECT_EQ(whole(p), (std::vector<JobId>{4, 3}));
  // On 3 cores the third core's contexts go to the lowest progress left: B then A.
  p = select_for_fairness(list, 3, 2);
  EXPECT_EQ(ids(p), (std::vector<JobId>{4, 3, 2, 1}));
  // Nobody behind: lowest progress first, no whole cores.
  p = select_for_fairness({job(1, 0, 10), job(2, 0, 9.9)}, 1, 2);
  EXPECT_EQ(ids(p), (std::vector<JobId>{2, 1}));
  EXPECT_TRUE(whole(p).empty());
}

TEST(SmtSelect, AlgorithmSixPairsHighestWithLowest) {
  // Intensities 5, 1, 3, 2 → sorted 2(1) 4(2) 3(3) 1(5): the pairs {1, 2} and {3, 4}.
  const std::vector<Candidate> four = {job(1, 0, 0, true, false, 5), job(2, 0, 0, true, false, 1),
                                       job(3, 0, 0, true, false, 3), job(4, 0, 0, true, false, 2)};
  EXPECT_EQ(pair_extremes(four, 2, 2), (std::vector<std::vector<JobId>>{{1, 2}, {3, 4}}));
  // Three jobs on two cores: the most intense alone, the others together.
  const std::vector<Candidate> three(four.begin(), four.begin() + 3);
  EXPECT_EQ(pair_extremes(three, 2, 2), (std::vector<std::vector<JobId>>{{1}, {3, 2}}));
  // SMT4: one group, alternating ends.
  EXPECT_EQ(pair_extremes(four, 1, 4), (std::vector<std::vector<JobId>>{{1, 2, 3, 4}}));
}
