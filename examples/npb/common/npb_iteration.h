/* Marks one outer iteration (time step) of a kernel for the cosched SelfAnalyzer.
 *
 * The "relinked" build (-DCOSCHED_RELINK, linked with libcosched) reports exact iteration boundaries through
 * the explicit API, so the runtime needs no periodicity detection, and reports each iteration's memory traffic. The plain build has no dependency on
 * cosched at all: the macros compile to nothing. Call only from the initial thread, outside parallel regions.
 */
#ifndef NPB_ITERATION_H
#define NPB_ITERATION_H

/* The iterative region id every kernel reports: each program has exactly one outer loop. */
#define NPB_ITERATION_REGION 1

/* NPB_REPORT_BYTES(b): after an iteration, the memory traffic it caused by the kernel's analytic model
 * (docs/npb.md, "Memory traffic per iteration"), for the resource manager's app-reported bandwidth sensor
 * (cosched_report_bytes: one atomic add, no system call). `b` is a uint64_t. */
#ifdef COSCHED_RELINK
#include <cosched/selfanalyzer.h>
#define NPB_ITERATION_BEGIN() cosched_iter_begin(NPB_ITERATION_REGION)
#define NPB_ITERATION_END() cosched_iter_end(NPB_ITERATION_REGION)
#define NPB_REPORT_BYTES(b) cosched_report_bytes(b)
#define NPB_BUILD_VARIANT "relinked (libcosched)"
#else
#define NPB_ITERATION_BEGIN() ((void)0)
#define NPB_ITERATION_END() ((void)0)
#define NPB_REPORT_BYTES(b) ((void)(b))
#define NPB_BUILD_VARIANT "plain"
#endif

#endif /* NPB_ITERATION_H */
