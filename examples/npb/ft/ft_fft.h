/* Unnormalised 3-D complex FFT for the NPB-class FT kernel (power-of-two sides). */
#ifndef FT_FFT_H
#define FT_FFT_H

/* A complex number as two doubles; kept explicit (rather than C99 _Complex) so that multiplication is the
 * plain four-multiply formula without the compiler's inf/NaN recovery calls. */
struct ft_complex {
    double re, im;
};

/* Precomputed data for the 1-D transforms of one length. */
struct ft_line_plan {
    int length;                /* power of two */
    int *bit_reversed;         /* index permutation */
    struct ft_complex *roots;  /* exp(-2 pi i k / length), k < length / 2 */
};

/* A grid of nz planes of ny lines of nx points, x fastest: data[(k * ny + j) * nx + i]. */
struct ft_transform {
    int nx, ny, nz;
    struct ft_line_plan x, y, z;
};

enum ft_direction { FT_FORWARD = -1, FT_INVERSE = +1 };

void ft_transform_init(struct ft_transform *t, int nx, int ny, int nz);
void ft_transform_free(struct ft_transform *t);

/* In-place, unnormalised: sum_n data[n] exp(direction * 2 pi i n.k / N) along x, then y, then z, each
 * dimension one parallel region. */
void ft_transform_3d(const struct ft_transform *t, struct ft_complex *data, enum ft_direction direction);

#endif /* FT_FFT_H */
