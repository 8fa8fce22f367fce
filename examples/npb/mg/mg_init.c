/* The MG right-hand side (NPB 3 spec section 2.5, routine zran3).
 *
 * Interior point (i1, i2, i3) (1-based) is the L-th number of the NPB sequence from the default seed, with
 * L = (i1 - 1) + nx ((i2 - 1) + ny (i3 - 1)) (x fastest). The right-hand side is -1 at the ten smallest of
 * those numbers, +1 at the ten largest and 0 elsewhere. Planes are generated in parallel: plane i3 starts
 * nx * ny * (i3 - 1) numbers into the sequence, reached with one jump (multiplier a^(nx ny (i3 - 1))).
 */
#include "mg_grid.h"

#include "npb_random.h"

#include <string.h>

enum { EXTREMES = 10 };

/* The EXTREMES largest keys seen so far with where they were, largest first. */
struct top_keys {
    int count;
    double key[EXTREMES];
    long where[EXTREMES];
};

static void top_keys_offer(struct top_keys *t, double key, long where)
{
    if (t->count == EXTREMES && key <= t->key[EXTREMES - 1])
        return;
    int slot = t->count < EXTREMES ? t->count++ : EXTREMES - 1;
    while (slot > 0 && t->key[slot - 1] < key) {
        t->key[slot] = t->key[slot - 1];
        t->where[slot] = t->where[slot - 1];
        slot--;
    }
    t->key[slot] = key;
    t->where[slot] = where;
}

static void top_keys_merge(struct top_keys *into, const struct top_keys *from)
{
    for (int k = 0; k < from->count; k++)
        top_keys_offer(into, from->key[k], from->where[k]);
}

void mg_initial_rhs(struct mg_grid *v)
{
    const int n1 = v->n1, n2 = v->n2, n3 = v->n3;
    const int nx = n1 - 2, ny = n2 - 2;
    double(*z)[n2][n1] = MG_VIEW(v);
    const double line_jump = npb_power(NPB_MULTIPLIER, nx);
    const double plane_step = npb_power(NPB_MULTIPLIER, (long)nx * ny);

    /* Largest values, and largest negated values (= smallest values). Positions are linear indices into
     * the stored grid, ghosts included. */
    struct top_keys largest = {0}, smallest = {0};
#pragma omp parallel
    {
        struct top_keys my_largest = {0}, my_smallest = {0};
#pragma omp for schedule(static)
        for (int i3 = 1; i3 < n3 - 1; i3++) {
            double plane_seed = NPB_DEFAULT_SEED;
            npb_randlc(&plane_seed, npb_power(plane_step, i3 - 1));
            for (int i2 = 1; i2 < n2 - 1; i2++) {
                double line_seed = plane_seed;
                npb_vranlc(nx, &line_seed, NPB_MULTIPLIER, &z[i3][i2][1]);
                npb_randlc(&plane_seed, line_jump);
                for (int i1 = 1; i1 < n1 - 1; i1++) {
                    long where = ((long)i3 * n2 + i2) * n1 + i1;
                    top_keys_offer(&my_largest, z[i3][i2][i1], where);
                    top_keys_offer(&my_smallest, -z[i3][i2][i1], where);
                }
            }
        }
#pragma omp critical(mg_initial_rhs_merge)
        {
            top_keys_merge(&largest, &my_largest);
            top_keys_merge(&smallest, &my_smallest);
        }
    }

    mg_zero(v);
    for (int k = 0; k < smallest.count; k++)
        v->data[smallest.where[k]] = -1.0;
    for (int k = 0; k < largest.count; k++)
        v->data[largest.where[k]] = +1.0;
    mg_exchange_ghosts(v);
}
