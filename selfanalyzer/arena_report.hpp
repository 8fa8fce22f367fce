// The one place a SelfAnalyzer Report becomes arena fields (proto::JobBlock), field for field. The caller
// owns the job block's seqlock around it; everything here is a relaxed store (no syscall, lock or
// allocation: it runs on libcosched's hot path once per report).
#pragma once

#include "cosched/protocol.hpp"
#include "selfanalyzer/analyzer.hpp"

namespace cosched::sa {

inline void store_report(const Report& r, proto::JobBlock& job) noexcept {
  constexpr auto relaxed = std::memory_order_relaxed;
  job.speedup.store(r.speedup, relaxed);
  job.efficiency.store(r.efficiency, relaxed);
  job.iteration_s.store(r.iteration_s, relaxed);
  job.baseline_s.store(r.baseline_s, relaxed);
  job.spread.store(r.spread, relaxed);
  job.amdahl_f.store(r.amdahl_f, relaxed);
  job.cpus.store(r.cpus, relaxed);
  job.samples.store(r.samples, relaxed);
  job.baseline_team.store(r.baseline_team, relaxed);
  job.reports.store(r.seq, relaxed);
}

}  // namespace cosched::sa
