// Oversubscribed regions must not burn CPUs. When a region runs more threads than the job has CPUs (a
// latched read, a fixed team, a clause: rules 2-5 of docs/architecture.md, "Team sizes a program can
// observe"), every thread that waits (at a barrier, or idle between regions) spins for libomp's blocktime
// (200 ms by default) on a CPU that a thread with work needs. While the job is so oversubscribed its
// blocktime is lowered to 0 (waiting threads sleep at once), and the value in effect before is restored
// when it no longer is (docs/selfanalyzer.md, "Oversubscribed regions").
//
// libomp's kmp_set_blocktime sets the blocktime ICV of the calling thread's current task; the teams that
// thread forks afterwards copy it into their implicit tasks, and each member reads it at its next barrier
// (fork, join, or explicit) to time its spin. So the call is made by the thread that begins the region,
// before the team forms (OMPT parallel_begin), and it governs that region's team and the wait of its workers
// after it. KMP_BLOCKTIME=infinite or OMP_WAIT_POLICY=active makes libomp spin whatever the ICV says (the
// user asked for it): nothing is changed then. libgomp offers no such entry point: nothing is done there.
#pragma once

namespace cosched::rt {

// Finds kmp_set_blocktime / kmp_get_blocktime in the OpenMP runtime's own library (the handle team_init
// opened; nullptr: none). `enabled`: COSCHED_OVERSUBSCRIBED_YIELD (default on), which also governs the
// parked roots (parked_roots.hpp; `parked_roots`: COSCHED_PARKED_ROOTS, default on). Called once, at tool
// initialisation; calls nothing in the runtime.
void spin_init(void* runtime_handle, bool enabled, bool parked_roots) noexcept;

// The calling thread begins an outermost region of `team` threads on the job's `granted` CPUs. On a change
// of the oversubscribed state only, one call into the runtime, and on a change of the oversubscribed team
// one atomic store for the parked roots; otherwise two thread-local compares. No syscall.
void spin_follow(int team, int granted) noexcept;

}  // namespace cosched::rt
