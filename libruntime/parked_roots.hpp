// Oversubscribed regions, continued (spin_control.hpp lowers the blocktime). libomp hands a CPU over with
// sched_yield in its wait loops only when it counts more OpenMP threads in use than processors
// (KMP_OVERSUBSCRIBED in its kmp.h: threads in use > the processors it found when it started). It counts the
// processors once, from the affinity mask it started with. So a job that cosched narrows later to fewer CPUs
// than its team is not oversubscribed in libomp's eyes, and its waiting threads sleep and wake through
// futexes (or spin) where a run pinned to those CPUs from the start would yield. For a code of many short
// regions that is twice the time: 300 steps of `team-patterns --pattern steps` (147,600 regions), a team of
// 2 on 1 CPU, took 2.5 s narrowed after start with the blocktime at 0, against 1.3 s pinned from the start
// (docs/performance.md, "Oversubscribed regions").
//
// While the job's team outnumbers its CPUs, a keeper thread keeps enough parked threads registered with
// libomp as roots for its count to exceed its processors (each calls __kmpc_global_thread_num once, which
// registers it, then sleeps on a futex); they return, and libomp unregisters them, when the job no longer
// is, or when the RM says another job's threads share its CPUs (proto::rm_cpus_shared: a yielding waiter
// would hand the CPU to that job for a scheduler slice per barrier). They run no OpenMP code and use no CPU.
// The keeper starts with the tool and looks at the team the region's thread stored, and the RM's flag, every
// 20 ms (it sleeps otherwise), so the region's path makes no syscall. A child
// made by fork() has no keeper and parks nothing. libgomp has no such count (nothing is done there), and
// nothing is done when the user capped libomp's thread count (KMP_DEVICE_THREAD_LIMIT, KMP_ALL_THREADS),
// which the parked roots would count against. COSCHED_PARKED_ROOTS=0 turns it off.
#pragma once

namespace cosched::rt {

// Finds __kmpc_global_thread_num and omp_get_num_procs in the OpenMP runtime's own library (nullptr: none)
// and starts the keeper. Called once, at tool initialisation, after registration; calls nothing in the runtime.
void parked_roots_init(void* runtime_handle, bool enabled) noexcept;

// The job's team now outnumbers its CPUs (team > 0), or no longer does (team = 0). Called on a change of
// that state only (spin_follow): one atomic store, and on the first oversubscribed region one call of
// omp_get_num_procs (no syscall); the keeper starts and stops the threads, off the region's path.
void parked_roots_follow(int oversubscribed_team) noexcept;

}  // namespace cosched::rt
