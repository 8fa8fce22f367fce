/* NPB-class CG written the SPMD way: one `#pragma omp parallel` around the whole time loop, with orphaned
 * `omp for` loops in the functions it calls (the style of the C++ port of the NAS benchmarks and of many CFD
 * codes). Same problem, same classes and same verification as cg.c (NPB 3 spec section 2.4); the program has
 * one outermost parallel region, so its iterations show only in the constructs inside it
 * (docs/selfanalyzer.md, "Where the iterations are").
 *
 * Every function below is called by every thread of the team. Reductions go to file-scope (shared)
 * accumulators, reset by a `single` before each loop; every thread reads a result after the loop's
 * implicit barrier and before the barrier of the next worksharing loop, which is the one that precedes the
 * next reset of the same accumulator.
 */
#include "cg_matrix.h"
#include "npb_common.h"
#include "npb_random.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { CG_STEPS = 25 };

#define CG_RCOND 0.1
#define CG_EPSILON 1e-10

struct cg_class {
    char id;
    int order;
    int nonzer;
    int iterations;
    double shift;
    double zeta;
};

static const struct cg_class cg_classes[] = {
    {'S', 1400, 7, 15, 10.0, 8.5971775078648},
    {'W', 7000, 8, 15, 12.0, 10.362595087124},
    {'A', 14000, 11, 15, 20.0, 17.130235054029},
};

struct cg_vectors {
    double *x, *z, *p, *q, *r;
};

/* Shared accumulators of the orphaned reductions. */
static double g_rho, g_p_dot_q, g_residual2, g_x_dot_z, g_z_dot_z;

static inline double row_times(const long *row_start, const int *column, const double *value, int j,
                               const double *v)
{
    double sum = 0.0;
    for (long k = row_start[j]; k < row_start[j + 1]; k++)
        sum += value[k] * v[column[k]];
    return sum;
}

/* Called by every thread: CG_STEPS conjugate gradient steps from z = 0; returns ||x - A z||. */
static double conjugate_gradient(const struct cg_matrix *a, struct cg_vectors *v)
{
    const int n = a->order;
    const long *row_start = a->row_start;
    const int *column = a->column;
    const double *value = a->value;
    double *x = v->x, *z = v->z, *p = v->p, *q = v->q, *r = v->r;

#pragma omp single
    g_rho = 0.0;
#pragma omp for schedule(static) reduction(+ : g_rho)
    for (int j = 0; j < n; j++) {
        q[j] = 0.0;
        z[j] = 0.0;
        r[j] = x[j];
        p[j] = x[j];
        g_rho += r[j] * r[j];
    }
    double rho = g_rho;

    for (int step = 0; step < CG_STEPS; step++) {
#pragma omp single
        g_p_dot_q = 0.0;
#pragma omp for schedule(static) reduction(+ : g_p_dot_q)
        for (int j = 0; j < n; j++) {
            const double sum = row_times(row_start, column, value, j, p);
            q[j] = sum;
            g_p_dot_q += p[j] * sum;
        }
        const double alpha = rho / g_p_dot_q;
        const double rho_previous = rho;
#pragma omp single
        g_rho = 0.0;
#pragma omp for schedule(static) reduction(+ : g_rho)
        for (int j = 0; j < n; j++) {
            z[j] += alpha * p[j];
            r[j] -= alpha * q[j];
            g_rho += r[j] * r[j];
        }
        rho = g_rho;
        const double beta = rho / rho_previous;
#pragma omp for schedule(static)
        for (int j = 0; j < n; j++)
            p[j] = r[j] + beta * p[j];
    }

#pragma omp single
    g_residual2 = 0.0;
#pragma omp for schedule(static) reduction(+ : g_residual2)
    for (int j = 0; j < n; j++) {
        const double d = x[j] - row_times(row_start, column, value, j, z);
        g_residual2 += d * d;
    }
    return sqrt(g_residual2);
}

/* Called by every thread: returns zeta and sets x = z / ||z||. */
static double power_step(int n, struct cg_vectors *v, double shift)
{
    double *x = v->x, *z = v->z;
#pragma omp single
    {
        g_x_dot_z = 0.0;
        g_z_dot_z = 0.0;
    }
#pragma omp for schedule(static) reduction(+ : g_x_dot_z, g_z_dot_z)
    for (int j = 0; j < n; j++) {
        g_x_dot_z += x[j] * z[j];
        g_z_dot_z += z[j] * z[j];
    }
    const double inverse_norm = 1.0 / sqrt(g_z_dot_z);
    const double zeta = shift + 1.0 / g_x_dot_z;
#pragma omp for schedule(static)
    for (int j = 0; j < n; j++)
        x[j] = inverse_norm * z[j];
    return zeta;
}

static void set_all(int n, double *x, double value)
{
#pragma omp for schedule(static)
    for (int j = 0; j < n; j++)
        x[j] = value;
}

int main(int argc, char **argv)
{
    static const struct npb_program program = {
        "CG-SPMD", "NPB-class CG with one parallel region around its time loop (orphaned worksharing loops)",
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

    double seed = NPB_DEFAULT_SEED;
    npb_randlc(&seed, NPB_MULTIPLIER);
    struct cg_matrix a;
    cg_matrix_build(&a, n, cls->nonzer, CG_RCOND, cls->shift, &seed);
    printf(" NPB-class CG (one parallel region), class %c: n=%d, %ld nonzeros, %d iterations\n", cls->id, n,
           a.nonzeros, iterations);

    struct cg_vectors v;
    double *storage = npb_alloc(sizeof(double) * 5 * (size_t)n, "CG vectors");
    v.x = storage;
    v.z = storage + n;
    v.p = storage + 2 * (size_t)n;
    v.q = storage + 3 * (size_t)n;
    v.r = storage + 4 * (size_t)n;

    double zeta = 0.0;
    double start = 0.0;
#pragma omp parallel
    {
        /* One untimed iteration touches all data, as the spec's driver does. */
        set_all(n, v.x, 1.0);
        conjugate_gradient(&a, &v);
        power_step(n, &v, cls->shift);
        set_all(n, v.x, 1.0);
#pragma omp single
        start = npb_seconds();
        for (int it = 1; it <= iterations; it++) {
            const double residual = conjugate_gradient(&a, &v);
            const double z = power_step(n, &v, cls->shift);
#pragma omp single
            {
                zeta = z;
                printf("  iteration %2d  ||r|| = %20.14e  zeta = %20.13e\n", it, residual, z);
            }
        }
    }
    double seconds = npb_seconds() - start;

    printf(" Verification (spec 2.4, relative error <= %.0e):\n", CG_EPSILON);
    bool verified = npb_check_relative("zeta", zeta, cls->zeta, CG_EPSILON);

    const double nz2 = (double)cls->nonzer * (cls->nonzer + 1);
    const double flops = 2.0 * iterations * n * (3.0 + nz2 + CG_STEPS * (5.0 + nz2) + 3.0);
    char size[32];
    snprintf(size, sizeof size, "%d", n);
    struct npb_result result = {
        .kernel = "CG-SPMD",
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
