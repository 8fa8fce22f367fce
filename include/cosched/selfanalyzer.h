/* cosched explicit SelfAnalyzer API, for codes relinked against libcosched (-lcosched).
 *
 * Where a program marks its main iterative loop with these calls, the Dynamic Periodicity Detector is
 * bypassed: the iteration boundaries are exact. Everything else (baseline measurement, speedup, reports
 * to the resource manager) is the same as for unmodified binaries. Without a resource manager the calls
 * are cheap no-ops apart from timing. Safe to call from the initial thread only (outside parallel regions).
 */
#ifndef COSCHED_SELFANALYZER_H
#define COSCHED_SELFANALYZER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One iteration of the iterative region `id` (any stable number the program picks, e.g. 1 for the
 * time-step loop) begins / ends. */
void cosched_iter_begin(long id);
void cosched_iter_end(long id);

/* Fortran-callable aliases (gfortran convention: trailing underscore, arguments by reference):
 *   call cosched_iter_begin(1_8) ... call cosched_iter_end(1_8)  */
void cosched_iter_begin_(const long *id);
void cosched_iter_end_(const long *id);

/* The team size the resource manager currently grants this job, or 0 when not under cosched. */
int cosched_allocation(void);

/* Memory traffic the program caused, for the resource manager's app-reported bandwidth sensor: add `bytes`
 * moved between the caches and memory since the last call (e.g. the lines a sweep fetched and wrote back).
 * Any thread may call it, at any time; the RM turns the running total into bytes per second each quantum
 * (docs/architecture.md, "Sensors"). Cost: one atomic add into shared memory, no system call, lock or
 * allocation; call it once per chunk of work (an iteration, a block), not once per access. A no-op when
 * the program does not run under cosched. Reporting 0 is meaningful: "this program moves (almost) nothing".
 *   Fortran: call cosched_report_bytes(int(nbytes, 8))  */
void cosched_report_bytes(uint64_t bytes);
void cosched_report_bytes_(const uint64_t *bytes);

/* Work the program completed, in its own unit (cells updated, particles moved, lines written...), for the
 * co-scheduling policies' progress rate (docs/architecture.md, "Progress rates"): add `units` done since the
 * last call. The RM turns the running total into units per second each quantum and compares a job's rate next
 * to other jobs with its rate alone. Use one unit for the whole run, so that a rate compares with itself;
 * call it once per chunk of work, at least a few times per 100 ms for a precise rate. Cost: one atomic add
 * into shared memory; a no-op without a resource manager.
 *   Fortran: call cosched_report_work(int(units, 8))  */
void cosched_report_work(uint64_t units);
void cosched_report_work_(const uint64_t *units);

#ifdef __cplusplus
}
#endif

#endif /* COSCHED_SELFANALYZER_H */
