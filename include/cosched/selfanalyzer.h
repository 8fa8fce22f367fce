/* cosched explicit SelfAnalyzer API, for codes relinked against libcosched (-lcosched).
 *
 * Where a program marks its main iterative loop with these calls, the Dynamic Periodicity Detector is
 * bypassed: the iteration boundaries are exact. Everything else (baseline measurement, speedup, reports
 * to the resource manager) is the same as for unmodified binaries. Without a resource manager the calls
 * are cheap no-ops apart from timing. Safe to call from the initial thread only (outside parallel regions).
 */
#ifndef COSCHED_SELFANALYZER_H
#define COSCHED_SELFANALYZER_H

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

#ifdef __cplusplus
}
#endif

#endif /* COSCHED_SELFANALYZER_H */
