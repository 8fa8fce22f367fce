// The selection and allocation steps of Feliu's thesis (Algorithms 5-8) as pure functions over plain values,
// shared by the co-scheduling policies (coschedule.hpp) and checked one by one in
// tests/unit/policies/test_smt_select.cpp with values worked by hand.
//
// Units: a job takes `width` hardware contexts (the thesis's processes take one each). Bandwidths are per
// thread, in the thesis's transactions per µs (64-byte lines: 1 tr/µs = 64 MB/s), so that the fitness
// 1 / |BW_Remain/CPU_Remain − TR_MM| weighs what it weighed there.
#pragma once

#include <string>
#include <vector>

#include "policies/snapshot.hpp"

namespace cosched::policy {

struct Candidate {
  JobId id = 0;
  int width = 1;          // contexts (one per core: coschedule.hpp)
  double bw = -1;         // main-memory traffic per thread, tr/µs; < 0: no sample (the mean is assumed)
  double intensity = 0;   // what Algorithm 6 sorts by (its TR_L1; coschedule.hpp says what stands in for it)
  double progress = 0;    // eq. 6.1
  bool light = true;      // light-sharing (§6.1.2)
  bool close = false;     // its rate alone is close to expire (§6.2.4)
};

struct Pick {
  JobId id = 0;
  bool whole_core = false;  // reserved a core (cores) of its own: no SMT sibling, no group partner
  std::string why;
};

// Algorithm 5, line 2: OATR = (Σ_p BW_MM^p / N) × #CPUs, over every job of the workload (those with a sample).
double oatr(const std::vector<Candidate>& jobs, int contexts);

// Algorithm 5 lines 3-10 (and Algorithm 8 lines 12-25): in list order, `first` (if any, e.g. the queue head)
// is selected by default; then, while contexts remain, the fittest job by
//     FITNESS(p) = 1 / |BW_Remain / CPU_Remain − BW_MM^p|
// among those that fit — among the `preferred` ones while any of them fits (Algorithm 8's progress rule),
// else among all. BW_Remain starts at `target` (OATR); each pick subtracts its BW × width. A job without a
// sample counts at target / contexts per thread (our choice: the fair share). Ties: the earlier in the list.
std::vector<Pick> select_by_fitness(const std::vector<Candidate>& list, int contexts, double target,
                                    const std::vector<JobId>& first, const std::vector<char>& preferred);
double fitness(double bw_remain_per_context, double bw);

// Algorithm 7 lines 2-9 (Algorithm 8 lines 2-9): an IPC-estimation quantum for `target`, whose rate alone
// expired. It reserves whole cores (a job of width w takes w cores, each with all its T contexts); if it is
// light-sharing, so do the light-sharing jobs whose estimates are close to expire, lowest progress first,
// while cores are free; the remaining contexts go to light-sharing jobs, lowest progress first. Heavy-sharing
// jobs wait: the thesis leaves contexts free rather than risk the estimates (§6.2.1).
std::vector<Pick> select_for_estimation(const std::vector<Candidate>& list, JobId target, int cores,
                                        int threads_per_core);

// Algorithm 7 lines 11-15: jobs more than `gap` (5 %) below the average progress get whole cores, lowest
// first, while cores are free; then as many jobs as contexts remain, lowest progress first.
std::vector<Pick> select_for_fairness(const std::vector<Candidate>& list, int cores, int threads_per_core,
                                      double gap = 0.05);

// Algorithm 6 (Algorithm 7 lines 17-21): jobs with whole cores run alone; the others, sorted by intensity,
// are grouped highest with lowest, `groups` groups of at most `group_size`. With fewer jobs than contexts,
// the most intense ones get the cores to themselves (our choice: they would slow any partner most).
// Returns groups of ids.
std::vector<std::vector<JobId>> pair_extremes(const std::vector<Candidate>& jobs, int groups, int group_size);

}  // namespace cosched::policy
