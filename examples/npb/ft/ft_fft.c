/* 3-D FFT as three passes of 1-D radix-2 transforms (decimation in time, bit-reversed input order).
 *
 * x lines are contiguous and transformed in place. For y and z, BLOCK neighbouring columns are copied into a
 * small contiguous buffer, transformed and copied back: the copy reads whole cache lines, where transforming
 * columns in place would touch one complex number per line. Roots of unity come from cos/sin of each angle
 * (not from repeated multiplication) to keep the rounding well inside FT's 1e-12 verification tolerance.
 */
#include "ft_fft.h"

#include "npb_common.h"

#include <math.h>
#include <stdlib.h>

enum { BLOCK = 16 }; /* columns gathered per copy for the y and z passes */

static void line_plan_init(struct ft_line_plan *p, int length)
{
    p->length = length;
    p->bit_reversed = npb_alloc(sizeof(int) * (size_t)length, "FFT permutation");
    p->roots = npb_alloc(sizeof(struct ft_complex) * (size_t)(length / 2 + 1), "FFT roots");
    int bits = 0;
    while ((1 << bits) < length)
        bits++;
    for (int i = 0; i < length; i++) {
        int r = 0;
        for (int b = 0; b < bits; b++)
            r |= ((i >> b) & 1) << (bits - 1 - b);
        p->bit_reversed[i] = r;
    }
    const double pi = acos(-1.0);
    for (int k = 0; k < length / 2; k++) {
        double angle = 2.0 * pi * k / length;
        p->roots[k] = (struct ft_complex){cos(angle), -sin(angle)};
    }
}

static void line_plan_free(struct ft_line_plan *p)
{
    free(p->bit_reversed);
    free(p->roots);
}

/* Transforms `count` contiguous lines of p->length points in place. */
static void transform_lines(const struct ft_line_plan *p, struct ft_complex *lines, int count,
                            enum ft_direction direction)
{
    const int n = p->length;
    const double sign = direction == FT_FORWARD ? 1.0 : -1.0; /* roots are stored for the forward sign */
    for (int l = 0; l < count; l++) {
        struct ft_complex *x = lines + (size_t)l * n;
        for (int i = 0; i < n; i++) {
            int r = p->bit_reversed[i];
            if (r > i) {
                struct ft_complex t = x[i];
                x[i] = x[r];
                x[r] = t;
            }
        }
        for (int half = 1; half < n; half *= 2) {
            const int stride = n / (2 * half);
            for (int start = 0; start < n; start += 2 * half) {
                for (int k = 0; k < half; k++) {
                    const struct ft_complex w = {p->roots[k * stride].re, sign * p->roots[k * stride].im};
                    struct ft_complex *a = &x[start + k], *b = &x[start + k + half];
                    const struct ft_complex wb = {w.re * b->re - w.im * b->im, w.re * b->im + w.im * b->re};
                    *b = (struct ft_complex){a->re - wb.re, a->im - wb.im};
                    *a = (struct ft_complex){a->re + wb.re, a->im + wb.im};
                }
            }
        }
    }
}

void ft_transform_init(struct ft_transform *t, int nx, int ny, int nz)
{
    t->nx = nx;
    t->ny = ny;
    t->nz = nz;
    line_plan_init(&t->x, nx);
    line_plan_init(&t->y, ny);
    line_plan_init(&t->z, nz);
}

void ft_transform_free(struct ft_transform *t)
{
    line_plan_free(&t->x);
    line_plan_free(&t->y);
    line_plan_free(&t->z);
}

void ft_transform_3d(const struct ft_transform *t, struct ft_complex *data, enum ft_direction direction)
{
    const int nx = t->nx, ny = t->ny, nz = t->nz;
    const size_t plane = (size_t)nx * ny;

#pragma omp parallel for schedule(static)
    for (int k = 0; k < nz; k++)
        transform_lines(&t->x, data + k * plane, ny, direction);

#pragma omp parallel for schedule(static)
    for (int k = 0; k < nz; k++) {
        struct ft_complex buffer[BLOCK * ny];
        for (int i0 = 0; i0 < nx; i0 += BLOCK) {
            const int width = nx - i0 < BLOCK ? nx - i0 : BLOCK;
            for (int j = 0; j < ny; j++)
                for (int b = 0; b < width; b++)
                    buffer[b * ny + j] = data[k * plane + (size_t)j * nx + i0 + b];
            transform_lines(&t->y, buffer, width, direction);
            for (int j = 0; j < ny; j++)
                for (int b = 0; b < width; b++)
                    data[k * plane + (size_t)j * nx + i0 + b] = buffer[b * ny + j];
        }
    }

#pragma omp parallel for schedule(static)
    for (int j = 0; j < ny; j++) {
        struct ft_complex buffer[BLOCK * nz];
        for (int i0 = 0; i0 < nx; i0 += BLOCK) {
            const int width = nx - i0 < BLOCK ? nx - i0 : BLOCK;
            for (int k = 0; k < nz; k++)
                for (int b = 0; b < width; b++)
                    buffer[b * nz + k] = data[k * plane + (size_t)j * nx + i0 + b];
            transform_lines(&t->z, buffer, width, direction);
            for (int k = 0; k < nz; k++)
                for (int b = 0; b < width; b++)
                    data[k * plane + (size_t)j * nx + i0 + b] = buffer[b * nz + k];
        }
    }
}
