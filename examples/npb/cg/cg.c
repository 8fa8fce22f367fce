/* NPB-class CG (conjugate gradient), NPB 3 spec section 2.4 (kernel CG).
 *
 * Estimates the smallest eigenvalue of a large sparse symmetric positive definite matrix A by inverse power
 * iteration: each outer iteration solves A z = x approximately with 25 unpreconditioned conjugate gradient
 * steps, reports zeta = shift + 1 / (x . z) and normalises x = z / ||z||. Verification compares the last zeta.
 *
 * Every vector operation is its own `omp parallel for`, so each CG step is a fixed short sequence of parallel
 * regions and each outer iteration repeats it: the structure the cosched runtime detects.
 */
#include "cg_matrix.h"
#include "npb_common.h"
#include "npb_iteration.h"
#include "npb_random.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { CG_STEPS = 25 }; /* conjugate gradient steps per outer iteration (spec 2.4) */

#define CG_RCOND 0.1
#define CG_EPSILON 1e-10

struct cg_class {
    char id;
    int order;      /* na */
    int nonzer;     /* nonzeros per random vector */
    int iterations; /* niter */
    double shift;
    double zeta;    /* reference zeta (spec 2.4, verification table) */
};

static const struct cg_class cg_classes[] = {
    {'S', 1400, 7, 15, 10.0, 8.5971775078648},
    {'W', 7000, 8, 15, 12.0, 10.362595087124},
    {'A', 14000, 11, 15, 20.0, 17.130235054029},
};

/* Work vectors of one solve. */
struct cg_vectors {
    double *x, *z, *p, *q, *r;
};

/* Row j of the sparse matrix (CSR arrays, read into locals by the caller so that the compiler keeps them in
 * registers across the loops that write vectors) times vector v. */
static inline double row_times(const long *row_start, const int *column, const double *value, int j,
                               const double *v)
{
    double sum = 0.0;
    for (long k = row_start[j]; k < row_start[j + 1]; k++)
        sum += value[k] * v[column[k]];
    return sum;
}

/* Approximately solves A z = x with CG_STEPS conjugate gradient steps from z = 0; returns ||x - A z||. */
static double conjugate_gradient(const struct cg_matrix *a, struct cg_vectors *v)
{
    const int n = a->order;
    const long *row_start = a->row_start;
    const int *column = a->column;
    const double *value = a->value;
    double *x = v->x, *z = v->z, *p = v->p, *q = v->q, *r = v->r;

    double rho = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : rho)
    for (int j = 0; j < n; j++) {
        q[j] = 0.0;
        z[j] = 0.0;
        r[j] = x[j];
        p[j] = x[j];
        rho += r[j] * r[j];
    }

    for (int step = 0; step < CG_STEPS; step++) {
        double p_dot_q = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : p_dot_q)
        for (int j = 0; j < n; j++) {
            const double sum = row_times(row_start, column, value, j, p);
            q[j] = sum;
            p_dot_q += p[j] * sum;
        }
        const double alpha = rho / p_dot_q;
        const double rho_previous = rho;
        rho = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : rho)
        for (int j = 0; j < n; j++) {
            z[j] += alpha * p[j];
            r[j] -= alpha * q[j];
            rho += r[j] * r[j];
        }
        const double beta = rho / rho_previous;
#pragma omp parallel for schedule(static)
        for (int j = 0; j < n; j++)
            p[j] = r[j] + beta * p[j];
    }

    /* The residual is recomputed from its definition rather than taken from the recurrence (spec 2.4). */
    double residual2 = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : residual2)
    for (int j = 0; j < n; j++) {
        const double d = x[j] - row_times(row_start, column, value, j, z);
        residual2 += d * d;
    }
    return sqrt(residual2);
}

/* One inverse power step after a solve: returns zeta and sets x = z / ||z||. */
static double power_step(int n, struct cg_vectors *v, double shift)
{
    double x_dot_z = 0.0, z_dot_z = 0.0;
    double *x = v->x, *z = v->z;
#pragma omp parallel for schedule(static) reduction(+ : x_dot_z, z_dot_z)
    for (int j = 0; j < n; j++) {
        x_dot_z += x[j] * z[j];
        z_dot_z += z[j] * z[j];
    }
    const double inverse_norm = 1.0 / sqrt(z_dot_z);
#pragma omp parallel for schedule(static)
    for (int j = 0; j < n; j++)
        x[j] = inverse_norm * z[j];
    return shift + 1.0 / x_dot_z;
}

/* Memory traffic of one outer iteration (docs/npb.md, "Memory traffic per iteration"; reads once, writes
 * twice): the matrix (8-byte values, 4-byte columns, 8-byte row offsets) is read by 26 products, 25 CG steps
 * and the residual; each sweep over a work vector of n doubles counts once per vector read (p, gathered by
 * the product, counts once) and twice per vector written. Mirrors conjugate_gradient and power_step. */
static uint64_t cg_traffic(int n, long nonzeros)
{
    const uint64_t vector = 8 * (uint64_t)n;
    const uint64_t matrix = 12 * (uint64_t)nonzeros + 8 * ((uint64_t)n + 1);
    const uint64_t start = vector * (1 + 2 * 4);         /* reads x; writes q, z, r, p */
    const uint64_t step = matrix + vector * (1 + 2)      /* q = A p: reads p, writes q */
                          + vector * (2 + 2 * 2)         /* z += alpha p, r -= alpha q */
                          + vector * (1 + 2);            /* p = r + beta p */
    const uint64_t residual = matrix + vector * 2;       /* x - A z */
    const uint64_t power = vector * 2 + vector * (1 + 2); /* x.z and z.z; x = z / ||z|| */
    return start + CG_STEPS * step + residual + power;
}

static void set_all(int n, double *x, double value)
{
#pragma omp parallel for schedule(static)
    for (int j = 0; j < n; j++)
        x[j] = value;
}

int main(int argc, char **argv)
{
    static const struct npb_program program = {
        "CG", "smallest eigenvalue of a sparse SPD matrix by inverse power iteration with CG (NPB 3 spec 2.4)",
        "  S  n=1400,  7 nonzeros/vector, 15 iterations\n"
        "  W  n=7000,  8 nonzeros/vector, 15 iterations\n"
        "  A  n=14000, 11 nonzeros/vector, 15 iterations\n"};
    char class_id;
    int status;
    const int overridden = npb_iterations_override(argc, argv);
    if (!npb_parse_class(argc, argv, &program, &class_id, &status))
        return status;
    const struct cg_class *cls = &cg_classes[npb_class_index(class_id)];
    const int n = cls->order;
    const int iterations = overridden > 0 ? overridden : cls->iterations;

    /* The spec draws one number before building the matrix. */
    double seed = NPB_DEFAULT_SEED;
    npb_randlc(&seed, NPB_MULTIPLIER);
    struct cg_matrix a;
    cg_matrix_build(&a, n, cls->nonzer, CG_RCOND, cls->shift, &seed);
    printf(" NPB-class CG, class %c: n=%d, %ld nonzeros, %d iterations\n", cls->id, n, a.nonzeros,
           iterations);

    struct cg_vectors v;
    double *storage = npb_alloc(sizeof(double) * 5 * (size_t)n, "CG vectors");
    v.x = storage;
    v.z = storage + n;
    v.p = storage + 2 * (size_t)n;
    v.q = storage + 3 * (size_t)n;
    v.r = storage + 4 * (size_t)n;

    /* One untimed iteration touches all data (page faults, caches), as the spec's driver does. */
    set_all(n, v.x, 1.0);
    conjugate_gradient(&a, &v);
    power_step(n, &v, cls->shift);
    set_all(n, v.x, 1.0);

    const uint64_t traffic = cg_traffic(n, a.nonzeros);
    npb_print_traffic(traffic);

    double zeta = 0.0;
    double start = npb_seconds();
    for (int it = 1; it <= iterations; it++) {
        NPB_ITERATION_BEGIN();
        double residual = conjugate_gradient(&a, &v);
        zeta = power_step(n, &v, cls->shift);
        NPB_ITERATION_END();
        NPB_REPORT_BYTES(traffic);
        printf("  iteration %2d  ||r|| = %20.14e  zeta = %20.13e\n", it, residual, zeta);
    }
    double seconds = npb_seconds() - start;

    printf(" Verification (spec 2.4, relative error <= %.0e):\n", CG_EPSILON);
    bool verified = npb_check_relative("zeta", zeta, cls->zeta, CG_EPSILON);

    /* The spec's operation count per outer iteration. */
    const double nz2 = (double)cls->nonzer * (cls->nonzer + 1);
    const double flops =
        2.0 * iterations * n * (3.0 + nz2 + CG_STEPS * (5.0 + nz2) + 3.0);
    char size[32];
    snprintf(size, sizeof size, "%d", n);
    struct npb_result result = {
        .kernel = "CG",
        .class_id = cls->id,
        .size = size,
        .iterations = iterations,
        .seconds = seconds,
        .mops = flops / seconds / 1e6,
        .operation = "floating point",
        .verified = verified,
        .skipped = overridden > 0,
    };
    free(storage);
    cg_matrix_free(&a);
    return npb_report(&result);
}
