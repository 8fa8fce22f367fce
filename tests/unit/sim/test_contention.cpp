// Memory contention in the simulator (sim/contention.cpp): jobs slow each other down by the model the
// counter-free sensor inverts, the sensors sample them as the daemon does, and quanta-window pairs a
// streamer with a quiet job.
#include <gtest/gtest.h>

#include "sim_test_util.hpp"

namespace cosched::sim {
namespace {

using testing::job;
using testing::simulate;

// The paper's machine in transactions/µs of 64 bytes: B = 29.5, one BBMA thread 23.6; k = 2.5.
constexpr double kTr = 64e6;

SimConfig paper_machine(int cpus) {
  SimConfig c;
  c.cpus = cpus;
  c.memory.machine_bytes_per_s = 29.5 * kTr;
  c.memory.thread_bytes_per_s = 23.6 * kTr;
  c.memory.contention = 2.5;
  c.analyzer.enabled = false;
  return c;
}

AppModel model(const char* name, double tr_per_us_per_thread) {
  AppModel m{name, name, *parse_speedup_spec("linear"), 0.01, "test"};
  m.bandwidth = tr_per_us_per_thread * kTr;
  return m;
}

TEST(Contention, StreamersSlowEachOtherDownByTheModel) {
  // Two BBMAs side by side on 2 CPUs: e = 47.2/29.5 − 1 = 0.6, s = 1 + 2.5 · 0.6 = 2.5: 10 s of work take 25 s.
  const AppModel bbma = model("bbma", 23.6);
  std::vector<JobSpec> jobs = {job(1, 0, 1, 10, bbma), job(2, 0, 1, 10, bbma)};
  auto out = simulate(paper_machine(2), jobs, "equip");
  ASSERT_EQ(out.jobs.size(), 2u);
  EXPECT_NEAR(out.jobs[0].end, 25.0, 1e-6);
  EXPECT_NEAR(out.jobs[1].end, 25.0, 1e-6);
  // The same without the model: 10 s.
  SimConfig plain = paper_machine(2);
  plain.memory = {};
  out = simulate(plain, jobs, "equip");
  EXPECT_NEAR(out.jobs[0].end, 10.0, 1e-6);
}

TEST(Contention, ADepartureSpeedsTheOthersUp) {
  // BBMA with 4 s of work and BBMA with 10: both at 1/2.5 speed until the first ends at 10 s (4 s of work),
  // then the second alone at full speed for its remaining 10 − 4 = 6 s: ends at 16 s.
  const AppModel bbma = model("bbma", 23.6);
  std::vector<JobSpec> jobs = {job(1, 0, 1, 4, bbma), job(2, 0, 1, 10, bbma)};
  auto out = simulate(paper_machine(2), jobs, "equip");
  EXPECT_NEAR(out.jobs[0].end, 10.0, 1e-6);
  EXPECT_NEAR(out.jobs[1].end, 16.0, 1e-6);
}

TEST(Contention, QuietJobsAreNotSlowed) {
  const AppModel bbma = model("bbma", 23.6);
  const AppModel nbbma = model("nbbma", 0.0037);
  std::vector<JobSpec> jobs = {job(1, 0, 1, 10, bbma), job(2, 0, 1, 10, nbbma)};
  auto out = simulate(paper_machine(2), jobs, "equip");
  EXPECT_NEAR(out.jobs[0].end, 10.0, 1e-6);  // D = 23.6 < 29.5
  EXPECT_NEAR(out.jobs[1].end, 10.0, 1e-6);
}

TEST(Contention, QuantaWindowPairsHighWithLowAndBeatsGangOrder) {
  // Two BBMAs and two nBBMAs of one thread on 2 CPUs, started high, high, low, low. Gang order pairs the
  // BBMAs together (2.5 times slower); quanta-window, once it has samples, pairs each with an nBBMA.
  const AppModel bbma = model("bbma", 23.6);
  const AppModel nbbma = model("nbbma", 0.0037);
  std::vector<JobSpec> jobs = {job(1, 0, 1, 20, bbma), job(2, 0, 1, 20, bbma), job(3, 0, 1, 20, nbbma),
                               job(4, 0, 1, 20, nbbma)};
  for (const char* sensor : {"app", "counter-free"}) {
    SimConfig c = paper_machine(2);
    c.sensor = sensor;
    c.analyzer.enabled = true;
    auto fit = simulate(c, jobs, "quanta-window");
    auto gang = simulate(c, jobs, "quanta-window", {{"pick", "list"}});
    const double t_fit = (fit.jobs[0].end + fit.jobs[1].end) / 2;
    const double t_gang = (gang.jobs[0].end + gang.jobs[1].end) / 2;
    // Gang order: the BBMAs share every quantum they run, at 1/2.5 speed half the time (8 s of work by 40 s,
    // when the nBBMAs end), then together all the time: 40 + 12 × 2.5 = 70 s.
    EXPECT_NEAR(t_gang, 70.0, 0.5) << sensor;
    EXPECT_LT(t_fit, 0.6 * t_gang) << sensor << ": " << t_fit << " vs " << t_gang;
  }
}

}  // namespace
}  // namespace cosched::sim
