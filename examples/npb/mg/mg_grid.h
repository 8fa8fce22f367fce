/* Grids and operators of the NPB-class MG kernel (NPB 3 spec section 2.5, kernel MG).
 *
 * A grid of level k holds a periodic cube of 2^k points per side plus one ghost layer on each face, so it
 * stores (2^k + 2)^3 values with the x index fastest. Interior points are 1..2^k; index 0 mirrors 2^k and
 * index 2^k + 1 mirrors 1 (periodic boundary, refreshed by mg_exchange_ghosts).
 */
#ifndef MG_GRID_H
#define MG_GRID_H

struct mg_grid {
    int n1, n2, n3; /* stored points per dimension, ghosts included (x fastest) */
    double *data;
};

/* Views the grid as a 3-D array: MG_VIEW(g)[i3][i2][i1]. */
#define MG_VIEW(g) ((double(*)[(g)->n2][(g)->n1])(g)->data)

/* Stencil coefficients, indexed by distance class: centre, face, edge, corner neighbours. */
struct mg_stencil {
    double c[4];
};

void mg_grid_alloc(struct mg_grid *g, int interior_points_per_side);
void mg_grid_free(struct mg_grid *g);
void mg_zero(struct mg_grid *g);

/* Periodic boundary: copies opposite interior faces into the ghost layers. */
void mg_exchange_ghosts(struct mg_grid *g);

/* r = v - A u, A the 27-point operator with coefficients `a` (whose face coefficient is 0). */
void mg_residual(const struct mg_grid *u, const struct mg_grid *v, struct mg_grid *r, const struct mg_stencil *a);

/* u = u + S r, S the smoother with coefficients `s` (whose corner coefficient is 0). */
void mg_smooth(const struct mg_grid *r, struct mg_grid *u, const struct mg_stencil *s);

/* coarse = P fine: full-weighting restriction to the grid of half the points per side. */
void mg_restrict(const struct mg_grid *fine, struct mg_grid *coarse);

/* fine = fine + Q coarse: trilinear interpolation (prolongation) to the grid of twice the points per side. */
void mg_prolongate(const struct mg_grid *coarse, struct mg_grid *fine);

/* L2 norm over the interior, sqrt(sum r^2 / points), as the spec's verification uses. */
double mg_norm2(const struct mg_grid *r);

/* The spec's initial right-hand side (routine zran3): -1 at the 10 interior points where the NPB random
 * sequence takes its smallest values, +1 at the 10 largest, 0 elsewhere. */
void mg_initial_rhs(struct mg_grid *v);

#endif /* MG_GRID_H */
