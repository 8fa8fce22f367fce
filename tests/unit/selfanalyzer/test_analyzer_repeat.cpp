// Analyzer::on_region_repeat, libcosched's fast path: an Analyzer that is offered every region whose team is
// the previous one's through on_region_repeat first (on_region when it declines) must be indistinguishable
// from one fed on_region only, at every region: same phase, counters, reports and team choices.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "selfanalyzer/analyzer.hpp"

using namespace cosched::sa;

namespace {

std::uint64_t g_now_ns = 0;
std::uint64_t clock_now() noexcept { return g_now_ns; }
std::uint64_t g_wait_ns = 0;
std::uint64_t wait_now() noexcept { return g_wait_ns; }

void expect_same(const Analyzer& a, const Analyzer& b, std::size_t event) {
  ASSERT_EQ(a.phase(), b.phase()) << "event " << event;
  ASSERT_EQ(a.period(), b.period()) << "event " << event;
  ASSERT_EQ(a.regions(), b.regions()) << "event " << event;
  ASSERT_EQ(a.iterations(), b.iterations()) << "event " << event;
  ASSERT_EQ(a.last_team(), b.last_team()) << "event " << event;
  ASSERT_EQ(a.progress_version(), b.progress_version()) << "event " << event;
  ASSERT_EQ(a.report_seq(), b.report_seq()) << "event " << event;
  ASSERT_EQ(a.restarts(), b.restarts()) << "event " << event;
  ASSERT_EQ(a.contaminated(), b.contaminated()) << "event " << event;
  ASSERT_EQ(a.clean_iterations(), b.clean_iterations()) << "event " << event;
  ASSERT_EQ(a.clean_ns(), b.clean_ns()) << "event " << event;
  ASSERT_EQ(a.clean_wait_ns(), b.clean_wait_ns()) << "event " << event;
  ASSERT_EQ(a.clean_team(), b.clean_team()) << "event " << event;
  for (int granted = 1; granted <= 8; ++granted) ASSERT_EQ(a.team_for(granted), b.team_for(granted));
  Report ra, rb;
  ASSERT_EQ(a.report(ra), b.report(rb));
  ASSERT_EQ(ra.seq, rb.seq);
  ASSERT_EQ(ra.speedup, rb.speedup);
  ASSERT_EQ(ra.iteration_s, rb.iteration_s);
  ASSERT_EQ(ra.baseline_s, rb.baseline_s);
  ASSERT_EQ(ra.cpus, rb.cpus);
  ASSERT_EQ(ra.samples, rb.samples);
}

// Loops of 1 to 40 regions, changes of grant, of loop, odd regions, stops, a new baseline size, timed with
// and without batching (Config::min_sample_s) and with a wait source.
void run(std::uint32_t seed, double min_sample_s) {
  Config c;
  c.min_sample_s = min_sample_s;
  c.min_report_interval_s = 0.005;
  c.max_period = 64;
  Analyzer plain(c);
  Analyzer fast(c);
  plain.set_wait_source(&wait_now);
  fast.set_wait_source(&wait_now);
  std::mt19937 rng(seed);
  g_now_ns = 1'000'000'000;
  g_wait_ns = 0;
  int granted = 2;
  std::size_t event = 0;
  int repeats = 0;
  for (int phase = 0; phase < 8; ++phase) {
    const int period = 1 + static_cast<int>(rng() % 40);
    std::vector<std::uint64_t> body;
    const std::uint64_t base = 0x401000 + 0x10000 * (rng() % 3);
    for (int i = 0; i < period; ++i) body.push_back(base + 0x40 * static_cast<std::uint64_t>(i));
    const int iterations = 200 + static_cast<int>(rng() % 400);
    for (int it = 0; it < iterations; ++it) {
      if (rng() % 97 == 0) granted = 1 + static_cast<int>(rng() % 4);
      if (rng() % 151 == 0) {
        plain.discard_iteration();
        fast.discard_iteration();
      }
      if (rng() % 211 == 0) {
        const int base_cpus = 1 + static_cast<int>(rng() % 2);
        plain.set_baseline_cpus(base_cpus);
        fast.set_baseline_cpus(base_cpus);
      }
      std::vector<std::uint64_t> ids = body;
      if (rng() % 173 == 0) ids.push_back(0x9999);  // one odd region
      for (const std::uint64_t id : ids) {
        const int team = plain.team_for(granted);
        ASSERT_EQ(team, fast.team_for(granted));
        plain.on_region(id, team, &clock_now);
        if (team == fast.last_team() && fast.on_region_repeat(id)) {
          ++repeats;
        } else {
          fast.on_region(id, team, &clock_now);
        }
        expect_same(plain, fast, event++);
        g_now_ns += 1000 + 20000 / static_cast<std::uint64_t>(team) + rng() % 500;
        g_wait_ns += rng() % 50;
      }
    }
  }
  EXPECT_GT(repeats, static_cast<int>(event / 2));  // the fast path was taken for most regions
  EXPECT_GT(plain.report_seq(), 0U);
}

TEST(AnalyzerRepeat, SameAsOnRegionWithBatchedSamples) {
  for (std::uint32_t seed = 1; seed <= 6; ++seed) run(seed, 0.0005);
}

TEST(AnalyzerRepeat, SameAsOnRegionSampleByIteration) {
  for (std::uint32_t seed = 11; seed <= 14; ++seed) run(seed, 0);
}

// The fast path declines what it must leave to on_region: a region other than the expected one, and a
// boundary that ends a timed sample (the clock is read).
TEST(AnalyzerRepeat, DeclinesWhatOnlyOnRegionDoes) {
  Config c;  // min_sample_s = 0: every boundary ends a sample
  Analyzer a(c);
  g_now_ns = 1'000'000'000;
  int ends = 0;
  for (int k = 0; k < 20000; ++k) {
    const std::uint64_t id = 0x401000 + 0x40 * static_cast<std::uint64_t>(k % 3);
    const int team = a.team_for(2);
    if (team == a.last_team() && a.on_region_repeat(id)) {
      EXPECT_NE(k % 3, 0) << "region " << k << ": a boundary ending a sample was taken by the fast path";
    } else {
      a.on_region(id, team, &clock_now);
      if (k % 3 == 0) ++ends;
    }
    g_now_ns += 10000;
  }
  EXPECT_GT(ends, 6000);
  EXPECT_FALSE(a.on_region_repeat(0x777777));  // not the expected region
}

}  // namespace
