/* Generation of the CG test matrix (NPB 3 spec section 2.4, routine makea and its helpers).
 *
 * The matrix is a sum of n scaled outer products of random sparse vectors. To reproduce the spec's numbers
 * bit for bit, each entry must be summed from the same contributions in the same order; we therefore
 * collect every contribution (row, column, value) in generation order, bucket them by row keeping that order,
 * sort each row stably by column and add duplicates left to right.
 */
#include "cg_matrix.h"

#include "npb_common.h"
#include "npb_random.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One random sparse vector: `count` distinct 0-based positions and their values. */
struct sparse_vector {
    int count;
    int *position;
    double *value;
};

/* The spec's sprnvc: draws (value, position) pairs, position = floor(next * 2^k) over the smallest power of
 * two 2^k >= n, rejecting positions >= n and positions already drawn, until `wanted` entries exist. */
static void draw_sparse_vector(struct sparse_vector *v, int n, int wanted, int pow2_above_n, double *seed)
{
    v->count = 0;
    while (v->count < wanted) {
        double value = npb_randlc(seed, NPB_MULTIPLIER);
        int position = (int)(pow2_above_n * npb_randlc(seed, NPB_MULTIPLIER));
        if (position >= n)
            continue;
        bool seen = false;
        for (int k = 0; k < v->count && !seen; k++)
            seen = v->position[k] == position;
        if (seen)
            continue;
        v->position[v->count] = position;
        v->value[v->count] = value;
        v->count++;
    }
}

/* The spec's vecset: entry `position` becomes `value`, appended if absent. */
static void set_entry(struct sparse_vector *v, int position, double value)
{
    for (int k = 0; k < v->count; k++) {
        if (v->position[k] == position) {
            v->value[k] = value;
            return;
        }
    }
    v->position[v->count] = position;
    v->value[v->count] = value;
    v->count++;
}

struct contribution {
    int column;
    int order; /* generation order within its row, to keep the sort stable */
    double value;
};

static int by_column_then_order(const void *a, const void *b)
{
    const struct contribution *x = a, *y = b;
    if (x->column != y->column)
        return x->column < y->column ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

void cg_matrix_build(struct cg_matrix *m, int n, int nonzer, double rcond, double shift, double *seed)
{
    int pow2_above_n = 1;
    do
        pow2_above_n *= 2;
    while (pow2_above_n < n);

    /* The n sparse vectors, drawn in row order (the random sequence fixes the matrix). */
    const int max_count = nonzer + 1;
    struct sparse_vector *vectors = npb_alloc(sizeof *vectors * (size_t)n, "CG vectors");
    int *positions = npb_alloc(sizeof(int) * (size_t)n * max_count, "CG vector positions");
    double *values = npb_alloc(sizeof(double) * (size_t)n * max_count, "CG vector values");
    for (int i = 0; i < n; i++) {
        vectors[i].position = positions + (size_t)i * max_count;
        vectors[i].value = values + (size_t)i * max_count;
        draw_sparse_vector(&vectors[i], n, nonzer, pow2_above_n, seed);
        set_entry(&vectors[i], i, 0.5);
    }

    /* Row j receives vectors[i].count contributions from every vector i that has an entry at j. */
    long *row_fill = npb_alloc(sizeof(long) * ((size_t)n + 1), "CG row fill");
    memset(row_fill, 0, sizeof(long) * ((size_t)n + 1));
    long *row_start = npb_alloc(sizeof(long) * ((size_t)n + 1), "CG row offsets");
    for (int i = 0; i < n; i++)
        for (int a = 0; a < vectors[i].count; a++)
            row_fill[vectors[i].position[a] + 1] += vectors[i].count;
    row_start[0] = 0;
    for (int j = 0; j < n; j++)
        row_start[j + 1] = row_start[j] + row_fill[j + 1];
    const long total = row_start[n];
    struct contribution *contributions = npb_alloc(sizeof *contributions * (size_t)total, "CG contributions");
    memset(row_fill, 0, sizeof(long) * ((size_t)n + 1));

    /* Vector i adds scale * v v^T with scale = ratio^i; the diagonal entry (i, i) of its own outer product
     * also carries rcond - shift, which bounds the spectrum as the spec intends. */
    const double ratio = pow(rcond, 1.0 / n);
    double scale = 1.0;
    for (int i = 0; i < n; i++) {
        const struct sparse_vector *v = &vectors[i];
        for (int a = 0; a < v->count; a++) {
            const int row = v->position[a];
            const double row_scale = scale * v->value[a];
            for (int b = 0; b < v->count; b++) {
                double value = v->value[b] * row_scale;
                if (row == i && v->position[b] == i)
                    value = value + rcond - shift;
                long slot = row_start[row] + row_fill[row];
                contributions[slot] = (struct contribution){v->position[b], (int)row_fill[row], value};
                row_fill[row]++;
            }
        }
        scale *= ratio;
    }

    /* Sort each row by column and merge duplicates in generation order. */
    m->order = n;
    m->row_start = row_start;
    m->column = npb_alloc(sizeof(int) * (size_t)total, "CG columns");
    m->value = npb_alloc(sizeof(double) * (size_t)total, "CG values");
    long stored = 0;
    for (int j = 0; j < n; j++) {
        struct contribution *row = contributions + row_start[j];
        long count = row_start[j + 1] - row_start[j];
        qsort(row, (size_t)count, sizeof *row, by_column_then_order);
        row_start[j] = stored;
        for (long k = 0; k < count; k++) {
            if (k > 0 && row[k].column == row[k - 1].column) {
                m->value[stored - 1] += row[k].value;
            } else {
                m->column[stored] = row[k].column;
                m->value[stored] = 0.0 + row[k].value;
                stored++;
            }
        }
    }
    row_start[n] = stored;
    m->nonzeros = stored;

    free(contributions);
    free(row_fill);
    free(values);
    free(positions);
    free(vectors);
}

void cg_matrix_free(struct cg_matrix *m)
{
    free(m->row_start);
    free(m->column);
    free(m->value);
    *m = (struct cg_matrix){0};
}
