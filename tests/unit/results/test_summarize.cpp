// summarize() and the derived per-job values on the hand-made run of sample_run.hpp.
#include <gtest/gtest.h>

#include "sample_run.hpp"

namespace cosched::results {
namespace {

using sample::four_job_run;

TEST(Summarize, OverallNumbers) {
  nlohmann::json s = summarize(four_job_run());
  const auto& all = s["overall"];
  EXPECT_EQ(all["count"], 4);
  EXPECT_EQ(all["started"], 3);
  EXPECT_EQ(all["completed"], 3);
  // responses 10, 8+2, 15; executions 10, 8, 10; waits 0, 2, 5
  EXPECT_DOUBLE_EQ(all["mean_response"].get<double>(), 35.0 / 3);
  EXPECT_DOUBLE_EQ(all["median_response"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(all["mean_execution"].get<double>(), 28.0 / 3);
  EXPECT_DOUBLE_EQ(all["median_execution"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(all["mean_wait"].get<double>(), 7.0 / 3);
  EXPECT_DOUBLE_EQ(all["makespan"].get<double>(), 20);
  // CPU·s: 2·10 + 2·8 + (2·2 + 4·8) = 72, over 4 CPUs × 20 s
  EXPECT_DOUBLE_EQ(all["cpu_seconds"].get<double>(), 72);
  EXPECT_DOUBLE_EQ(all["cpu_utilisation"].get<double>(), 72.0 / 80);
  // running: 1 over [0,4), 2 over [4,12), 1 over [12,20) → 28 / 20
  EXPECT_DOUBLE_EQ(all["mean_ml"].get<double>(), 1.4);
  EXPECT_EQ(all["max_ml"], 2);
}

TEST(Summarize, NormalisedThroughputFollowsDssEquations10And11) {
  results::Run run = four_job_run();
  // Without dedicated run times there is nothing to normalise by.
  EXPECT_TRUE(summarize(run)["overall"]["normalized_throughput"].is_null());
  // bt: responses 10 and 10 (job 2: submit 2, end 12), ideals 5 and 5 → eq. 11: 5 / 10 = 0.5.
  // The completed job of the other class: response 15, ideal 12 → 0.8. Eq. 10: (0.5 + 0.8) / 2.
  for (auto& j : run.jobs) j.ideal = j.app_class == "bt" ? 5 : 12;
  nlohmann::json s = summarize(run);
  EXPECT_DOUBLE_EQ(s["classes"]["bt"]["normalized_throughput"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(s["overall"]["normalized_throughput"].get<double>(), (0.5 + 0.8) / 2);
}

TEST(Summarize, PerClassNumbersAddUp) {
  nlohmann::json s = summarize(four_job_run());
  const auto& bt = s["classes"]["bt"];
  EXPECT_EQ(bt["count"], 2);
  EXPECT_DOUBLE_EQ(bt["mean_response"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(bt["median_execution"].get<double>(), 9);
  EXPECT_DOUBLE_EQ(bt["mean_wait"].get<double>(), 1);
  EXPECT_DOUBLE_EQ(bt["makespan"].get<double>(), 12);
  EXPECT_DOUBLE_EQ(bt["cpu_utilisation"].get<double>(), 36.0 / 80);
  EXPECT_DOUBLE_EQ(bt["mean_ml"].get<double>(), 18.0 / 20);

  const auto& apsi = s["classes"]["apsi"];
  EXPECT_EQ(apsi["count"], 2);
  EXPECT_EQ(apsi["completed"], 1);
  EXPECT_DOUBLE_EQ(apsi["mean_response"].get<double>(), 15);
  EXPECT_DOUBLE_EQ(apsi["mean_execution"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(apsi["makespan"].get<double>(), 15);  // first submit 5 → last end 20
  EXPECT_DOUBLE_EQ(apsi["mean_ml"].get<double>(), 10.0 / 20);
  // Class shares of the machine add up to the whole.
  EXPECT_DOUBLE_EQ(bt["cpu_utilisation"].get<double>() + apsi["cpu_utilisation"].get<double>(),
                   s["overall"]["cpu_utilisation"].get<double>());
  EXPECT_DOUBLE_EQ(bt["mean_ml"].get<double>() + apsi["mean_ml"].get<double>(), s["overall"]["mean_ml"].get<double>());
}

TEST(Summarize, CarriesTheRunMetadata) {
  nlohmann::json s = summarize(four_job_run());
  EXPECT_EQ(s["name"], "pdpa");
  EXPECT_EQ(s["mode"], "simulated");
  EXPECT_EQ(s["policy"], "pdpa");
  EXPECT_EQ(s["params"]["step"], 2);
  EXPECT_EQ(s["machine_cpus"], 4);
  EXPECT_EQ(s["workload"], "w1.swf");
  EXPECT_DOUBLE_EQ(s["time_scale"].get<double>(), 0.5);
}

TEST(Summarize, MlIsTimeWeightedNotSampleAveraged) {
  results::Run run = four_job_run();
  // Many samples in a short burst must not outweigh the long stretches between them.
  for (int i = 0; i < 100; ++i) run.ml.push_back({20, 0, 1});
  EXPECT_DOUBLE_EQ(summarize(run)["overall"]["mean_ml"].get<double>(), 1.4);
}

TEST(Summarize, WithoutSamplesMlComesFromTheJobs) {
  results::Run run = four_job_run();
  run.ml.clear();
  EXPECT_DOUBLE_EQ(summarize(run)["overall"]["mean_ml"].get<double>(), 1.4);
}

TEST(Summarize, OversubscriptionCountsOnceInUtilisation) {
  // A native run: two jobs of 2 threads each on a 2-CPU machine for 10 s, no segments recorded.
  results::Run run;
  run.machine_cpus = 2;
  run.jobs.push_back(sample::job(1, "a", 0, 0, 10, {}, 2));
  run.jobs.push_back(sample::job(2, "b", 0, 0, 10, {}, 2));
  nlohmann::json s = summarize(run);
  EXPECT_DOUBLE_EQ(s["overall"]["cpu_seconds"].get<double>(), 40);  // held (requested) CPU·seconds
  EXPECT_DOUBLE_EQ(s["overall"]["cpu_utilisation"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(s["classes"]["a"]["cpu_utilisation"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(s["classes"]["b"]["cpu_utilisation"].get<double>(), 0.5);
}

TEST(DeriveMl, RebuildsTheSampledLevel) {
  results::Run run = four_job_run();
  auto ml = derive_ml(run.jobs);
  ASSERT_EQ(ml.size(), run.ml.size());
  for (std::size_t i = 0; i < ml.size(); ++i) {
    EXPECT_DOUBLE_EQ(ml[i].t, run.ml[i].t) << i;
    EXPECT_EQ(ml[i].running, run.ml[i].running) << i;
    EXPECT_EQ(ml[i].queued, run.ml[i].queued) << i;
  }
}

TEST(JobRecord, DerivedValues) {
  results::Run run = four_job_run();
  EXPECT_DOUBLE_EQ(run.jobs[2].mean_cpus(), 36.0 / 10);
  EXPECT_DOUBLE_EQ(run.jobs[2].cpu_seconds(), 36);
  EXPECT_DOUBLE_EQ(run.jobs[3].mean_cpus(), 2);  // never ran: its request
  EXPECT_DOUBLE_EQ(run.jobs[3].cpu_seconds(), 0);
  EXPECT_EQ(run.jobs[3].wait(), -1);
  // No segment known (native): request × execution.
  JobRecord native = sample::job(9, "bt", 0, 1, 5, {}, 3);
  EXPECT_DOUBLE_EQ(native.cpu_seconds(), 12);
  // Stopped for half its execution: the gap counts as 0 CPUs.
  JobRecord stopped = sample::job(10, "bt", 0, 0, 10, {sample::segment(0, 5, {0, 1})});
  EXPECT_DOUBLE_EQ(stopped.mean_cpus(), 1);
}

TEST(Summarize, MultiprogramMetricsOfTheThesis) {
  results::Run run = four_job_run();
  // Without run times alone there is nothing to compare with.
  EXPECT_TRUE(summarize(run)["overall"]["stp"].is_null());
  EXPECT_EQ(summarize(run)["overall"]["mix_jobs"], 0);
  // Executions (end − start, stopped time included) 10, 8, 10; alone 5, 4, 8: slowdowns 2, 2, 1.25.
  run.jobs[0].ideal = 5;
  run.jobs[1].ideal = 4;
  run.jobs[2].ideal = 8;
  run.jobs[3].ideal = 3;  // never ran: not counted
  const nlohmann::json all = summarize(run)["overall"];
  EXPECT_EQ(all["mix_jobs"], 3);
  EXPECT_DOUBLE_EQ(all["stp"].get<double>(), 0.5 + 0.5 + 0.8);             // eq. 3.5
  EXPECT_DOUBLE_EQ(all["antt"].get<double>(), (2 + 2 + 1.25) / 3);         // eq. 3.6
  EXPECT_DOUBLE_EQ(all["unfairness"].get<double>(), 2 / 1.25);              // eq. 3.7
  EXPECT_DOUBLE_EQ(all["turnaround"].get<double>(), 10);                    // eq. 3.1
  EXPECT_DOUBLE_EQ(summarize(run)["classes"]["bt"]["unfairness"].get<double>(), 1.0);
}

}  // namespace
}  // namespace cosched::results
