/* Set-up of the NPB-class BT kernel: constants, exact solution, initial state, forcing term, error norm
 * (NPB 3 spec, application BT: the model problem and its manufactured exact solution). */
#include "bt.h"

#include "npb_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Coefficients of the exact solution, one row per conserved quantity (NPB 3 spec constants): value =
 * ce[0] + sum over xi, eta, zeta of a quartic without constant term, whose coefficients for xi are
 * ce[1], ce[4], ce[7], ce[10] (powers 1..4), for eta ce[2], ce[5], ce[8], ce[11], for zeta ce[3], ce[6],
 * ce[9], ce[12]. */
static const double exact_coefficients[BT_VARS][13] = {
    {2.0, 0.0, 0.0, 4.0, 5.0, 3.0, 0.5, 0.02, 0.01, 0.03, 0.5, 0.4, 0.3},
    {1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.01, 0.03, 0.02, 0.4, 0.3, 0.5},
    {2.0, 2.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.04, 0.03, 0.05, 0.3, 0.5, 0.4},
    {2.0, 2.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.03, 0.05, 0.04, 0.2, 0.1, 0.3},
    {5.0, 4.0, 3.0, 2.0, 0.1, 0.4, 0.3, 0.05, 0.04, 0.03, 0.1, 0.3, 0.2},
};

void bt_exact_solution(double xi, double eta, double zeta, double out[BT_VARS])
{
    const double x[3] = {xi, eta, zeta};
    for (int m = 0; m < BT_VARS; m++) {
        const double *ce = exact_coefficients[m];
        double value = ce[0];
        for (int d = 0; d < 3; d++) /* Horner in each coordinate */
            value += x[d] * (ce[1 + d] + x[d] * (ce[4 + d] + x[d] * (ce[7 + d] + x[d] * ce[10 + d])));
        out[m] = value;
    }
}

/* The spec's constants (NPB 3 BT: c1..c5, dissipation d = 0.75 in x and y and 1.0 in z, dssp = d_max / 4,
 * viscous coefficients c3 c4 {4/3, 1, 1 - c1 c5, 1/6, c1 c5} / h^2). */
static void set_constants(struct bt_constants *c, int n)
{
    const double c3 = 0.1, c4 = 1.0, c5 = 1.4;
    c->c1 = 1.4;
    c->c2 = 0.4;
    c->con43 = 4.0 / 3.0;
    c->c3c4 = c3 * c4;
    const double c1c5 = c->c1 * c5;
    c->c1345 = c1c5 * c->c3c4;
    c->h = 1.0 / (double)(n - 1);

    const double diss[3] = {0.75, 0.75, 1.0};
    const double t3 = 1.0 / c->h;
    const double viscous[6] = {0.0, c->con43, 1.0, 1.0 - c1c5, 1.0 / 6.0, c1c5};
    for (int d = 0; d < 3; d++) {
        struct bt_direction *dir = &c->dir[d];
        dir->t1 = 1.0 / (c->h * c->h);
        dir->t2 = 1.0 / (2.0 * c->h);
        for (int m = 0; m < BT_VARS; m++) {
            dir->diss[m] = diss[d];
            dir->diss_t1[m] = diss[d] * dir->t1;
        }
        for (int k = 0; k < 6; k++)
            dir->con[k] = c->c3c4 * t3 * viscous[k] * t3;
    }
    c->dssp = 0.25 * fmax(diss[0], fmax(diss[1], diss[2]));
}

void bt_state_alloc(struct bt_state *s, int n, double dt)
{
    const size_t points = (size_t)n * (size_t)n * (size_t)n;
    memset(s, 0, sizeof *s);
    s->n = n;
    s->dt = dt;
    set_constants(&s->c, n);
    s->u = npb_alloc(sizeof(double) * BT_VARS * points, "BT u");
    s->rhs = npb_alloc(sizeof(double) * BT_VARS * points, "BT rhs");
    s->forcing = npb_alloc(sizeof(double) * BT_VARS * points, "BT forcing");
    s->rho_i = npb_alloc(sizeof(double) * points, "BT 1/rho");
    for (int d = 0; d < 3; d++)
        s->vel[d] = npb_alloc(sizeof(double) * points, "BT velocity");
    s->square = npb_alloc(sizeof(double) * points, "BT kinetic energy");
    s->qs = npb_alloc(sizeof(double) * points, "BT qs");
    memset(s->rhs, 0, sizeof(double) * BT_VARS * points);
}

void bt_state_free(struct bt_state *s)
{
    free(s->u);
    free(s->rhs);
    free(s->forcing);
    free(s->rho_i);
    for (int d = 0; d < 3; d++)
        free(s->vel[d]);
    free(s->square);
    free(s->qs);
    memset(s, 0, sizeof *s);
}

void bt_initialize(struct bt_state *s)
{
    const int n = s->n;
    const double h = s->c.h;
#pragma omp parallel for schedule(static)
    for (int k = 0; k < n; k++) {
        for (int j = 0; j < n; j++) {
            for (int i = 0; i < n; i++) {
                const int ijk[3] = {i, j, k};
                const double x[3] = {i * h, j * h, k * h};
                double *u = s->u + BT_VARS * bt_point(n, i, j, k);
                if (i == 0 || i == n - 1 || j == 0 || j == n - 1 || k == 0 || k == n - 1) {
                    /* boundary points hold the exact solution, with the face's coordinate exactly 0 or 1 */
                    double c[3];
                    for (int d = 0; d < 3; d++)
                        c[d] = ijk[d] == 0 ? 0.0 : ijk[d] == n - 1 ? 1.0 : x[d];
                    bt_exact_solution(c[0], c[1], c[2], u);
                    continue;
                }
                /* face[d][side]: the exact solution where coordinate d is 0 (side 0) or 1 (side 1) */
                double face[3][2][BT_VARS];
                for (int side = 0; side < 2; side++) {
                    bt_exact_solution(side, x[1], x[2], face[0][side]);
                    bt_exact_solution(x[0], side, x[2], face[1][side]);
                    bt_exact_solution(x[0], x[1], side, face[2][side]);
                }
                for (int m = 0; m < BT_VARS; m++) {
                    double p[3]; /* linear interpolation between opposite faces in each direction */
                    for (int d = 0; d < 3; d++)
                        p[d] = x[d] * face[d][1][m] + (1.0 - x[d]) * face[d][0][m];
                    u[m] = p[0] + p[1] + p[2] - p[0] * p[1] - p[0] * p[2] - p[1] * p[2] + p[0] * p[1] * p[2];
                }
            }
        }
    }
}

/* Second difference v[t+1] - 2 v[t] + v[t-1] of a line array with `stride` values per point. */
static double second_difference(const double *v, size_t stride, int t)
{
    const double *c = v + (size_t)t * stride;
    return c[stride] - 2.0 * c[0] + c[-(ptrdiff_t)stride];
}

/* Adds the direction-dir part of the discrete operator applied to the exact solution to the forcing of the
 * interior points of one line. ue: exact solution along the line; buf: velocities (1..3), their squared
 * magnitude (0) and energy / density (4); cuf: square of the velocity along dir; q: kinetic energy. */
static void exact_rhs_line(struct bt_state *s, int dir, int a, int b, double (*ue)[BT_VARS],
                           double (*buf)[BT_VARS], double *cuf, double *q)
{
    const int n = s->n;
    const struct bt_constants *c = &s->c;
    const struct bt_direction *k = &c->dir[dir];
    const int d = dir + 1;
    for (int t = 0; t < n; t++) {
        int ijk[3];
        bt_line_indices(dir, a, b, t, ijk);
        bt_exact_solution(ijk[0] * c->h, ijk[1] * c->h, ijk[2] * c->h, ue[t]);
        const double inv = 1.0 / ue[t][0];
        for (int m = 1; m < BT_VARS; m++)
            buf[t][m] = inv * ue[t][m];
        cuf[t] = buf[t][d] * buf[t][d];
        buf[t][0] = buf[t][1] * buf[t][1] + buf[t][2] * buf[t][2] + buf[t][3] * buf[t][3];
        q[t] = 0.5 * (buf[t][1] * ue[t][1] + buf[t][2] * ue[t][2] + buf[t][3] * ue[t][3]);
    }
    for (int t = 1; t < n - 1; t++) {
        double *f = s->forcing + BT_VARS * bt_line_point(n, dir, a, b, t);
        const double *up = ue[t + 1], *um = ue[t - 1];
        const double *bp = buf[t + 1], *bm = buf[t - 1];
        f[0] += -k->t2 * (up[d] - um[d]) + k->diss_t1[0] * second_difference(ue[0], BT_VARS, t);
        for (int m = 1; m <= 3; m++) {
            double flux_p = up[m] * bp[d], flux_m = um[m] * bm[d];
            if (m == d) { /* pressure acts along the line */
                flux_p += c->c2 * (up[4] - q[t + 1]);
                flux_m += c->c2 * (um[4] - q[t - 1]);
            }
            f[m] += -k->t2 * (flux_p - flux_m) +
                    (m == d ? k->con[1] : k->con[2]) * second_difference(&buf[0][m], BT_VARS, t) +
                    k->diss_t1[m] * second_difference(&ue[0][m], BT_VARS, t);
        }
        f[4] += -k->t2 * (bp[d] * (c->c1 * up[4] - c->c2 * q[t + 1]) - bm[d] * (c->c1 * um[4] - c->c2 * q[t - 1])) +
                0.5 * k->con[3] * second_difference(&buf[0][0], BT_VARS, t) +
                k->con[4] * second_difference(cuf, 1, t) + k->con[5] * second_difference(&buf[0][4], BT_VARS, t) +
                k->diss_t1[4] * second_difference(&ue[0][4], BT_VARS, t);
        for (int m = 0; m < BT_VARS; m++)
            f[m] -= c->dssp * bt_fourth_difference(&ue[t][m], BT_VARS, t, n);
    }
}

void bt_exact_rhs(struct bt_state *s)
{
    const int n = s->n;
    memset(s->forcing, 0, sizeof(double) * BT_VARS * (size_t)n * n * n);
    for (int dir = 0; dir < 3; dir++) {
#pragma omp parallel
        {
            double(*ue)[BT_VARS] = npb_alloc(sizeof(double) * BT_VARS * n, "BT exact line");
            double(*buf)[BT_VARS] = npb_alloc(sizeof(double) * BT_VARS * n, "BT exact line");
            double *cuf = npb_alloc(sizeof(double) * n, "BT exact line");
            double *q = npb_alloc(sizeof(double) * n, "BT exact line");
#pragma omp for collapse(2) schedule(static)
            for (int a = 1; a < n - 1; a++)
                for (int b = 1; b < n - 1; b++)
                    exact_rhs_line(s, dir, a, b, ue, buf, cuf, q);
            free(ue);
            free(buf);
            free(cuf);
            free(q);
        }
    }
#pragma omp parallel for schedule(static)
    for (int k = 1; k < n - 1; k++)
        for (int j = 1; j < n - 1; j++)
            for (int i = 1; i < n - 1; i++)
                for (int m = 0; m < BT_VARS; m++)
                    s->forcing[BT_VARS * bt_point(n, i, j, k) + m] *= -1.0;
}

void bt_error_norm(const struct bt_state *s, double rms[BT_VARS])
{
    const int n = s->n;
    for (int m = 0; m < BT_VARS; m++)
        rms[m] = 0.0;
    for (int k = 0; k < n; k++) {
        for (int j = 0; j < n; j++) {
            for (int i = 0; i < n; i++) {
                double exact[BT_VARS];
                bt_exact_solution(i * s->c.h, j * s->c.h, k * s->c.h, exact);
                const double *u = s->u + BT_VARS * bt_point(n, i, j, k);
                for (int m = 0; m < BT_VARS; m++) {
                    const double diff = u[m] - exact[m];
                    rms[m] += diff * diff;
                }
            }
        }
    }
    for (int m = 0; m < BT_VARS; m++) {
        for (int d = 0; d < 3; d++)
            rms[m] /= (double)(n - 2);
        rms[m] = sqrt(rms[m]);
    }
}
