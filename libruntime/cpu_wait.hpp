// How long the job's threads waited for a CPU (the run-queue delay the kernel accounts per thread in
// /proc/self/task/<tid>/schedstat, second field): the SelfAnalyzer's evidence that an iteration was slowed by
// load cosched does not control (docs/selfanalyzer.md, "Outside load"). Needs no hardware counter.
//
// Cost: one open per thread, when the thread starts (OMPT thread_begin) or at initialisation; then one
// pread per thread at each *sampled* iteration boundary only (never on the per-region path).
#pragma once

#include <cstdint>

namespace cosched::rt {

// The calling thread joins the set whose waits are summed (its schedstat file is opened now).
void cpu_wait_add_self() noexcept;

// Whether the team now has more threads than CPUs (rule 7 of docs/architecture.md): its threads then wait
// for each other, and the waits say nothing about outside load. Set on the hot path (one relaxed store).
void cpu_wait_set_oversubscribed(bool oversubscribed) noexcept;

// Total run-queue delay of the threads, in ns; sa::kWaitUnknown while the team is oversubscribed or
// nothing can be read.
std::uint64_t cpu_wait_ns() noexcept;

}  // namespace cosched::rt
