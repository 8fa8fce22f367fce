/* Interposers for the routines through which a program reads or sets its team size, and for the runtime's
 * threadprivate support (docs/architecture.md, "Team sizes a program can observe").
 *
 * libcosched sets nthreads-var to the granted team at regions where nothing is at stake. The program must
 * never see that value: omp_get_max_threads() in serial code returns the program's own nthreads-var, and the
 * next region then runs with exactly that (libcosched latches the read). omp_set_num_threads() and
 * omp_set_dynamic() are the program's requests, which libcosched honours and records; libomp's own dynamic
 * adjustment stays off under an RM. Each interposer asks libcosched what to return or forward: without an
 * RM those calls give the runtime's value back untouched. C and Fortran (trailing underscore, by
 * reference) entry points, and libomp's ompc_* aliases.
 */
#include "forward.h"

/* From libcosched (libruntime/team_control.cpp). */
extern void cosched_team_interposed(void);
extern int cosched_team_read(int real);
extern void cosched_team_set(int n);
extern int cosched_team_set_dynamic(int flag);
extern int cosched_team_get_dynamic(int real);
extern void cosched_team_threadprivate(void);

/* Without this announcement libcosched cannot see reads of the team size, and never resizes. */
__attribute__((constructor)) static void announce(void) { cosched_team_interposed(); }

typedef int (*get_t)(void);
typedef void (*set_t)(int);
typedef void (*set_ref_t)(int *);

EXPORT int omp_get_max_threads(void) {
  REAL(get_t, omp_get_max_threads);
  return cosched_team_read(real_());
}
EXPORT int omp_get_max_threads_(void) {
  REAL(get_t, omp_get_max_threads_);
  return cosched_team_read(real_());
}

/* The runtime's routine runs first: it initialises libomp (and so libcosched's registration) when this is the
 * program's first OpenMP call, and libcosched then records the request. */
EXPORT void omp_set_num_threads(int n) {
  REAL(set_t, omp_set_num_threads);
  real_(n);
  cosched_team_set(n);
}
EXPORT void ompc_set_num_threads(int n) {
  REAL(set_t, ompc_set_num_threads);
  real_(n);
  cosched_team_set(n);
}
EXPORT void omp_set_num_threads_(int *n) {
  REAL(set_ref_t, omp_set_num_threads_);
  real_(n);
  cosched_team_set(*n);
}

/* libcosched keeps the program's dyn-var and libomp's own at 0 under an RM: it returns what libomp must hold. */
EXPORT void omp_set_dynamic(int flag) {
  REAL(set_t, omp_set_dynamic);
  real_(flag);
  int v = cosched_team_set_dynamic(flag);
  if (v != flag) real_(v);
}
EXPORT void ompc_set_dynamic(int flag) {
  REAL(set_t, ompc_set_dynamic);
  real_(flag);
  int v = cosched_team_set_dynamic(flag);
  if (v != flag) real_(v);
}
EXPORT void omp_set_dynamic_(int *flag) {
  REAL(set_ref_t, omp_set_dynamic_);
  real_(flag);
  int v = cosched_team_set_dynamic(*flag);
  if (v != *flag) real_(&v);
}
EXPORT int omp_get_dynamic(void) {
  REAL(get_t, omp_get_dynamic);
  return cosched_team_get_dynamic(real_());
}
EXPORT int omp_get_dynamic_(void) {
  REAL(get_t, omp_get_dynamic_);
  return cosched_team_get_dynamic(real_());
}

/* clang's runtime-managed threadprivate variables (-fno-openmp-use-tls, or types with constructors). */
typedef struct ident ident_t;
typedef void *(*tp_t)(ident_t *, int32_t, void *, size_t);
typedef void *(*tp_cached_t)(ident_t *, int32_t, void *, size_t, void ***);
typedef void (*tp_register_t)(ident_t *, void *, void *, void *, void *);
typedef void (*tp_register_vec_t)(ident_t *, void *, void *, void *, void *, size_t);

EXPORT void *__kmpc_threadprivate(ident_t *loc, int32_t gtid, void *data, size_t size) {
  cosched_team_threadprivate();
  FORWARD_VALUE(tp_t, __kmpc_threadprivate, loc, gtid, data, size);
}
EXPORT void *__kmpc_threadprivate_cached(ident_t *loc, int32_t gtid, void *data, size_t size, void ***cache_) {
  cosched_team_threadprivate();
  FORWARD_VALUE(tp_cached_t, __kmpc_threadprivate_cached, loc, gtid, data, size, cache_);
}
EXPORT void __kmpc_threadprivate_register(ident_t *loc, void *data, void *ctor, void *cctor, void *dtor) {
  cosched_team_threadprivate();
  FORWARD(tp_register_t, __kmpc_threadprivate_register, loc, data, ctor, cctor, dtor);
}
EXPORT void __kmpc_threadprivate_register_vec(ident_t *loc, void *data, void *ctor, void *cctor, void *dtor,
                                              size_t n) {
  cosched_team_threadprivate();
  FORWARD(tp_register_vec_t, __kmpc_threadprivate_register_vec, loc, data, ctor, cctor, dtor, n);
}
