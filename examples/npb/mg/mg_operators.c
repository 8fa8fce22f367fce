/* Grid operators of the NPB-class MG kernel (NPB 3 spec section 2.5: A, S, P, Q and the periodic boundary).
 *
 * Every operator is one `omp parallel for` over planes i3: the V-cycle is then a fixed sequence of parallel
 * regions per outer iteration. The 27-point stencils are evaluated with per-line partial sums of the four
 * neighbours sharing a face (sum_face) and an edge (sum_edge) in the (i2, i3) plane, as the spec's reference
 * implementation does, to reduce the additions per point.
 */
#include "mg_grid.h"

#include "npb_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void mg_grid_alloc(struct mg_grid *g, int interior)
{
    g->n1 = g->n2 = g->n3 = interior + 2;
    g->data = npb_alloc(sizeof(double) * (size_t)g->n1 * g->n2 * g->n3, "MG grid");
    mg_zero(g);
}

void mg_grid_free(struct mg_grid *g)
{
    free(g->data);
    g->data = NULL;
}

void mg_zero(struct mg_grid *g)
{
    double(*x)[g->n2][g->n1] = MG_VIEW(g);
#pragma omp parallel for schedule(static)
    for (int i3 = 0; i3 < g->n3; i3++)
        memset(x[i3], 0, sizeof(double) * (size_t)g->n2 * g->n1);
}

void mg_exchange_ghosts(struct mg_grid *g)
{
    const int n1 = g->n1, n2 = g->n2, n3 = g->n3;
    double(*x)[n2][n1] = MG_VIEW(g);
    /* x faces, then y faces (whole lines, ghost x included), then z faces (whole planes): corners and edges
     * come out right because each pass copies what the previous one completed. */
#pragma omp parallel for schedule(static)
    for (int i3 = 1; i3 < n3 - 1; i3++) {
        for (int i2 = 1; i2 < n2 - 1; i2++) {
            x[i3][i2][0] = x[i3][i2][n1 - 2];
            x[i3][i2][n1 - 1] = x[i3][i2][1];
        }
        memcpy(x[i3][0], x[i3][n2 - 2], sizeof(double) * n1);
        memcpy(x[i3][n2 - 1], x[i3][1], sizeof(double) * n1);
    }
    memcpy(x[0], x[n3 - 2], sizeof(double) * (size_t)n2 * n1);
    memcpy(x[n3 - 1], x[1], sizeof(double) * (size_t)n2 * n1);
}

/* The per-line partial sums both 27-point operators use: for every i1 of line (i2, i3) of x, the four
 * neighbours in the (i2, i3) plane sharing a face and the four sharing an edge. */
static inline void line_sums(int n2, int n1, double (*x)[n2][n1], int i3, int i2, double *sum_face,
                             double *sum_edge)
{
    for (int i1 = 0; i1 < n1; i1++) {
        sum_face[i1] = x[i3][i2 - 1][i1] + x[i3][i2 + 1][i1] + x[i3 - 1][i2][i1] + x[i3 + 1][i2][i1];
        sum_edge[i1] = x[i3 - 1][i2 - 1][i1] + x[i3 - 1][i2 + 1][i1] + x[i3 + 1][i2 - 1][i1] + x[i3 + 1][i2 + 1][i1];
    }
}

void mg_residual(const struct mg_grid *u_grid, const struct mg_grid *v_grid, struct mg_grid *r_grid,
                 const struct mg_stencil *a)
{
    const int n1 = u_grid->n1, n2 = u_grid->n2, n3 = u_grid->n3;
    double(*u)[n2][n1] = MG_VIEW(u_grid);
    double(*v)[n2][n1] = MG_VIEW(v_grid);
    double(*r)[n2][n1] = MG_VIEW(r_grid);
#pragma omp parallel for schedule(static)
    for (int i3 = 1; i3 < n3 - 1; i3++) {
        double sum_face[n1], sum_edge[n1];
        for (int i2 = 1; i2 < n2 - 1; i2++) {
            line_sums(n2, n1, u, i3, i2, sum_face, sum_edge);
            /* a->c[1] (faces) is zero for every class and is skipped, as the spec allows. */
            for (int i1 = 1; i1 < n1 - 1; i1++)
                r[i3][i2][i1] = v[i3][i2][i1] - a->c[0] * u[i3][i2][i1] -
                                a->c[2] * (sum_edge[i1] + sum_face[i1 - 1] + sum_face[i1 + 1]) -
                                a->c[3] * (sum_edge[i1 - 1] + sum_edge[i1 + 1]);
        }
    }
    mg_exchange_ghosts(r_grid);
}

void mg_smooth(const struct mg_grid *r_grid, struct mg_grid *u_grid, const struct mg_stencil *s)
{
    const int n1 = u_grid->n1, n2 = u_grid->n2, n3 = u_grid->n3;
    double(*u)[n2][n1] = MG_VIEW(u_grid);
    double(*r)[n2][n1] = MG_VIEW(r_grid);
#pragma omp parallel for schedule(static)
    for (int i3 = 1; i3 < n3 - 1; i3++) {
        double sum_face[n1], sum_edge[n1];
        for (int i2 = 1; i2 < n2 - 1; i2++) {
            line_sums(n2, n1, r, i3, i2, sum_face, sum_edge);
            /* s->c[3] (corners) is zero for every class and is skipped. */
            for (int i1 = 1; i1 < n1 - 1; i1++)
                u[i3][i2][i1] += s->c[0] * r[i3][i2][i1] +
                                 s->c[1] * (r[i3][i2][i1 - 1] + r[i3][i2][i1 + 1] + sum_face[i1]) +
                                 s->c[2] * (sum_edge[i1] + sum_face[i1 - 1] + sum_face[i1 + 1]);
        }
    }
    mg_exchange_ghosts(u_grid);
}

void mg_restrict(const struct mg_grid *fine, struct mg_grid *coarse)
{
    const int m1 = fine->n1, m2 = fine->n2;
    const int n1 = coarse->n1, n2 = coarse->n2, n3 = coarse->n3;
    double(*r)[m2][m1] = MG_VIEW(fine);
    double(*s)[n2][n1] = MG_VIEW(coarse);
    /* Coarse point j sits on fine point 2j; a fine grid of one interior point per side (n = 3) is the
     * spec's special case of an offset of 2. */
    const int d1 = fine->n1 == 3 ? 2 : 1, d2 = fine->n2 == 3 ? 2 : 1, d3 = fine->n3 == 3 ? 2 : 1;
#pragma omp parallel for schedule(static)
    for (int j3 = 1; j3 < n3 - 1; j3++) {
        const int i3 = 2 * j3 - d3;
        double face_ring[m1], corner_ring[m1];
        for (int j2 = 1; j2 < n2 - 1; j2++) {
            const int i2 = 2 * j2 - d2;
            /* Sums over the (i2, i3) ring around the centre line, at every fine i1 that is a coarse point's
             * lower x neighbour. */
            for (int j1 = 1; j1 < n1; j1++) {
                const int i1 = 2 * j1 - d1;
                face_ring[i1] = r[i3 + 1][i2][i1] + r[i3 + 1][i2 + 2][i1] + r[i3][i2 + 1][i1] + r[i3 + 2][i2 + 1][i1];
                corner_ring[i1] = r[i3][i2][i1] + r[i3 + 2][i2][i1] + r[i3][i2 + 2][i1] + r[i3 + 2][i2 + 2][i1];
            }
            for (int j1 = 1; j1 < n1 - 1; j1++) {
                const int i1 = 2 * j1 - d1;
                double corner_ring_mid = r[i3][i2][i1 + 1] + r[i3 + 2][i2][i1 + 1] + r[i3][i2 + 2][i1 + 1] +
                                         r[i3 + 2][i2 + 2][i1 + 1];
                double face_ring_mid = r[i3 + 1][i2][i1 + 1] + r[i3 + 1][i2 + 2][i1 + 1] + r[i3][i2 + 1][i1 + 1] +
                                       r[i3 + 2][i2 + 1][i1 + 1];
                /* Weights 1/2 centre, 1/4 faces, 1/8 edges, 1/16 corners (spec 2.5, operator P). */
                s[j3][j2][j1] = 0.5 * r[i3 + 1][i2 + 1][i1 + 1] +
                                0.25 * (r[i3 + 1][i2 + 1][i1] + r[i3 + 1][i2 + 1][i1 + 2] + face_ring_mid) +
                                0.125 * (face_ring[i1] + face_ring[i1 + 2] + corner_ring_mid) +
                                0.0625 * (corner_ring[i1] + corner_ring[i1 + 2]);
            }
        }
    }
    mg_exchange_ghosts(coarse);
}

void mg_prolongate(const struct mg_grid *coarse, struct mg_grid *fine)
{
    const int m1 = coarse->n1, m2 = coarse->n2, m3 = coarse->n3;
    const int n1 = fine->n1, n2 = fine->n2;
    double(*z)[m2][m1] = MG_VIEW(coarse);
    double(*u)[n2][n1] = MG_VIEW(fine);
    /* Coarse point i maps to fine point 2i; fine points in between get the mean of their coarse neighbours
     * (weights 1, 1/2, 1/4, 1/8 by the number of odd coordinates; spec 2.5, operator Q). The loops cover the
     * fine ghost layers too, which the coarse ghosts make periodic, so no exchange is needed afterwards. */
#pragma omp parallel for schedule(static)
    for (int i3 = 0; i3 < m3 - 1; i3++) {
        double pair_y[m1], pair_z[m1], quad_yz[m1];
        for (int i2 = 0; i2 < m2 - 1; i2++) {
            for (int i1 = 0; i1 < m1; i1++) {
                pair_y[i1] = z[i3][i2 + 1][i1] + z[i3][i2][i1];
                pair_z[i1] = z[i3 + 1][i2][i1] + z[i3][i2][i1];
                quad_yz[i1] = z[i3 + 1][i2 + 1][i1] + z[i3 + 1][i2][i1] + pair_y[i1];
            }
            for (int i1 = 0; i1 < m1 - 1; i1++) {
                u[2 * i3][2 * i2][2 * i1] += z[i3][i2][i1];
                u[2 * i3][2 * i2][2 * i1 + 1] += 0.5 * (z[i3][i2][i1 + 1] + z[i3][i2][i1]);
                u[2 * i3][2 * i2 + 1][2 * i1] += 0.5 * pair_y[i1];
                u[2 * i3][2 * i2 + 1][2 * i1 + 1] += 0.25 * (pair_y[i1] + pair_y[i1 + 1]);
                u[2 * i3 + 1][2 * i2][2 * i1] += 0.5 * pair_z[i1];
                u[2 * i3 + 1][2 * i2][2 * i1 + 1] += 0.25 * (pair_z[i1] + pair_z[i1 + 1]);
                u[2 * i3 + 1][2 * i2 + 1][2 * i1] += 0.25 * quad_yz[i1];
                u[2 * i3 + 1][2 * i2 + 1][2 * i1 + 1] += 0.125 * (quad_yz[i1] + quad_yz[i1 + 1]);
            }
        }
    }
}

double mg_norm2(const struct mg_grid *g)
{
    const int n1 = g->n1, n2 = g->n2, n3 = g->n3;
    double(*r)[n2][n1] = MG_VIEW(g);
    double sum = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
    for (int i3 = 1; i3 < n3 - 1; i3++)
        for (int i2 = 1; i2 < n2 - 1; i2++)
            for (int i1 = 1; i1 < n1 - 1; i1++)
                sum += r[i3][i2][i1] * r[i3][i2][i1];
    return sqrt(sum / ((double)(n1 - 2) * (n2 - 2) * (n3 - 2)));
}
