/* State, constants and phases of the NPB-class BT kernel (NPB 3 spec, simulated CFD application BT).
 *
 * The grid is a cube of n points per side, coordinates xi, eta, zeta = index / (n - 1) in [0, 1]. Points on
 * the faces keep the exact solution; the n - 2 interior points per line are unknowns. Every per-point field
 * is one flat array with the x index fastest: point p = (k * n + j) * n + i, and the five conserved
 * quantities of a point (density, three momenta, energy) are the consecutive values 5p .. 5p + 4.
 *
 * The three directions are handled by one code path each, parametrised by `dir` (0 = x/xi, 1 = y/eta,
 * 2 = z/zeta): a line in direction dir is the n points whose other two indices are fixed, and the momentum
 * component along dir is quantity dir + 1.
 */
#ifndef BT_H
#define BT_H

#include <stddef.h>

enum { BT_VARS = 5 }; /* conserved quantities per point */

/* Constants of one direction (the spec's tx1.., dx1.., xxcon1.. for x, ty.., dy.., yycon.. for y, ...). */
struct bt_direction {
    double t1, t2;             /* 1 / h^2 and 1 / (2 h), h = 1 / (n - 1) */
    double diss[BT_VARS];      /* second-order dissipation coefficients d1..d5 */
    double diss_t1[BT_VARS];   /* diss[m] * t1 */
    double con[6];             /* viscous coefficients con[1..5] (xxcon1..xxcon5); con[0] unused */
};

struct bt_constants {
    double c1, c2;        /* gas constants of the spec (c1 = 1.4, c2 = 0.4) */
    double con43, c3c4, c1345;
    double dssp;          /* fourth-order dissipation coefficient */
    double h;             /* grid spacing 1 / (n - 1) */
    struct bt_direction dir[3];
};

struct bt_state {
    int n;      /* grid points per side, faces included */
    double dt;  /* time step */
    struct bt_constants c;
    double *u;        /* solution, 5 per point */
    double *rhs;      /* right-hand side, then (after the solves) the update, 5 per point */
    double *forcing;  /* forcing term making the exact solution steady, 5 per point */
    double *rho_i;    /* 1 / density, per point */
    double *vel[3];   /* velocities u/rho, v/rho, w/rho, per point */
    double *square;   /* kinetic energy 0.5 |m|^2 / rho, per point */
    double *qs;       /* square / rho, per point */
};

/* Index of point (i, j, k) in the per-point arrays. */
static inline size_t bt_point(int n, int i, int j, int k)
{
    return ((size_t)k * (size_t)n + (size_t)j) * (size_t)n + (size_t)i;
}

/* Indices (i, j, k) of point number t of the line in direction dir whose other two indices are (a, b): a is
 * the outer one (k for x and y lines, j for z lines) and b the inner one. */
static inline void bt_line_indices(int dir, int a, int b, int t, int ijk[3])
{
    ijk[0] = dir == 0 ? t : b;
    ijk[1] = dir == 0 ? b : dir == 1 ? t : a;
    ijk[2] = dir == 2 ? t : a;
}

/* Index of that point in the per-point arrays. */
static inline size_t bt_line_point(int n, int dir, int a, int b, int t)
{
    int ijk[3];
    bt_line_indices(dir, a, b, t, ijk);
    return bt_point(n, ijk[0], ijk[1], ijk[2]);
}

/* Distance in points between neighbours along direction dir. */
static inline size_t bt_stride(int n, int dir)
{
    return dir == 0 ? 1 : dir == 1 ? (size_t)n : (size_t)n * (size_t)n;
}

/* The spec's fourth-order dissipation stencil at line position t (1..n-2) of a line with n points, c the
 * value at t and s the distance to its neighbours; one-sided at the two positions next to each face. */
static inline double bt_fourth_difference(const double *c, ptrdiff_t s, int t, int n)
{
    if (t == 1)
        return 5.0 * c[0] - 4.0 * c[s] + c[2 * s];
    if (t == 2)
        return -4.0 * c[-s] + 6.0 * c[0] - 4.0 * c[s] + c[2 * s];
    if (t == n - 3)
        return c[-2 * s] - 4.0 * c[-s] + 6.0 * c[0] - 4.0 * c[s];
    if (t == n - 2)
        return c[-2 * s] - 4.0 * c[-s] + 5.0 * c[0];
    return c[-2 * s] - 4.0 * c[-s] + 6.0 * c[0] - 4.0 * c[s] + c[2 * s];
}

/* bt_init.c */
void bt_state_alloc(struct bt_state *s, int n, double dt);
void bt_state_free(struct bt_state *s);
/* The exact solution at (xi, eta, zeta): the spec's polynomial with coefficients ce. */
void bt_exact_solution(double xi, double eta, double zeta, double out[BT_VARS]);
/* Initial u: transfinite interpolation of the exact solution on the faces, faces exact. */
void bt_initialize(struct bt_state *s);
/* The forcing term: minus the discrete operator (fluxes, viscosity, dissipation) applied to the exact
 * solution, so that the exact solution is a steady state of the discrete scheme. */
void bt_exact_rhs(struct bt_state *s);
/* RMS over all points of u - exact, divided by (n - 2)^3 as the spec does. */
void bt_error_norm(const struct bt_state *s, double rms[BT_VARS]);

/* bt_rhs.c */
/* rhs = dt * (forcing - discrete operator applied to u) at interior points. */
void bt_compute_rhs(struct bt_state *s);
/* RMS of rhs over the interior points. */
void bt_rhs_norm(const struct bt_state *s, double rms[BT_VARS]);
/* u += rhs at interior points. */
void bt_add(struct bt_state *s);

/* bt_solve.c */
/* Replaces rhs by the solution of the block tri-diagonal systems of the implicit factor along direction dir
 * (one independent 5x5-block system per grid line). */
void bt_solve(struct bt_state *s, int dir);

#endif /* BT_H */
