/* The CG test matrix of the NPB 3 spec (section 2.4, kernel CG), in compressed sparse row form. */
#ifndef CG_MATRIX_H
#define CG_MATRIX_H

struct cg_matrix {
    int order;       /* n: rows = columns */
    long nonzeros;   /* entries stored (duplicates merged) */
    long *row_start; /* n + 1 offsets into column/value */
    int *column;     /* sorted within each row */
    double *value;
};

/* Builds A = sum_i ratio^i v_i v_i^T + (rcond - shift) I, with v_i a random sparse vector of `nonzer` entries
 * plus v_i[i] = 1/2 and ratio = rcond^(1/n), exactly as the spec's makea. *seed is the generator state (the
 * spec draws one number from it before calling makea); it is advanced. */
void cg_matrix_build(struct cg_matrix *m, int order, int nonzer, double rcond, double shift, double *seed);

void cg_matrix_free(struct cg_matrix *m);

#endif /* CG_MATRIX_H */
