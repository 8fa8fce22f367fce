// What a job's CPUs bought (docs/usage.md, "What the job's CPUs bought"): for each allocation it held, how
// long, and the efficiency the SelfAnalyzer measured there (its kind and confidence, or none); the
// CPU·seconds it held; and what fewer CPUs would have given. Pure: the RM builds one from a job's record
// for `cosched-ctl report`, the accounting record and the job's own report at exit.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "policies/snapshot.hpp"

namespace cosched::rm {

struct HeldAllocation {
  int cpus = 0;
  double seconds = 0;  // time held at `cpus`, all spells together
};

struct CpuReportInput {
  std::vector<HeldAllocation> held;   // every allocation the job held (0 CPUs: stopped or queued)
  std::vector<policy::Perf> measured; // the latest valid estimate at each allocation it was measured at
  double cpu_seconds = 0;             // CPU·seconds held
  double elapsed_s = 0;
};

// The speed a job keeps with fewer CPUs: the smallest allocation whose speed, by Amdahl's law fitted to the
// estimate, is at least kKeptSpeed of the speed at the estimate's allocation. 0.9 is our choice: a user
// who gives up a tenth of the speed to free CPUs is still told so, in per cent.
inline constexpr double kKeptSpeed = 0.9;

struct FewerCpus {
  bool known = false;     // false: no estimate to extrapolate from
  int at_cpus = 0;        // the allocation the estimate was measured at
  double efficiency = 0;  // there
  int cpus = 0;           // the fewest CPUs keeping at least kKeptSpeed of its speed (at_cpus: none fewer)
  double kept = 0;        // S(cpus) / S(at_cpus)
};

// Amdahl's parallel fraction behind `speedup` at `cpus` (1 for a perfect speedup, 0 for none or worse).
double parallel_fraction(double speedup, int cpus);
// S(q) / S(p) for parallel fraction f.
double kept_speed(double f, int q, int p);

FewerCpus fewer_cpus(const policy::Perf& estimate);

// The estimate the advice rests on: the one at the largest allocation measured, which speaks for every
// smaller one (a job measured at 2 CPUs, then run at 1, is told what 1 kept of 2).
const policy::Perf* main_estimate(const CpuReportInput& in);

// {"cpu_seconds", "elapsed_s", "mean_cpus", "allocations": [{"cpus", "held_s", "efficiency", "speedup",
// "kind", "confidence"}...], "advice": {"at_cpus", "efficiency", "cpus", "kept_speed", "amdahl_f"} or null,
// "summary": one line}
nlohmann::json cpu_report_json(const CpuReportInput& in);

// The report as text for a terminal: the summary line, then one line per allocation.
std::string cpu_report_text(const nlohmann::json& report);

}  // namespace cosched::rm
