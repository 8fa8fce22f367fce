// Application models: the default-curve syntax, catalog precedence, and SWF job → work.
#include <gtest/gtest.h>

#include "sim/app_model.hpp"

using namespace cosched;
using sim::AppModel;
using sim::ModelTable;

namespace {

catalog::Catalog parse_catalog(const char* yaml, const char* name) {
  auto c = catalog::parse(yaml, name);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  return *c;
}

AppModel linear_fallback() {
  return AppModel{"", "", *sim::parse_speedup_spec("linear"), 1.0, "default"};
}

swf::Job swf_job(std::int64_t number, double submit, double run, std::int64_t procs, std::int64_t exe) {
  swf::Job j;
  j.number = number;
  j.submit_s = submit;
  j.run_s = run;
  j.requested_procs = procs;
  j.executable = exe;
  return j;
}

}  // namespace

TEST(SpeedupSpec, ParsesEveryForm) {
  auto lin = sim::parse_speedup_spec("linear");
  ASSERT_TRUE(lin.ok());
  EXPECT_DOUBLE_EQ(catalog::speedup(*lin, 8), 8.0);
  auto am = sim::parse_speedup_spec("amdahl:0.5");
  ASSERT_TRUE(am.ok());
  EXPECT_DOUBLE_EQ(catalog::speedup(*am, 2), 1.0 / (0.5 + 0.25));
  auto dn = sim::parse_speedup_spec("downey:16:0.5");
  ASSERT_TRUE(dn.ok());
  EXPECT_EQ(dn->kind, catalog::SpeedupModel::Kind::downey);
  EXPECT_DOUBLE_EQ(dn->average_parallelism, 16);
  auto tb = sim::parse_speedup_spec("table:1=1,8=6");
  ASSERT_TRUE(tb.ok());
  EXPECT_DOUBLE_EQ(catalog::speedup(*tb, 8), 6.0);
}

TEST(SpeedupSpec, RejectsBadTextWithItsReason) {
  for (const char* bad : {"", "quadratic", "amdahl", "amdahl:2", "amdahl:x", "downey:0.5:1", "table:8=6,4=3",
                          "table:1=0", "linear:1"}) {
    auto r = sim::parse_speedup_spec(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.error().message.find("default speedup"), std::string::npos);
    }
  }
}

TEST(ModelTable, ModelsFileBeatsCatalogAndDefaultsComeLast) {
  auto cat = parse_catalog(R"(
default:
  name: generic
  command: "true"
  speedup: {model: amdahl, serial_fraction: 0.5}
apps:
  1: {name: swim, class: superlinear, command: "true", speedup: {model: amdahl, serial_fraction: 0.0}, iteration_s: 0.5}
  2: {name: bt, command: "true"}
)", "cat.yaml");
  auto models = parse_catalog(R"(
apps:
  1: {name: swim-model, speedup: {model: amdahl, serial_fraction: 0.1}, iteration_s: 2}
)", "models.yaml");
  ModelTable t(&cat, &models, linear_fallback());
  const AppModel& swim = t.find(1);
  EXPECT_EQ(swim.name, "swim-model");
  EXPECT_DOUBLE_EQ(swim.speedup.serial_fraction, 0.1);
  EXPECT_DOUBLE_EQ(swim.iteration_s, 2);
  EXPECT_EQ(swim.source.rfind("models.yaml:", 0), 0u) << swim.source;
  // bt has no curve of its own: the catalog's default curve, but its own name.
  const AppModel& bt = t.find(2);
  EXPECT_EQ(bt.name, "bt");
  EXPECT_DOUBLE_EQ(bt.speedup.serial_fraction, 0.5);
  EXPECT_DOUBLE_EQ(bt.iteration_s, 1.0);  // the default entry has no iteration_s: the built-in one
  // Unknown executable: the default entry, name and all.
  EXPECT_EQ(t.find(9).name, "generic");
  EXPECT_EQ(&t.find(1), &swim);  // resolved once, stable address
}

TEST(ModelTable, WithoutAnyCatalogEveryExecutableIsUncataloguedLinear) {
  ModelTable t(nullptr, nullptr, linear_fallback());
  EXPECT_EQ(t.find(7).name, "exe7");
  EXPECT_EQ(t.find(7).app_class, "uncatalogued");
  EXPECT_EQ(t.find(-1).name, "unknown");
  EXPECT_DOUBLE_EQ(catalog::speedup(t.find(7).speedup, 32), 32.0);
  EXPECT_EQ(t.find(7).source, "default");
}

TEST(ModelTable, ACatalogFixedTeamIsAFixedTeamInTheModel) {
  auto models = parse_catalog(R"(
apps:
  1: {name: setnum, speedup: {model: amdahl, serial_fraction: 0.05}, team: fixed}
  2: {name: amdahl, speedup: {model: amdahl, serial_fraction: 0.05}, team: malleable}
  3: {name: plain, speedup: {model: amdahl, serial_fraction: 0.05}}
)", "m.yaml");
  ModelTable t(nullptr, &models, linear_fallback());
  EXPECT_TRUE(t.find(1).fixed_team);
  EXPECT_FALSE(t.find(2).fixed_team);
  EXPECT_FALSE(t.find(3).fixed_team);  // automatic: the simulator's jobs are malleable (docs/simulator.md)
}

TEST(BuildJobs, WorkIsRunTimeTimesSpeedupAtTheScaledRequest) {
  auto models = parse_catalog(R"(
apps:
  1: {name: half, speedup: {model: amdahl, serial_fraction: 0.5}}
)", "m.yaml");
  ModelTable t(nullptr, &models, linear_fallback());
  swf::Workload w;
  w.header.set("MaxProcs", "120");
  w.jobs = {swf_job(1, 10, 100, 60, 2), swf_job(2, 20, 50, 4, 1), swf_job(3, 30, -1, 4, 2),
            swf_job(4, 40, 5, -1, 2)};
  auto jobs = sim::build_jobs(w, t, {60, 0, 0.5});
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs[0].request, 30);  // 60 of 120 → 30 of 60
  EXPECT_DOUBLE_EQ(jobs[0].work, 100.0 * 30);
  EXPECT_DOUBLE_EQ(jobs[0].submit, 5.0);  // time scale 0.5
  EXPECT_EQ(jobs[1].request, 2);
  EXPECT_DOUBLE_EQ(jobs[1].work, 50.0 / (0.5 + 0.25));
  EXPECT_FALSE(jobs[2].usable());
  EXPECT_NE(jobs[2].problem.find("run time unknown"), std::string::npos);
  EXPECT_FALSE(jobs[3].usable());  // no processor request at all
  EXPECT_TRUE(jobs[0].usable());
}

TEST(BuildJobs, MaxProcsOptionOverridesTheHeader) {
  ModelTable t(nullptr, nullptr, linear_fallback());
  swf::Workload w;
  w.header.set("MaxProcs", "60");
  w.jobs = {swf_job(1, 0, 10, 60, 1)};
  EXPECT_EQ(sim::build_jobs(w, t, {60, 0, 1.0})[0].request, 60);
  EXPECT_EQ(sim::build_jobs(w, t, {60, 240, 1.0})[0].request, 15);
}
