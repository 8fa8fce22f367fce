/* NPB-class BT (block tri-diagonal solver): the NPB 3 spec's simulated CFD application BT.
 *
 * Integrates a system of five nonlinear PDEs (compressible Navier-Stokes form: density, three momenta,
 * energy) on a cube towards the steady state of a manufactured exact solution, with the Beam-Warming
 * approximate factorisation: every time step computes the explicit right-hand side, solves block
 * tri-diagonal systems (5x5 blocks) along every x line, then every y line, then every z line, and adds the
 * update. Verification compares the RMS norms of the final residual and of the error against the exact
 * solution with the spec's reference values.
 *
 * Each time step is six `omp parallel` regions (right-hand side: 2, one per direction solve: 3, update: 1).
 */
#include "bt.h"
#include "npb_common.h"
#include "npb_iteration.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define BT_EPSILON 1e-8 /* relative tolerance of the spec's verification */

struct bt_class {
    char id;
    int points;     /* grid points per side */
    int iterations; /* time steps */
    double dt;
    /* reference RMS norms of the residual (xcrref) and of the error (xceref), NPB 3 verification table */
    double residual[BT_VARS];
    double error[BT_VARS];
};

/* Problem sizes, time steps and reference values: NPB 3 spec constants (classes S, W, A). */
static const struct bt_class bt_classes[] = {
    {'S', 12, 60, 0.010,
     {1.7034283709541311e-01, 1.2975252070034097e-02, 3.2527926989486055e-02, 2.6436421275166801e-02,
      1.9211784131744430e-01},
     {4.9976913345811579e-04, 4.5195666782961927e-05, 7.3973765172921357e-05, 7.3821238632439731e-05,
      8.9269630987491446e-04}},
    {'W', 24, 200, 0.0008,
     {0.1125590409344e+03, 0.1180007595731e+02, 0.2710329767846e+02, 0.2469174937669e+02, 0.2638427874317e+03},
     {0.4419655736008e+01, 0.4638531260002e+00, 0.1011551749967e+01, 0.9235878729944e+00, 0.1018045837718e+02}},
    {'A', 64, 200, 0.0008,
     {1.0806346714637264e+02, 1.1319730901220813e+01, 2.5974354511582465e+01, 2.3665622544678910e+01,
      2.5278963211748344e+02},
     {4.2348416040525025e+00, 4.4390282496995698e-01, 9.6692480136345650e-01, 8.8302063039765474e-01,
      9.7379901770829278e+00}},
};

/* One time step (the spec's adi). */
static void time_step(struct bt_state *s)
{
    bt_compute_rhs(s);
    bt_solve(s, 0);
    bt_solve(s, 1);
    bt_solve(s, 2);
    bt_add(s);
}

/* Memory traffic of one time step (docs/npb.md, "Memory traffic per iteration"; reads once, writes twice),
 * N = n^3 points, whole arrays (faces included): the derived quantities read u (5 doubles a point) and write
 * rho_i, the three velocities, square and qs (136N); the stencil reads forcing, u and those six and writes rhs
 * (128N + 80N); each of the three line solves reads u and updates rhs (120N; the per-thread line work arrays
 * stay cached); the update reads rhs and updates u (120N). Mirrors time_step. */
static uint64_t bt_traffic(int n)
{
    const uint64_t points = (uint64_t)n * n * n;
    const uint64_t field = 8 * points, state = BT_VARS * field;  /* one per-point array; u, rhs or forcing */
    const uint64_t derived = state + 2 * 6 * field;
    const uint64_t stencil = state + state + 6 * field + 2 * state;
    const uint64_t solves = 3 * (state + 2 * state);
    const uint64_t update = 2 * state + state;
    return derived + stencil + solves + update;
}

int main(int argc, char **argv)
{
    static const struct npb_program program = {
        "BT", "block tri-diagonal ADI solver of a 3-D Navier-Stokes-like system (NPB 3 spec, BT)",
        "  S  12^3 grid, 60 time steps, dt 0.01\n  W  24^3 grid, 200 time steps, dt 0.0008\n"
        "  A  64^3 grid, 200 time steps, dt 0.0008\n"};
    char class_id;
    int status;
    const int overridden = npb_iterations_override(argc, argv);
    if (!npb_parse_class(argc, argv, &program, &class_id, &status))
        return status;
    const struct bt_class *cls = &bt_classes[npb_class_index(class_id)];
    const int n = cls->points;
    const int iterations = overridden > 0 ? overridden : cls->iterations;
    printf(" NPB-class BT, class %c: %d^3 grid, %d time steps, dt %g\n", cls->id, n, iterations, cls->dt);

    struct bt_state s;
    bt_state_alloc(&s, n, cls->dt);
    bt_exact_rhs(&s);
    bt_initialize(&s);

    /* One untimed step touches all data and code, as the spec's driver does; then start again. */
    time_step(&s);
    bt_initialize(&s);

    const uint64_t traffic = bt_traffic(n);
    npb_print_traffic(traffic);

    double start = npb_seconds();
    for (int step = 1; step <= iterations; step++) {
        NPB_ITERATION_BEGIN();
        time_step(&s);
        NPB_ITERATION_END();
        NPB_REPORT_BYTES(traffic);
    }
    double seconds = npb_seconds() - start;

    double error[BT_VARS], residual[BT_VARS];
    bt_error_norm(&s, error);
    bt_compute_rhs(&s);
    bt_rhs_norm(&s, residual);
    printf(" Verification (spec BT: RMS norms of residual and error, relative error <= %.0e):\n", BT_EPSILON);
    bool verified = true;
    for (int m = 0; m < BT_VARS; m++) {
        char what[32];
        snprintf(what, sizeof what, "residual %d", m + 1);
        if (!npb_check_relative(what, residual[m] / s.dt, cls->residual[m], BT_EPSILON))
            verified = false;
    }
    for (int m = 0; m < BT_VARS; m++) {
        char what[32];
        snprintf(what, sizeof what, "error %d", m + 1);
        if (!npb_check_relative(what, error[m], cls->error[m], BT_EPSILON))
            verified = false;
    }

    char size[32];
    snprintf(size, sizeof size, "%dx%dx%d", n, n, n);
    const double navg = n; /* the spec's count uses the average side; the classes here are cubes */
    struct npb_result result = {
        .kernel = "BT",
        .class_id = cls->id,
        .size = size,
        .iterations = iterations,
        .seconds = seconds,
        /* the spec's operation count per time step */
        .mops = 1e-6 * iterations * (3478.8 * navg * navg * navg - 17655.7 * navg * navg + 28023.7 * navg) /
                seconds,
        .operation = "floating point",
        .verified = verified,
        .skipped = overridden > 0,
    };
    bt_state_free(&s);
    return npb_report(&result);
}
