// Synthetic workload generator: determinism, arrival and size statistics, load, mixes, presets, options.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>

#include "sim/gen/generator.hpp"
#include "qs/swf.hpp"

namespace gen = cosched::swfgen;
namespace swf = cosched::swf;

namespace {

std::string text_of(const swf::Workload& w) {
  std::ostringstream out;
  swf::write(out, w);
  return out.str();
}

swf::Workload generate_ok(const gen::Config& c) {
  auto w = gen::generate(c);
  EXPECT_TRUE(w.ok()) << (w.ok() ? "" : w.error().message);
  return w.ok() ? *w : swf::Workload{};
}

double demand(const swf::Workload& w) {
  double d = 0;
  for (const auto& j : w.jobs) d += static_cast<double>(j.requested_procs) * j.run_s;
  return d;
}

gen::Config big_config() {
  gen::Config c;
  c.jobs = 100000;
  c.max_procs = 1024;
  c.load = 0.8;
  c.seed = 7;
  c.apps = {{1, 0.5, 0, 0}, {2, 0.3, 0, 0}, {3, 0.2, 0, 0}};
  return c;
}

}  // namespace

TEST(SwfGen, SameSeedSameFileOtherSeedOtherFile) {
  gen::Config c;
  c.jobs = 2000;
  const std::string a = text_of(generate_ok(c));
  EXPECT_EQ(a, text_of(generate_ok(c)));
  c.seed = 2;
  EXPECT_NE(a, text_of(generate_ok(c)));
}

TEST(SwfGen, ChangingTheLoadKeepsTheJobBodies) {
  gen::Config c;
  c.jobs = 500;
  auto low = generate_ok(c);
  c.load = 0.4;
  auto high = generate_ok(c);
  ASSERT_EQ(low.jobs.size(), high.jobs.size());
  for (std::size_t i = 0; i < low.jobs.size(); ++i) {
    EXPECT_EQ(low.jobs[i].run_s, high.jobs[i].run_s);
    EXPECT_EQ(low.jobs[i].requested_procs, high.jobs[i].requested_procs);
  }
}

TEST(SwfGen, PoissonArrivalsHitTheTargetLoad) {
  const gen::Config c = big_config();
  auto w = generate_ok(c);
  ASSERT_EQ(w.jobs.size(), 100000U);
  const double n = static_cast<double>(w.jobs.size());
  const double expected_mean = demand(w) / (n * c.load * static_cast<double>(c.max_procs));
  const double span = w.jobs.back().submit_s;
  const double mean = span / (n - 1);
  EXPECT_NEAR(mean / expected_mean, 1.0, 0.02);
  EXPECT_NEAR(demand(w) / (span * static_cast<double>(c.max_procs)), c.load, 0.02);
  // Exponential gaps: coefficient of variation ~1 (whole-second rounding adds a little).
  double sq = 0;
  for (std::size_t i = 1; i < w.jobs.size(); ++i) {
    double gap = w.jobs[i].submit_s - w.jobs[i - 1].submit_s;
    EXPECT_GE(gap, 0);
    sq += (gap - mean) * (gap - mean);
  }
  EXPECT_NEAR(std::sqrt(sq / (n - 1)) / mean, 1.0, 0.05);
}

TEST(SwfGen, MixSizesAndRunTimes) {
  const gen::Config c = big_config();
  auto w = generate_ok(c);
  std::map<std::int64_t, int> per_exe;
  double run_sum = 0;
  for (const auto& j : w.jobs) {
    ++per_exe[j.executable];
    run_sum += j.run_s;
    ASSERT_GE(j.requested_procs, 1);
    ASSERT_LE(j.requested_procs, 1024);
    EXPECT_EQ(j.allocated_procs, j.requested_procs);
    EXPECT_EQ(j.status, swf::kCompleted);
    EXPECT_EQ(j.requested_time_s, -1);
  }
  EXPECT_NEAR(per_exe[1] / 1e5, 0.5, 0.01);
  EXPECT_NEAR(per_exe[2] / 1e5, 0.3, 0.01);
  EXPECT_NEAR(per_exe[3] / 1e5, 0.2, 0.01);
  EXPECT_NEAR(run_sum / 1e5 / c.runtime_mean_s, 1.0, 0.03);  // lognormal mean
}

TEST(SwfGen, PowerOfTwoSizesAndEstimates) {
  gen::Config c;
  c.jobs = 5000;
  c.max_procs = 100;
  c.pow2_sizes = true;
  c.estimate_factor = 1.5;
  auto w = generate_ok(c);
  std::map<std::int64_t, int> sizes;
  for (const auto& j : w.jobs) {
    ++sizes[j.requested_procs];
    EXPECT_EQ(j.requested_time_s, std::ceil(1.5 * j.run_s));
  }
  EXPECT_EQ(sizes.size(), 7U);  // 1, 2, 4, ..., 64
  for (const auto& [size, count] : sizes) EXPECT_EQ(size & (size - 1), 0) << size;
}

TEST(SwfGen, LublinModelShape) {
  gen::Config c;
  c.jobs = 50000;
  c.max_procs = 128;
  c.model = gen::Model::lublin;
  auto w = generate_ok(c);
  int serial = 0, pow2 = 0;
  double small_run = 0, big_run = 0;
  int small = 0, big = 0;
  for (const auto& j : w.jobs) {
    ASSERT_LE(j.requested_procs, 128);
    ASSERT_LE(j.run_s, c.max_runtime_s);
    serial += j.requested_procs == 1 ? 1 : 0;
    pow2 += (j.requested_procs > 1 && (j.requested_procs & (j.requested_procs - 1)) == 0) ? 1 : 0;
    (j.requested_procs <= 4 ? small_run : big_run) += std::log(j.run_s);
    (j.requested_procs <= 4 ? small : big) += 1;
  }
  EXPECT_NEAR(serial / 5e4, 0.244, 0.01);
  EXPECT_GT(pow2 / 5e4, 0.576 - 0.02);  // rounded ones plus those that land on a power of two anyway
  EXPECT_GT(big_run / big, small_run / small);  // bigger jobs run longer in this model
}

TEST(SwfGen, DurationModeFillsTheWindowAtTheLoad) {
  gen::Config c;
  c.duration_s = 3600;
  c.max_procs = 64;
  c.load = 0.6;
  c.runtime_mean_s = 60;
  auto w = generate_ok(c);
  ASSERT_FALSE(w.jobs.empty());
  for (const auto& j : w.jobs) {
    EXPECT_GE(j.submit_s, 0);
    EXPECT_LT(j.submit_s, 3600);
  }
  double biggest = 0;
  for (const auto& j : w.jobs) biggest = std::max(biggest, static_cast<double>(j.requested_procs) * j.run_s);
  EXPECT_NEAR(demand(w), 0.6 * 64 * 3600, biggest / 2 + 1e-9);
}

TEST(SwfGen, PdpaPresetsFollowTable1) {
  for (const auto& name : gen::preset_names()) {
    auto c = gen::preset(name);
    ASSERT_TRUE(c.ok()) << name;
    c->load = 1.0;
    auto w = generate_ok(*c);
    ASSERT_FALSE(w.jobs.empty()) << name;
    EXPECT_EQ(w.header.max_procs(), 60);
    std::map<std::int64_t, double> share;
    for (const auto& j : w.jobs) {
      EXPECT_LT(j.submit_s, 300);
      EXPECT_EQ(j.requested_procs, j.executable == 4 ? 2 : 30) << name;
      share[j.executable] += static_cast<double>(j.requested_procs) * j.run_s;
    }
    EXPECT_EQ(share.size(), c->apps.size()) << name;
    EXPECT_NEAR(demand(w) / (60 * 300), 1.0, 0.2) << name;  // a few big jobs: granular, not exact
  }
  auto w4 = gen::preset("pdpa-w4");
  ASSERT_TRUE(w4.ok());
  EXPECT_EQ(gen::format_apps(w4->apps), "1:0.25:30:6,2:0.25:30:100,3:0.25:30:32,4:0.25:2:100");
  EXPECT_EQ(gen::preset("w5").error().message, "no preset 'w5' (pdpa-w1..pdpa-w4)");
}

TEST(SwfGen, OutputReadsBackWithItsHeader) {
  gen::Config c;
  c.jobs = 300;
  c.seed = 11;
  auto w = generate_ok(c);
  auto back = swf::parse(text_of(w), "gen.swf");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->jobs.size(), 300U);
  EXPECT_EQ(back->header.max_procs(), 64);
  ASSERT_NE(back->header.find("MaxJobs"), nullptr);
  EXPECT_EQ(*back->header.find("MaxJobs"), "300");
  auto notes = back->header.find_all("Note");
  ASSERT_FALSE(notes.empty());
  EXPECT_EQ(notes[0], "generated by: " + gen::command_line(c));
}

TEST(SwfGen, AppsSpec) {
  auto a = gen::parse_apps("1:0.5,2:0.25:30,4:0.25:2:100.5");
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->size(), 3U);
  EXPECT_EQ((*a)[1], (gen::AppShare{2, 0.25, 30, 0}));
  EXPECT_EQ((*a)[2], (gen::AppShare{4, 0.25, 2, 100.5}));
  EXPECT_EQ(gen::format_apps(*a), "1:0.5,2:0.25:30,4:0.25:2:100.5");
  EXPECT_EQ(gen::parse_apps("1").error().message,
            "--apps '1': needs 2 to 4 ':'-separated parts (expected EXE:WEIGHT[:PROCS[:RUNTIME_S]],...)");
  EXPECT_EQ(gen::parse_apps("1:x").error().message,
            "--apps '1:x': weight is not a positive number (expected EXE:WEIGHT[:PROCS[:RUNTIME_S]],...)");
  EXPECT_FALSE(gen::parse_apps("1:1:0").ok());
  EXPECT_FALSE(gen::parse_apps("").ok());
}

TEST(SwfGen, ValidationNamesTheOption) {
  gen::Config c;
  EXPECT_EQ(gen::validate(c).error().message, "give exactly one of --jobs N and --duration SECONDS");
  c.jobs = 10;
  EXPECT_TRUE(gen::validate(c).ok());
  c.mix_by = gen::MixBy::load;
  EXPECT_EQ(gen::validate(c).error().message, "--mix-by load needs --duration");
  c.mix_by = gen::MixBy::jobs;
  c.apps = {{1, 1, 0, 0}, {1, 1, 0, 0}};
  EXPECT_EQ(gen::validate(c).error().message, "--apps: executable 1 appears twice");
  c.apps = {{1, 1, 128, 0}};
  EXPECT_EQ(gen::validate(c).error().message, "--apps: executable 1: size must be in [1, --max-procs]");
  c.apps = {{1, 1, 0, 0}};
  c.load = 0;
  EXPECT_FALSE(gen::generate(c).ok());
}

TEST(SwfGen, MeanInterarrivalReplacesLoad) {
  gen::Config c;
  c.jobs = 20000;
  c.mean_interarrival_s = 30;
  c.integer_times = false;
  auto w = generate_ok(c);
  EXPECT_NEAR(w.jobs.back().submit_s / 19999 / 30, 1.0, 0.03);
}
