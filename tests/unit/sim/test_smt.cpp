// SMT machines in the simulator (docs/simulator.md, "SMT cores"): an hwloc synthetic topology gives the cores,
// co-scheduled groups share them through the daemon's placement, and the shared-core model slows each job
// by 1 + its sensitivity × the intensities of its siblings; the co-scheduling policies learn from the rates.
#include <gtest/gtest.h>

#include "sim_test_util.hpp"
#include "rm/placement/topology.hpp"

namespace cosched::sim {
namespace {

using testing::job;

SimConfig smt_machine(const std::string& synthetic) {
  auto t = rm::Topology::load({}, synthetic);
  EXPECT_TRUE(t.ok());
  SimConfig c;
  c.cpus = t->machine().cpus;
  c.cpu_order = t->order();
  c.core_of = t->core_of();
  c.analyzer.enabled = false;
  return c;
}

AppModel smt_model(const char* name, double intensity, double sensitivity) {
  AppModel m{name, name, *parse_speedup_spec("linear"), 0.01, "test"};
  m.smt_intensity = intensity;
  m.smt_sensitivity = sensitivity;
  return m;
}

testing::Outcome run(const SimConfig& c, const std::vector<JobSpec>& jobs, const std::string& policy,
                     const policy::ParamList& params = {}) {
  const int cores = *std::max_element(c.core_of.begin(), c.core_of.end()) + 1;
  auto p = policy::make_policy(policy, policy::Machine{c.cpus, cores, 1, c.cpus / cores}, params);
  if (!p.ok()) throw std::runtime_error(p.error().message);
  return testing::simulate(c, jobs, **p);
}

TEST(Smt, SiblingsSlowEachOtherByTheModel) {
  // One core of two PUs, two one-CPU jobs: gang runs both, on the two siblings. fp (intensity 0.8,
  // sensitivity 0.5) next to mem (0.2, 0.25): fp at 1 + 0.5 × 0.2 = 1.1, mem at 1 + 0.25 × 0.8 = 1.2. fp's
  // 10 s of work end at 11 s; mem has done 11/1.2 by then and finishes the rest alone: 11 + 10 − 11/1.2.
  const AppModel fp = smt_model("fp", 0.8, 0.5);
  const AppModel mem = smt_model("mem", 0.2, 0.25);
  auto out = run(smt_machine("package:1 core:1 pu:2"), {job(1, 0, 1, 10, fp), job(2, 0, 1, 10, mem)}, "gang");
  EXPECT_NEAR(out.jobs[0].end, 11.0, 1e-6);
  EXPECT_NEAR(out.jobs[1].end, 11.0 + 10.0 - 11.0 / 1.2, 1e-6);
  // Two cores of one PU each: nothing shared, 10 s each.
  out = run(smt_machine("package:1 core:2 pu:1"), {job(1, 0, 1, 10, fp), job(2, 0, 1, 10, mem)}, "gang");
  EXPECT_NEAR(out.jobs[0].end, 10.0, 1e-6);
  EXPECT_NEAR(out.jobs[1].end, 10.0, 1e-6);
}

TEST(Smt, SymbioticPairsTheSensitiveWithTheQuiet) {
  // Two SMT2 cores, four jobs: two core-hungry (1.8× next to each other) and two quiet ones. The symbiotic
  // policy learns from the progress rates and pairs each hungry job with a quiet one most of the time:
  // their executions beat a fixed pairing of the two hungry jobs together (gang's placement of jobs 1 and 2).
  const AppModel hungry = smt_model("hungry", 0.9, 0.9);
  const AppModel quiet = smt_model("quiet", 0.1, 0.1);
  const std::vector<JobSpec> jobs = {job(1, 0, 1, 30, hungry), job(2, 0, 1, 30, hungry), job(3, 0, 1, 30, quiet),
                                     job(4, 0, 1, 30, quiet)};
  const SimConfig c = smt_machine("package:1 core:2 pu:2");
  const auto fixed = run(c, jobs, "gang");
  // gang: jobs 1+2 on core 0 (1 + 0.81 = 1.81 → 54.3 s), 3+4 on core 1 (1.01 → 30.3 s).
  EXPECT_NEAR(fixed.jobs[0].end, 54.3, 1e-6);
  const auto symbiotic = run(c, jobs, "symbiotic");
  // Paired hungry+quiet: hungry at 1.09 (32.7 s), quiet at 1.09 too; learning costs a little.
  EXPECT_LT(symbiotic.jobs[0].end, 40.0);
  EXPECT_LT(symbiotic.jobs[1].end, 40.0);
  double worst = 0;
  for (const auto& j : symbiotic.jobs) worst = std::max(worst, j.end);
  EXPECT_LT(worst, fixed.jobs[0].end);
}

}  // namespace
}  // namespace cosched::sim
