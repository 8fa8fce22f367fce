/* Marks one outer iteration (time step) of a kernel for the cosched SelfAnalyzer.
 *
 * The "relinked" build (-DCOSCHED_RELINK, linked with libcosched) reports exact iteration boundaries through
 * the explicit API, so the runtime needs no periodicity detection. The plain build has no dependency on
 * cosched at all: the macros compile to nothing. Call only from the initial thread, outside parallel regions.
 */
#ifndef NPB_ITERATION_H
#define NPB_ITERATION_H

/* The iterative region id every kernel reports: each program has exactly one outer loop. */
#define NPB_ITERATION_REGION 1

#ifdef COSCHED_RELINK
#include <cosched/selfanalyzer.h>
#define NPB_ITERATION_BEGIN() cosched_iter_begin(NPB_ITERATION_REGION)
#define NPB_ITERATION_END() cosched_iter_end(NPB_ITERATION_REGION)
#define NPB_BUILD_VARIANT "relinked (libcosched)"
#else
#define NPB_ITERATION_BEGIN() ((void)0)
#define NPB_ITERATION_END() ((void)0)
#define NPB_BUILD_VARIANT "plain"
#endif

#endif /* NPB_ITERATION_H */
