/* Implicit factors of the NPB-class BT kernel (NPB 3 spec, application BT: approximate factorisation).
 *
 * Each time step solves (I + dt Lx)(I + dt Ly)(I + dt Lz) delta = rhs, one factor per direction. Along every
 * grid line of a direction the factor is block tri-diagonal with 5x5 blocks: row t couples the point to its
 * two neighbours through the flux Jacobian (first-order term) and the viscous Jacobian plus second-order
 * dissipation (second-order term). The face points have delta = 0, so each line is a system of n - 2 block
 * rows, solved by block Gaussian elimination (each diagonal block by Gauss-Jordan without pivoting, the
 * blocks are diagonally dominant) and back substitution.
 *
 * One `omp for` over the lines of a direction; each thread owns its line work arrays.
 */
#include "bt.h"

#include "npb_common.h"

#include <stdlib.h>
#include <string.h>

typedef double bt_block[BT_VARS][BT_VARS];

/* Work arrays for one line of n points. */
struct line_work {
    double (*u)[BT_VARS];
    bt_block *flux, *viscous; /* Jacobians at every point of the line */
    bt_block *a, *b, *c;      /* sub-, main and super-diagonal blocks of rows 1..n-2 */
    double (*r)[BT_VARS];     /* right-hand side, then solution, of rows 1..n-2 */
};

static void line_work_alloc(struct line_work *w, int n)
{
    w->u = npb_alloc(sizeof *w->u * (size_t)n, "BT line");
    w->flux = npb_alloc(sizeof *w->flux * (size_t)n, "BT line");
    w->viscous = npb_alloc(sizeof *w->viscous * (size_t)n, "BT line");
    w->a = npb_alloc(sizeof *w->a * (size_t)n, "BT line");
    w->b = npb_alloc(sizeof *w->b * (size_t)n, "BT line");
    w->c = npb_alloc(sizeof *w->c * (size_t)n, "BT line");
    w->r = npb_alloc(sizeof *w->r * (size_t)n, "BT line");
}

static void line_work_free(struct line_work *w)
{
    free(w->u);
    free(w->flux);
    free(w->viscous);
    free(w->a);
    free(w->b);
    free(w->c);
    free(w->r);
}

/* Jacobian of the inviscid flux along direction dir (momentum component d = dir + 1) with respect to the
 * conserved quantities q, and the Jacobian of the viscous flux (the spec's fjac and njac). */
static void jacobians(const struct bt_constants *k, int dir, const double q[BT_VARS], bt_block flux, bt_block viscous)
{
    const int d = dir + 1;
    const double c1 = k->c1, c2 = k->c2;
    const double tmp1 = 1.0 / q[0], tmp2 = tmp1 * tmp1, tmp3 = tmp1 * tmp2;
    const double square = 0.5 * (q[1] * q[1] + q[2] * q[2] + q[3] * q[3]) * tmp1;
    const double qs = square * tmp1;
    memset(flux, 0, sizeof(bt_block));
    memset(viscous, 0, sizeof(bt_block));

    flux[0][d] = 1.0;
    for (int m = 1; m <= 3; m++) {
        if (m == d) {
            flux[m][0] = -(q[d] * q[d] * tmp2) + c2 * qs;
            for (int j = 1; j <= 3; j++)
                flux[m][j] = j == d ? (2.0 - c2) * (q[d] * tmp1) : -c2 * (q[j] * tmp1);
            flux[m][4] = c2;
        } else {
            flux[m][0] = -(q[m] * q[d]) * tmp2;
            flux[m][m] = q[d] * tmp1;
            flux[m][d] = q[m] * tmp1;
        }
    }
    flux[4][0] = (c2 * 2.0 * square - c1 * q[4]) * (q[d] * tmp2);
    for (int j = 1; j <= 3; j++)
        flux[4][j] = j == d ? c1 * q[4] * tmp1 - c2 * (q[d] * q[d] * tmp2 + qs) : -c2 * (q[j] * q[d]) * tmp2;
    flux[4][4] = c1 * (q[d] * tmp1);

    double energy = 0.0;
    for (int m = 1; m <= 3; m++) {
        const double coef = m == d ? k->con43 * k->c3c4 : k->c3c4;
        viscous[m][0] = -coef * tmp2 * q[m];
        viscous[m][m] = coef * tmp1;
        viscous[4][m] = (coef - k->c1345) * tmp2 * q[m];
        energy -= (coef - k->c1345) * tmp3 * (q[m] * q[m]);
    }
    viscous[4][0] = energy - k->c1345 * tmp2 * q[4];
    viscous[4][4] = k->c1345 * tmp1;
}

/* Gauss-Jordan elimination of the diagonal block b (destroyed): c = b^-1 c (when c is not NULL) and
 * r = b^-1 r. */
static void invert_block(bt_block b, bt_block c, double r[BT_VARS])
{
    for (int p = 0; p < BT_VARS; p++) {
        const double pivot = 1.0 / b[p][p];
        for (int j = p + 1; j < BT_VARS; j++)
            b[p][j] *= pivot;
        if (c)
            for (int j = 0; j < BT_VARS; j++)
                c[p][j] *= pivot;
        r[p] *= pivot;
        for (int i = 0; i < BT_VARS; i++) {
            if (i == p)
                continue;
            const double coeff = b[i][p];
            for (int j = p + 1; j < BT_VARS; j++)
                b[i][j] -= coeff * b[p][j];
            if (c)
                for (int j = 0; j < BT_VARS; j++)
                    c[i][j] -= coeff * c[p][j];
            r[i] -= coeff * r[p];
        }
    }
}

/* r -= a v */
static void subtract_block_vector(bt_block a, const double v[BT_VARS], double r[BT_VARS])
{
    for (int i = 0; i < BT_VARS; i++)
        for (int j = 0; j < BT_VARS; j++)
            r[i] -= a[i][j] * v[j];
}

/* b -= a c */
static void subtract_block_product(bt_block a, bt_block c, bt_block b)
{
    for (int i = 0; i < BT_VARS; i++)
        for (int j = 0; j < BT_VARS; j++)
            for (int l = 0; l < BT_VARS; l++)
                b[i][j] -= a[i][l] * c[l][j];
}

/* Builds and solves the system of one line; w->u and w->r hold the line's u and rhs on entry, w->r the
 * solution on return (rows 1..n-2). */
static void solve_line(const struct bt_state *s, int dir, struct line_work *w)
{
    const int n = s->n;
    const struct bt_direction *k = &s->c.dir[dir];
    for (int t = 0; t < n; t++)
        jacobians(&s->c, dir, w->u[t], w->flux[t], w->viscous[t]);

    const double tmp1 = s->dt * k->t1, tmp2 = s->dt * k->t2;
    for (int t = 1; t < n - 1; t++) {
        for (int i = 0; i < BT_VARS; i++) {
            for (int j = 0; j < BT_VARS; j++) {
                w->a[t][i][j] = -tmp2 * w->flux[t - 1][i][j] - tmp1 * w->viscous[t - 1][i][j];
                w->b[t][i][j] = tmp1 * 2.0 * w->viscous[t][i][j];
                w->c[t][i][j] = tmp2 * w->flux[t + 1][i][j] - tmp1 * w->viscous[t + 1][i][j];
            }
            w->a[t][i][i] -= tmp1 * k->diss[i];
            w->b[t][i][i] = 1.0 + w->b[t][i][i] + tmp1 * 2.0 * k->diss[i];
            w->c[t][i][i] -= tmp1 * k->diss[i];
        }
    }

    /* forward elimination: row t becomes x_t + c_t x_{t+1} = r_t */
    invert_block(w->b[1], w->c[1], w->r[1]);
    for (int t = 2; t < n - 1; t++) {
        subtract_block_vector(w->a[t], w->r[t - 1], w->r[t]);
        subtract_block_product(w->a[t], w->c[t - 1], w->b[t]);
        invert_block(w->b[t], t < n - 2 ? w->c[t] : NULL, w->r[t]);
    }
    /* back substitution */
    for (int t = n - 3; t >= 1; t--)
        subtract_block_vector(w->c[t], w->r[t + 1], w->r[t]);
}

void bt_solve(struct bt_state *s, int dir)
{
    const int n = s->n;
#pragma omp parallel
    {
        struct line_work w;
        line_work_alloc(&w, n);
#pragma omp for collapse(2) schedule(static)
        for (int a = 1; a < n - 1; a++) {
            for (int b = 1; b < n - 1; b++) {
                for (int t = 0; t < n; t++) {
                    const size_t p = BT_VARS * bt_line_point(n, dir, a, b, t);
                    memcpy(w.u[t], s->u + p, sizeof w.u[t]);
                    memcpy(w.r[t], s->rhs + p, sizeof w.r[t]);
                }
                solve_line(s, dir, &w);
                for (int t = 1; t < n - 1; t++)
                    memcpy(s->rhs + BT_VARS * bt_line_point(n, dir, a, b, t), w.r[t], sizeof w.r[t]);
            }
        }
        line_work_free(&w);
    }
}
