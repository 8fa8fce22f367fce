// A synthetic OpenMP program for Analyzer tests: an iterative loop of parallel regions whose iteration
// time follows Amdahl's law at the team size each region gets, driven exactly as the OMPT tool drives
// the Analyzer (team_for, then on_region), on a virtual clock.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "selfanalyzer/analyzer.hpp"

namespace cosched::sa::testing {

struct AmdahlLoop {
  std::vector<std::uint64_t> regions;  // region ids of one iteration, in order
  double t1_s = 1.0;                   // one-CPU iteration time
  double f = 0.9;                      // parallel fraction

  // Each region takes an equal share of the iteration time at its team size.
  [[nodiscard]] std::uint64_t region_ns(int team) const {
    const double iteration_s = t1_s * ((1.0 - f) + f / team);
    return static_cast<std::uint64_t>(std::llround(iteration_s * 1e9 / static_cast<double>(regions.size())));
  }
};

// How close a result must come to the value worked out by hand.
inline constexpr double kTol = 1e-6;

inline std::vector<std::uint64_t> region_ids(int count, std::uint64_t base = 0x401000) {
  std::vector<std::uint64_t> ids;
  for (int i = 0; i < count; ++i) ids.push_back(base + 0x40 * static_cast<std::uint64_t>(i));
  return ids;
}

class Driver {
 public:
  explicit Driver(Analyzer& analyzer) : analyzer_(analyzer) {}

  int granted = 1;            // the RM's allocation
  int floor = 1;              // the smallest team the runtime may give (2 for a job not declared malleable)
  std::uint64_t now_ns = 1'000'000'000;
  std::vector<int> teams;     // team used for every region, in order
  std::vector<Phase> phases;  // Analyzer phase after every region

  void region(std::uint64_t id, std::uint64_t duration_ns_at_team1, const AmdahlLoop* loop = nullptr) {
    // As libcosched: the team is raised to the floor, and the Analyzer is fed the CPUs it can use.
    const int team = std::min(std::max(analyzer_.team_for(granted), floor), std::max(granted, 1));
    analyzer_.on_region(id, now_ns, team);
    teams.push_back(team);
    phases.push_back(analyzer_.phase());
    now_ns += loop != nullptr ? loop->region_ns(team) : duration_ns_at_team1;
  }

  void iterations(const AmdahlLoop& loop, int count) {
    for (int k = 0; k < count; ++k)
      for (const std::uint64_t id : loop.regions) region(id, 0, &loop);
  }

  // Runs iterations until a report newer than `after_seq` exists (at most `limit` iterations).
  bool until_report(const AmdahlLoop& loop, std::uint64_t after_seq, int limit = 100) {
    for (int k = 0; k < limit; ++k) {
      iterations(loop, 1);
      if (analyzer_.report_seq() > after_seq) return true;
    }
    return false;
  }

  // Runs iterations until the latest report was measured at `cpus` (at most `limit` iterations);
  // returns how many iterations that took, or -1.
  int until_report_at(const AmdahlLoop& loop, int cpus, int limit = 100) {
    for (int k = 1; k <= limit; ++k) {
      iterations(loop, 1);
      Report r;
      if (analyzer_.report(r) && r.cpus == cpus) return k;
    }
    return -1;
  }

  // The same, with the explicit iteration API around each iteration.
  void explicit_iterations(const AmdahlLoop& loop, long id, int count) {
    for (int k = 0; k < count; ++k) {
      analyzer_.on_iteration_begin(id, now_ns, analyzer_.team_for(granted));
      for (const std::uint64_t region_id : loop.regions) region(region_id, 0, &loop);
      analyzer_.on_iteration_end(id, now_ns, analyzer_.team_for(granted));
    }
  }

 private:
  Analyzer& analyzer_;
};

// The analyzer's current report; a test that asks for it expects one to exist.
inline Report latest(const Analyzer& a) {
  Report r;
  EXPECT_TRUE(a.report(r));
  return r;
}

}  // namespace cosched::sa::testing
