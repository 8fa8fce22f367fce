/* Right-hand side of the NPB-class BT kernel (NPB 3 spec, application BT: the explicit part of a time step).
 *
 * rhs = dt * (forcing - F(u)), F the discrete operator: central differences of the inviscid fluxes, the
 * viscous terms, second-order dissipation and the spec's fourth-order dissipation, in x, y and z. Two
 * parallel regions: the point-wise derived quantities (1/rho, velocities, kinetic energy) of every point,
 * then the stencil at every interior point, which writes only its own rhs.
 */
#include "bt.h"

#include <math.h>

/* Second difference of a per-point field around point p, neighbours s points away. */
static inline double diff2(const double *f, size_t p, size_t s)
{
    return f[p + s] - 2.0 * f[p] + f[p - s];
}

/* Adds the direction-dir terms of -F(u) at interior point p (line position t) to r. */
static void add_direction(const struct bt_state *st, int dir, size_t p, int t, double r[BT_VARS])
{
    const struct bt_constants *c = &st->c;
    const struct bt_direction *k = &c->dir[dir];
    const size_t s = bt_stride(st->n, dir);
    const size_t pp = p + s, pm = p - s;
    const double *u = st->u + BT_VARS * p;
    const double *up = st->u + BT_VARS * pp, *um = st->u + BT_VARS * pm;
    const double *vd = st->vel[dir]; /* velocity along the line */
    const double *square = st->square;
    const int d = dir + 1;

    r[0] = r[0] + k->diss_t1[0] * (up[0] - 2.0 * u[0] + um[0]) - k->t2 * (up[d] - um[d]);
    for (int m = 1; m <= 3; m++) {
        double flux = up[m] * vd[pp] - um[m] * vd[pm];
        if (m == d) /* pressure acts along the line */
            flux += (up[4] - square[pp] - um[4] + square[pm]) * c->c2;
        const double viscous = m == d ? k->con[2] * c->con43 : k->con[2];
        r[m] = r[m] + k->diss_t1[m] * (up[m] - 2.0 * u[m] + um[m]) + viscous * diff2(st->vel[m - 1], p, s) -
               k->t2 * flux;
    }
    r[4] = r[4] + k->diss_t1[4] * (up[4] - 2.0 * u[4] + um[4]) + k->con[3] * diff2(st->qs, p, s) +
           k->con[4] * (vd[pp] * vd[pp] - 2.0 * vd[p] * vd[p] + vd[pm] * vd[pm]) +
           k->con[5] * (up[4] * st->rho_i[pp] - 2.0 * u[4] * st->rho_i[p] + um[4] * st->rho_i[pm]) -
           k->t2 * ((c->c1 * up[4] - c->c2 * square[pp]) * vd[pp] - (c->c1 * um[4] - c->c2 * square[pm]) * vd[pm]);

    const ptrdiff_t s5 = (ptrdiff_t)(BT_VARS * s);
    for (int m = 0; m < BT_VARS; m++)
        r[m] = r[m] - c->dssp * bt_fourth_difference(u + m, s5, t, st->n);
}

void bt_compute_rhs(struct bt_state *s)
{
    const int n = s->n;
    const double *u = s->u;
#pragma omp parallel for schedule(static)
    for (int k = 0; k < n; k++) {
        for (size_t p = bt_point(n, 0, 0, k); p < bt_point(n, 0, 0, k + 1); p++) {
            const double *q = u + BT_VARS * p;
            const double rho_inv = 1.0 / q[0];
            s->rho_i[p] = rho_inv;
            for (int d = 0; d < 3; d++)
                s->vel[d][p] = q[d + 1] * rho_inv;
            s->square[p] = 0.5 * (q[1] * q[1] + q[2] * q[2] + q[3] * q[3]) * rho_inv;
            s->qs[p] = s->square[p] * rho_inv;
        }
    }

#pragma omp parallel for schedule(static)
    for (int k = 1; k < n - 1; k++) {
        for (int j = 1; j < n - 1; j++) {
            for (int i = 1; i < n - 1; i++) {
                const size_t p = bt_point(n, i, j, k);
                double r[BT_VARS];
                for (int m = 0; m < BT_VARS; m++)
                    r[m] = s->forcing[BT_VARS * p + m];
                add_direction(s, 0, p, i, r);
                add_direction(s, 1, p, j, r);
                add_direction(s, 2, p, k, r);
                for (int m = 0; m < BT_VARS; m++)
                    s->rhs[BT_VARS * p + m] = r[m] * s->dt;
            }
        }
    }
}

void bt_rhs_norm(const struct bt_state *s, double rms[BT_VARS])
{
    const int n = s->n;
    for (int m = 0; m < BT_VARS; m++)
        rms[m] = 0.0;
    for (int k = 1; k < n - 1; k++)
        for (int j = 1; j < n - 1; j++)
            for (int i = 1; i < n - 1; i++)
                for (int m = 0; m < BT_VARS; m++) {
                    const double v = s->rhs[BT_VARS * bt_point(n, i, j, k) + m];
                    rms[m] += v * v;
                }
    for (int m = 0; m < BT_VARS; m++) {
        for (int d = 0; d < 3; d++)
            rms[m] /= (double)(n - 2);
        rms[m] = sqrt(rms[m]);
    }
}

void bt_add(struct bt_state *s)
{
    const int n = s->n;
#pragma omp parallel for schedule(static)
    for (int k = 1; k < n - 1; k++)
        for (int j = 1; j < n - 1; j++)
            for (int i = 1; i < n - 1; i++)
                for (int m = 0; m < BT_VARS; m++)
                    s->u[BT_VARS * bt_point(n, i, j, k) + m] += s->rhs[BT_VARS * bt_point(n, i, j, k) + m];
}
