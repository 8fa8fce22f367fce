/* NPB-class MG (multigrid), NPB 3 spec section 2.5 (kernel MG).
 *
 * Approximates the solution of the discrete Poisson problem A u = v on a periodic 3-D grid with V-cycles:
 * each outer iteration computes r = v - A u and then applies one V-cycle u = u + M r, where M restricts the
 * residual down to a 2x2x2 grid (P), smooths there (S), and on the way up interpolates (Q), recomputes the
 * residual and smooths at every level. Verification compares the L2 norm of the final residual.
 */
#include "mg_grid.h"
#include "npb_common.h"
#include "npb_iteration.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#define MG_EPSILON 1e-8

enum { MG_MAX_LEVELS = 9 };

struct mg_class {
    char id;
    int log2_size;  /* 2^log2_size points per side on the finest grid */
    int iterations; /* nit */
    double residual_norm; /* reference L2 norm of the final residual (spec 2.5, verification table) */
};

static const struct mg_class mg_classes[] = {
    {'S', 5, 4, 0.5307707005734e-04},
    {'W', 7, 4, 0.6467329375339e-05},
    {'A', 8, 4, 0.2433365309069e-05},
};

/* Operator A and smoother S for classes S, W and A (spec 2.5; larger classes use another smoother). */
static const struct mg_stencil operator_a = {{-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0}};
static const struct mg_stencil smoother_s = {{-3.0 / 8.0, 1.0 / 32.0, -1.0 / 64.0, 0.0}};

/* Grids of levels 1..finest (index = level): level k has 2^k interior points per side. */
struct mg_hierarchy {
    int finest;
    struct mg_grid u[MG_MAX_LEVELS + 1], r[MG_MAX_LEVELS + 1];
};

/* One V-cycle: u[finest] += M r[finest] (the spec's mg3P). */
static void v_cycle(struct mg_hierarchy *h, const struct mg_grid *v)
{
    const int top = h->finest;
    for (int k = top; k > 1; k--)
        mg_restrict(&h->r[k], &h->r[k - 1]);

    mg_zero(&h->u[1]);
    mg_smooth(&h->r[1], &h->u[1], &smoother_s);

    for (int k = 2; k < top; k++) {
        mg_zero(&h->u[k]);
        mg_prolongate(&h->u[k - 1], &h->u[k]);
        mg_residual(&h->u[k], &h->r[k], &h->r[k], &operator_a);
        mg_smooth(&h->r[k], &h->u[k], &smoother_s);
    }

    mg_prolongate(&h->u[top - 1], &h->u[top]);
    mg_residual(&h->u[top], v, &h->r[top], &operator_a);
    mg_smooth(&h->r[top], &h->u[top], &smoother_s);
}

/* Bytes of the grid of level k: (2^k + 2)^3 doubles, ghosts included. */
static uint64_t grid_bytes(int k)
{
    const uint64_t side = (1u << k) + 2;
    return 8 * side * side * side;
}

/* Memory traffic of one outer iteration (docs/npb.md, "Memory traffic per iteration"; reads once, writes
 * twice, whole grids per sweep; the ghost exchanges touch faces only and are left out). Mirrors v_cycle and
 * the residual after it: restrict r_k → r_{k-1} reads G_k and writes G_{k-1}; zeroing writes; prolongation
 * reads the coarse grid and updates the fine one; the residual reads u and v and writes r (in place, v = r:
 * reads u, updates r); the smoother reads r and updates u. */
static uint64_t mg_traffic(int top)
{
    uint64_t b = 0;
    for (int k = top; k > 1; k--)
        b += grid_bytes(k) + 2 * grid_bytes(k - 1);           /* restrict */
    b += 2 * grid_bytes(1) + 3 * grid_bytes(1);               /* zero u_1; smooth */
    for (int k = 2; k < top; k++)
        b += 2 * grid_bytes(k)                                /* zero u_k */
             + grid_bytes(k - 1) + 2 * grid_bytes(k)          /* prolongate */
             + 3 * grid_bytes(k)                              /* residual in place */
             + 3 * grid_bytes(k);                             /* smooth */
    b += grid_bytes(top - 1) + 2 * grid_bytes(top)            /* prolongate to the finest grid */
         + 4 * grid_bytes(top)                                /* r = v - A u */
         + 3 * grid_bytes(top);                               /* smooth */
    b += 4 * grid_bytes(top);                                 /* the residual after the cycle */
    return b;
}

int main(int argc, char **argv)
{
    static const struct npb_program program = {
        "MG", "V-cycle multigrid on a periodic 3-D Poisson problem (NPB 3 spec 2.5)",
        "  S  32^3 grid, 4 iterations\n  W  128^3 grid, 4 iterations\n  A  256^3 grid, 4 iterations\n"};
    char class_id;
    int status;
    const int overridden = npb_iterations_override(argc, argv);
    if (!npb_parse_class(argc, argv, &program, &class_id, &status))
        return status;
    const struct mg_class *cls = &mg_classes[npb_class_index(class_id)];
    const int top = cls->log2_size;
    const int points = 1 << top;
    const int iterations = overridden > 0 ? overridden : cls->iterations;
    printf(" NPB-class MG, class %c: %d^3 grid, %d levels, %d iterations\n", cls->id, points, top,
           iterations);

    struct mg_hierarchy h = {.finest = top};
    for (int k = 1; k <= top; k++) {
        mg_grid_alloc(&h.u[k], 1 << k);
        mg_grid_alloc(&h.r[k], 1 << k);
    }
    struct mg_grid v;
    mg_grid_alloc(&v, points);

    /* One untimed V-cycle touches every level (page faults, caches), as the spec's driver does; the
     * problem is then set up again from scratch. */
    mg_initial_rhs(&v);
    mg_residual(&h.u[top], &v, &h.r[top], &operator_a);
    v_cycle(&h, &v);
    mg_zero(&h.u[top]);
    mg_initial_rhs(&v);

    const uint64_t traffic = mg_traffic(top);
    npb_print_traffic(traffic);

    double start = npb_seconds();
    mg_residual(&h.u[top], &v, &h.r[top], &operator_a);
    for (int it = 1; it <= iterations; it++) {
        NPB_ITERATION_BEGIN();
        v_cycle(&h, &v);
        mg_residual(&h.u[top], &v, &h.r[top], &operator_a);
        NPB_ITERATION_END();
        NPB_REPORT_BYTES(traffic);
    }
    const double norm = mg_norm2(&h.r[top]);
    double seconds = npb_seconds() - start;

    printf(" Verification (spec 2.5, relative error <= %.0e):\n", MG_EPSILON);
    bool verified = npb_check_relative("||r||_2", norm, cls->residual_norm, MG_EPSILON);

    char size[32];
    snprintf(size, sizeof size, "%dx%dx%d", points, points, points);
    struct npb_result result = {
        .kernel = "MG",
        .class_id = cls->id,
        .size = size,
        .iterations = iterations,
        .seconds = seconds,
        /* the spec's count: 58 operations per fine grid point per iteration */
        .mops = 58.0 * iterations * pow(points, 3) / seconds / 1e6,
        .operation = "floating point",
        .verified = verified,
        .skipped = overridden > 0,
    };
    for (int k = 1; k <= top; k++) {
        mg_grid_free(&h.u[k]);
        mg_grid_free(&h.r[k]);
    }
    mg_grid_free(&v);
    return npb_report(&result);
}
