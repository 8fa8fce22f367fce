// Catalog: YAML entries, error messages (file, line, key), speedup models, commands and @program expansion,
// and the shipped example workloads.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "qs/catalog.hpp"
#include "qs/swf.hpp"

namespace cat = cosched::catalog;

namespace {

cat::Catalog catalog_ok(const std::string& yaml) {
  auto c = cat::parse(yaml, "cat.yaml");
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  return c.ok() ? *c : cat::Catalog{};
}

std::string catalog_error(const std::string& yaml) {
  auto c = cat::parse(yaml, "cat.yaml");
  EXPECT_FALSE(c.ok());
  if (c.ok()) return "";
  EXPECT_EQ(c.error().code, cosched::Errc::parse_error);
  return c.error().message;
}

}  // namespace

TEST(Catalog, EntriesWithEveryKey) {
  auto c = catalog_ok(
      "default:\n"
      "  name: generic\n"
      "  command: \"@amdahl --serial-fraction 0.5\"\n"
      "apps:\n"
      "  1:\n"
      "    name: swim\n"
      "    command: [\"@amdahl\", \"--serial-fraction\", \"0.0\"]\n"
      "    class: superlinear\n"
      "    speedup: {model: amdahl, serial_fraction: 0.0}\n"
      "    iteration_s: 0.05\n"
      "    period: 490\n"
      "    team: malleable\n"
      "    bandwidth: 750M\n"
      "    smt: {intensity: 0.6, sensitivity: 0.4}\n"
      "  7:\n"
      "    name: sim-only\n"
      "    speedup: {model: downey, A: 16, sigma: 0.5}\n");
  ASSERT_EQ(c.apps.size(), 2U);
  const cat::App& swim = c.apps.at(1);
  EXPECT_EQ(swim.name, "swim");
  EXPECT_EQ(swim.executable, 1);
  EXPECT_EQ(swim.line, 6);
  EXPECT_EQ(swim.command, (std::vector<std::string>{"@amdahl", "--serial-fraction", "0.0"}));
  EXPECT_EQ(swim.app_class, "superlinear");
  ASSERT_TRUE(swim.speedup.has_value());
  EXPECT_EQ(swim.speedup->kind, cat::SpeedupModel::Kind::amdahl);
  EXPECT_EQ(swim.iteration_s, 0.05);
  EXPECT_EQ(swim.period, 490);
  EXPECT_EQ(swim.team, "malleable");
  EXPECT_EQ(swim.bandwidth, 750e6);
  EXPECT_EQ(swim.smt_intensity, 0.6);
  EXPECT_EQ(swim.smt_sensitivity, 0.4);
  EXPECT_EQ(c.apps.at(7).team, "");  // automatic
  EXPECT_FALSE(c.apps.at(7).bandwidth.has_value());
  EXPECT_FALSE(c.apps.at(7).smt_intensity.has_value());
  EXPECT_TRUE(c.apps.at(7).command.empty());
  EXPECT_EQ(c.apps.at(7).speedup->average_parallelism, 16);
  ASSERT_TRUE(c.default_app.has_value());
  EXPECT_EQ(c.default_app->command, (std::vector<std::string>{"@amdahl", "--serial-fraction", "0.5"}));
  EXPECT_EQ(c.default_app->executable, -1);
}

TEST(Catalog, FindFallsBackToDefault) {
  auto with_default = catalog_ok("default: {name: d, command: x}\napps:\n  2: {name: two, command: y}\n");
  EXPECT_EQ(with_default.find(2)->name, "two");
  EXPECT_EQ(with_default.find(3)->name, "d");
  auto without = catalog_ok("apps:\n  2: {name: two, command: y}\n");
  EXPECT_EQ(without.find(3), nullptr);
  auto r = without.resolve(3);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, cosched::Errc::not_found);
  EXPECT_EQ(r.error().message, "cat.yaml: no application for executable number 3 and no default entry");
}

TEST(Catalog, ErrorsNameLineAndKey) {
  EXPECT_EQ(catalog_error("apps:\n  1:\n    name: a\n    comand: x\n"),
            "cat.yaml:4: apps.1: unknown key 'comand' (expected name, command, class, speedup, iteration_s, period, team, bandwidth, smt)");
  EXPECT_EQ(catalog_error("apps:\n  1:\n    command: x\n"), "cat.yaml:3: apps.1: needs a name");
  EXPECT_EQ(catalog_error("apps:\n  1:\n    name: a\n"),
            "cat.yaml:3: apps.1: needs a command (real runs) or a speedup model (simulation)");
  EXPECT_EQ(catalog_error("apps:\n  x1: {name: a, command: b}\n"),
            "cat.yaml:2: apps: 'x1' is not an executable number (SWF field 14, >= 0)");
  EXPECT_EQ(catalog_error("apps:\n  1:\n    name: a\n    command: b\n    speedup: {model: amdahl, serial_fraction: 1.5}\n"),
            "cat.yaml:5: apps.1.speedup.serial_fraction: '1.5' is not in [0, 1]");
  EXPECT_EQ(catalog_error("apps:\n  1:\n    name: a\n    speedup:\n      model: gustafson\n"),
            "cat.yaml:5: apps.1.speedup.model: 'gustafson' is not amdahl, downey or table");
  EXPECT_EQ(catalog_error("apps:\n  1:\n    name: a\n    speedup: {model: amdahl}\n"),
            "cat.yaml:4: apps.1.speedup: amdahl needs exactly one of serial_fraction and parallel_fraction");
  EXPECT_EQ(catalog_error("apps:\n  1:\n    name: a\n    speedup: {model: downey, A: 0.5, sigma: 1}\n"),
            "cat.yaml:4: apps.1.speedup.A: '0.5' is not in [1, 1e+09]");
  EXPECT_EQ(catalog_error("apps:\n  1:\n    name: a\n    speedup: {model: table, points: [[1, 1], [1, 2]]}\n"),
            "cat.yaml:4: apps.1.speedup.points[1].cpus: '1' does not increase over the previous point");
  EXPECT_EQ(catalog_error("apps:\n  1:\n    name: a\n    command: b\n    bandwidth: fast\n"),
            "cat.yaml:5: apps.1.bandwidth: 'fast' is not a rate in bytes/s (e.g. 750M, 2.5G, 7.5e8)");
  EXPECT_EQ(catalog_error("apps:\n  1:\n    name: a\n    command: b\n    iteration_s: fast\n"),
            "cat.yaml:5: apps.1.iteration_s: 'fast' is not a number");
  EXPECT_EQ(catalog_error("apps:\n  1:\n    name: a\n    command: b\n    period: 2.5\n"),
            "cat.yaml:5: apps.1.period: '2.5' is not a whole number of regions");
  EXPECT_EQ(catalog_error("apps:\n  1:\n    name: a\n    command: b\n    period: -1\n"),
            "cat.yaml:5: apps.1.period: '-1' is not in [0, 1e+06]");
  EXPECT_EQ(catalog_error("apps:\n  1:\n    name: a\n    command: b\n    smt: {intensity: 11}\n"),
            "cat.yaml:5: apps.1.smt.intensity: '11' is not in [0, 10]");
  EXPECT_EQ(catalog_error("apps:\n  1:\n    name: a\n    command: b\n    smt: {weight: 1}\n"),
            "cat.yaml:5: apps.1.smt: unknown key 'weight' (expected intensity, sensitivity)");
  EXPECT_EQ(catalog_error("apps:\n  1:\n    name: a\n    command: b\n    team: elastic\n"),
            "cat.yaml:5: apps.1.team: 'elastic' is not one of automatic, malleable, fixed");
  EXPECT_EQ(catalog_error("apps:\n  1:\n    name: a\n    command: \"b 'c\"\n"),
            "cat.yaml:4: apps.1.command: unclosed ' in command");
  EXPECT_EQ(catalog_error("apps:\n  1: {name: a, command: b}\n  01: {name: c, command: d}\n"),
            "cat.yaml:3: apps.01: executable 1 is already defined on line 2");
  EXPECT_EQ(catalog_error("aps: {}\n"), "cat.yaml:1: catalog: unknown key 'aps' (expected apps, default)");
  EXPECT_EQ(catalog_error("apps: {}\n"), "cat.yaml:1: catalog: defines no application (expected 'apps' and/or 'default')");
  EXPECT_EQ(catalog_error(""), "cat.yaml: empty catalog");
  std::string syntax = catalog_error("apps:\n  1: {name: a\n");
  EXPECT_EQ(syntax.rfind("cat.yaml:", 0), 0U) << syntax;
  EXPECT_NE(syntax.find(": YAML: "), std::string::npos) << syntax;
}

TEST(Catalog, ParallelFractionIsTheComplement) {
  auto c = catalog_ok("apps:\n  1: {name: a, speedup: {model: amdahl, parallel_fraction: 0.9}}\n");
  EXPECT_NEAR(c.apps.at(1).speedup->serial_fraction, 0.1, 1e-12);
}

TEST(CatalogSpeedup, Amdahl) {
  cat::SpeedupModel m;
  m.serial_fraction = 0.1;
  EXPECT_DOUBLE_EQ(cat::speedup(m, 1), 1);
  EXPECT_NEAR(cat::speedup(m, 4), 1 / (0.1 + 0.9 / 4), 1e-12);
  EXPECT_DOUBLE_EQ(cat::speedup(m, 0.5), 0.5);  // half a CPU: half the one-CPU speed
  m.serial_fraction = 1;
  EXPECT_DOUBLE_EQ(cat::speedup(m, 32), 1);
}

TEST(CatalogSpeedup, DowneyBranchesAreContinuousAndSaturate) {
  for (double sigma : {0.0, 0.5, 1.0, 2.0}) {
    cat::SpeedupModel m;
    m.kind = cat::SpeedupModel::Kind::downey;
    m.average_parallelism = 8;
    m.sigma = sigma;
    EXPECT_NEAR(cat::speedup(m, 1), 1, 1e-12) << sigma;
    double prev = 0;
    for (double n = 1; n <= 64; n += 0.25) {
      double s = cat::speedup(m, n);
      EXPECT_GE(s, prev - 1e-12) << "sigma " << sigma << " n " << n;
      EXPECT_LE(s, 8 + 1e-12);
      EXPECT_NEAR(s, prev, n > 1 ? 0.3 : 1) << "jump at sigma " << sigma << " n " << n;
      prev = s;
    }
    EXPECT_NEAR(cat::speedup(m, 64), 8, 1e-9);
  }
  cat::SpeedupModel linear;
  linear.kind = cat::SpeedupModel::Kind::downey;
  linear.average_parallelism = 8;
  linear.sigma = 0;
  EXPECT_DOUBLE_EQ(cat::speedup(linear, 5), 5);  // sigma 0: ideal up to A
}

TEST(CatalogSpeedup, TableInterpolates) {
  cat::SpeedupModel m;
  m.kind = cat::SpeedupModel::Kind::table;
  m.points = {{2, 2.2}, {4, 4.6}};
  EXPECT_DOUBLE_EQ(cat::speedup(m, 1), 1);
  EXPECT_DOUBLE_EQ(cat::speedup(m, 1.5), 1.6);  // between the implicit (1, 1) and (2, 2.2)
  EXPECT_DOUBLE_EQ(cat::speedup(m, 3), 3.4);
  EXPECT_DOUBLE_EQ(cat::speedup(m, 16), 4.6);   // flat after the last point
}

TEST(CatalogCommand, SplitsWithQuotes) {
  auto argv = cat::split_command("  @amdahl --label 'two words' \"x y\"z '' end ");
  ASSERT_TRUE(argv.ok());
  EXPECT_EQ(*argv, (std::vector<std::string>{"@amdahl", "--label", "two words", "x yz", "", "end"}));
  EXPECT_FALSE(cat::split_command("a \"b").ok());
}

TEST(CatalogCommand, ExpandsProgramsThroughTheCallback) {
  cat::ProgramLookup lookup = [](std::string_view name) -> std::optional<std::string> {
    if (name == "amdahl") return std::string("/opt/cosched/bin/amdahl");
    return std::nullopt;
  };
  auto argv = cat::expand_programs({"@amdahl", "--tag", "@@literal", "plain@x"}, lookup);
  ASSERT_TRUE(argv.ok());
  EXPECT_EQ(*argv, (std::vector<std::string>{"/opt/cosched/bin/amdahl", "--tag", "@literal", "plain@x"}));
  auto missing = cat::expand_programs({"@nosuch", "x"}, lookup);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, cosched::Errc::not_found);
  EXPECT_EQ(missing.error().message, "program '@nosuch' not found (a program shipped with cosched)");
  EXPECT_FALSE(cat::expand_programs({"@"}, lookup).ok());
}

TEST(CatalogCommand, LookupInDirectoriesWantsAnExecutableFile) {
  const std::string dir = testing::TempDir() + "/cosched-lookup";
  ::mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/amdahl") << "#!/bin/sh\n";
  ::chmod((dir + "/amdahl").c_str(), 0755);
  std::ofstream(dir + "/notes") << "text\n";
  ::chmod((dir + "/notes").c_str(), 0644);
  auto lookup = cat::lookup_in_directories({"/nonexistent", dir});
  EXPECT_EQ(lookup("amdahl"), dir + "/amdahl");
  EXPECT_EQ(lookup("notes"), std::nullopt);
  EXPECT_EQ(lookup("../cosched-lookup/amdahl"), std::nullopt);
  EXPECT_EQ(lookup("missing"), std::nullopt);
  std::filesystem::remove_all(dir);  // what the test made
}

TEST(CatalogExamples, ShippedWorkloadsAndCatalogAgree) {
  const std::string dir = std::string(COSCHED_SOURCE_DIR) + "/examples/workloads";
  auto c = cat::load_file(dir + "/catalog.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  for (const char* name : {"w1-mini.swf", "w3-mini.swf", "w4-mini.swf"}) {
    auto w = cosched::swf::read_file(dir + "/" + name);
    ASSERT_TRUE(w.ok()) << w.error().message;
    EXPECT_GE(w->jobs.size(), 4U) << name;
    EXPECT_LE(w->jobs.size(), 8U) << name;
    EXPECT_EQ(w->header.max_procs(), 4) << name;
    for (const auto& job : w->jobs) {
      const cat::App* app = c->find(job.executable);
      ASSERT_NE(app, nullptr) << name << " job " << job.number;
      EXPECT_NE(app->name, "unknown") << name << " job " << job.number;
      EXPECT_FALSE(app->command.empty());
      EXPECT_EQ(app->command[0], "@amdahl");
      auto request = cosched::swf::processor_request(job);
      ASSERT_TRUE(request.ok());
      EXPECT_LE(*request, 4);
    }
  }
}

TEST(CatalogExamples, NpbCatalogCoversTheDemoWorkloadsWithShippedPrograms) {
  const std::string dir = std::string(COSCHED_SOURCE_DIR) + "/examples/workloads";
  auto c = cat::load_file(dir + "/npb-catalog.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  // Every @program must be one the build ships (examples/npb, examples/synthetic): a renamed target would
  // otherwise break the documented demo only when someone runs it.
  struct stat st {};
  const bool built = ::stat(COSCHED_PROGRAMS_DIR "/amdahl", &st) == 0;
  auto lookup = cat::lookup_in_directories({COSCHED_PROGRAMS_DIR});
  for (const char* name : {"w1-mini.swf", "w3-mini.swf", "w3-untuned-mini.swf", "w4-mini.swf"}) {
    auto w = cosched::swf::read_file(dir + "/" + name);
    ASSERT_TRUE(w.ok()) << w.error().message;
    for (const auto& job : w->jobs) {
      const cat::App* app = c->find(job.executable);
      ASSERT_NE(app, nullptr) << name << " job " << job.number;
      ASSERT_FALSE(app->command.empty());
      ASSERT_EQ(app->command[0].rfind('@', 0), 0U) << app->command[0];
      if (built) {
        EXPECT_TRUE(lookup(app->command[0].substr(1)).has_value()) << app->command[0] << " not built";
      }
      EXPECT_TRUE(app->speedup.has_value()) << app->name << ": cosched-sim needs a model";
    }
  }
}
