/* NPB-class FT (3-D FFT PDE solver), NPB 3 spec section 2.7 (kernel FT).
 *
 * Solves the diffusion equation du/dt = alpha laplacian(u) on a periodic grid spectrally: the random initial
 * field is transformed once (forward 3-D FFT); each time step t multiplies the spectrum by
 * exp(-4 alpha pi^2 |k|^2) once more (so it holds exp(-4 alpha pi^2 |k|^2 t) times the initial spectrum),
 * transforms a copy back (inverse FFT) and records a checksum of 1024 fixed points. Verification compares
 * all checksums.
 */
#include "ft_fft.h"
#include "npb_common.h"
#include "npb_iteration.h"
#include "npb_random.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FT_STEPS = 6, CHECKSUM_POINTS = 1024 };

#define FT_ALPHA 1e-6
#define FT_EPSILON 1e-12

struct ft_class {
    char id;
    int nx, ny, nz;
    struct ft_complex checksum[FT_STEPS]; /* reference checksums (spec 2.7, verification table) */
};

static const struct ft_class ft_classes[] = {
    {'S', 64, 64, 64,
     {{5.546087004964e+02, 4.845363331978e+02}, {5.546385409189e+02, 4.865304269511e+02},
      {5.546148406171e+02, 4.883910722336e+02}, {5.545423607415e+02, 4.901273169046e+02},
      {5.544255039624e+02, 4.917475857993e+02}, {5.542683411902e+02, 4.932597244941e+02}}},
    {'W', 128, 128, 32,
     {{5.673612178944e+02, 5.293246849175e+02}, {5.631436885271e+02, 5.282149986629e+02},
      {5.594024089970e+02, 5.270996558037e+02}, {5.560698047020e+02, 5.260027904925e+02},
      {5.530898991250e+02, 5.249400845633e+02}, {5.504159734538e+02, 5.239212247086e+02}}},
    {'A', 256, 256, 128,
     {{5.046735008193e+02, 5.114047905510e+02}, {5.059412319734e+02, 5.098809666433e+02},
      {5.069376896287e+02, 5.098144042213e+02}, {5.077892868474e+02, 5.101336130759e+02},
      {5.085233095391e+02, 5.104914655194e+02}, {5.091487099959e+02, 5.107917842803e+02}}},
};

/* Signed wave number of index i on a periodic axis of n points: i for i < n/2, i - n above. */
static int wave_number(int i, int n)
{
    return (i + n / 2) % n - n / 2;
}

/* decay[k][j][i] = exp(-4 alpha pi^2 (i'^2 + j'^2 + k'^2)) for signed wave numbers i', j', k'. */
static void compute_decay(const struct ft_class *c, double *decay)
{
    const double pi = acos(-1.0);
    const double exponent = -4.0 * FT_ALPHA * pi * pi;
#pragma omp parallel for schedule(static)
    for (int k = 0; k < c->nz; k++) {
        const int kk = wave_number(k, c->nz);
        for (int j = 0; j < c->ny; j++) {
            const int jj = wave_number(j, c->ny);
            double *row = decay + ((size_t)k * c->ny + j) * c->nx;
            for (int i = 0; i < c->nx; i++) {
                const int ii = wave_number(i, c->nx);
                row[i] = exp(exponent * (double)(ii * ii + jj * jj + kk * kk));
            }
        }
    }
}

/* Point n (x fastest) gets the 2n-th and (2n+1)-th numbers of the NPB sequence as real and imaginary parts;
 * each plane jumps to its first number. */
static void initial_field(const struct ft_class *c, struct ft_complex *u)
{
    const long plane_numbers = 2L * c->nx * c->ny;
    const double plane_jump = npb_power(NPB_MULTIPLIER, plane_numbers);
#pragma omp parallel for schedule(static)
    for (int k = 0; k < c->nz; k++) {
        double seed = NPB_DEFAULT_SEED;
        npb_randlc(&seed, npb_power(plane_jump, k));
        npb_vranlc(plane_numbers, &seed, NPB_MULTIPLIER, &u[(size_t)k * c->nx * c->ny].re);
    }
}

/* One time step in Fourier space: spectrum *= decay, and field = spectrum (to be transformed back). */
static void evolve(size_t points, struct ft_complex *spectrum, const double *decay, struct ft_complex *field)
{
#pragma omp parallel for schedule(static)
    for (size_t n = 0; n < points; n++) {
        spectrum[n].re *= decay[n];
        spectrum[n].im *= decay[n];
        field[n] = spectrum[n];
    }
}

/* Mean of the field over 1024 fixed points (spec 2.7): point j is (j mod nx, 3j mod ny, 5j mod nz). */
static struct ft_complex checksum(const struct ft_class *c, const struct ft_complex *u)
{
    struct ft_complex sum = {0.0, 0.0};
    for (int j = 1; j <= CHECKSUM_POINTS; j++) {
        const int i = j % c->nx, jj = (3 * j) % c->ny, k = (5 * j) % c->nz;
        const struct ft_complex v = u[((size_t)k * c->ny + jj) * c->nx + i];
        sum.re += v.re;
        sum.im += v.im;
    }
    /* the inverse transform is unnormalised: divide by the number of points here */
    const double points = (double)c->nx * c->ny * c->nz;
    return (struct ft_complex){sum.re / points, sum.im / points};
}

/* Memory traffic of one time step (docs/npb.md, "Memory traffic per iteration"; reads once, writes twice),
 * P points of 16-byte complex values: evolve updates the spectrum, reads the 8-byte decay factors and writes
 * the field (2·16P + 8P + 2·16P); each of the inverse transform's three passes reads and writes the field once
 * (x lines in place, y and z columns through a cached buffer of 16 columns: 3 · 2·16P). The checksum reads
 * 1024 scattered points (64 KiB of lines), left out. Mirrors evolve and ft_transform_3d. */
static uint64_t ft_traffic(uint64_t points)
{
    const uint64_t complex_bytes = sizeof(struct ft_complex) * points;
    const uint64_t evolve = 2 * complex_bytes + sizeof(double) * points + 2 * complex_bytes;
    const uint64_t transform = 3 * (2 * complex_bytes);
    return evolve + transform;
}

static bool verify(const struct ft_class *c, const struct ft_complex sums[FT_STEPS])
{
    bool all = true;
    printf(" Verification (spec 2.7, |relative error| <= %.0e):\n", FT_EPSILON);
    for (int t = 0; t < FT_STEPS; t++) {
        const struct ft_complex ref = c->checksum[t];
        const double dre = sums[t].re - ref.re, dim = sums[t].im - ref.im;
        const double error = sqrt((dre * dre + dim * dim) / (ref.re * ref.re + ref.im * ref.im));
        const bool ok = error <= FT_EPSILON;
        all = all && ok;
        printf("  step %d  checksum %20.12e %20.12e  rel. error %.3e %s\n", t + 1, sums[t].re, sums[t].im,
               error, ok ? "ok" : "FAILED");
    }
    return all;
}

int main(int argc, char **argv)
{
    static const struct npb_program program = {
        "FT", "spectral solution of a 3-D diffusion equation with forward and inverse FFTs (NPB 3 spec 2.7)",
        "  S  64x64x64, 6 steps\n  W  128x128x32, 6 steps\n  A  256x256x128, 6 steps\n"};
    char class_id;
    int status;
    if (!npb_parse_class(argc, argv, &program, &class_id, &status))
        return status;
    const struct ft_class *cls = &ft_classes[npb_class_index(class_id)];
    const size_t points = (size_t)cls->nx * cls->ny * cls->nz;
    printf(" NPB-class FT, class %c: %dx%dx%d grid, %d steps\n", cls->id, cls->nx, cls->ny, cls->nz, FT_STEPS);

    struct ft_complex *spectrum = npb_alloc(sizeof(struct ft_complex) * points, "FT spectrum");
    struct ft_complex *field = npb_alloc(sizeof(struct ft_complex) * points, "FT field");
    double *decay = npb_alloc(sizeof(double) * points, "FT decay factors");
    struct ft_complex sums[FT_STEPS];
    const uint64_t traffic = ft_traffic(points);
    npb_print_traffic(traffic);

    /* The spec times the set-up and the forward transform too (its operation count includes them). */
    double start = npb_seconds();
    struct ft_transform fft;
    ft_transform_init(&fft, cls->nx, cls->ny, cls->nz);
    compute_decay(cls, decay);
    initial_field(cls, spectrum);
    ft_transform_3d(&fft, spectrum, FT_FORWARD);
    for (int t = 0; t < FT_STEPS; t++) {
        NPB_ITERATION_BEGIN();
        evolve(points, spectrum, decay, field);
        ft_transform_3d(&fft, field, FT_INVERSE);
        sums[t] = checksum(cls, field);
        NPB_ITERATION_END();
        NPB_REPORT_BYTES(traffic);
        printf("  step %d  checksum %20.12e %20.12e\n", t + 1, sums[t].re, sums[t].im);
    }
    double seconds = npb_seconds() - start;

    bool verified = verify(cls, sums);
    const double log_points = log((double)points);
    char size[48];
    snprintf(size, sizeof size, "%dx%dx%d", cls->nx, cls->ny, cls->nz);
    struct npb_result result = {
        .kernel = "FT",
        .class_id = cls->id,
        .size = size,
        .iterations = FT_STEPS,
        .seconds = seconds,
        /* the spec's operation count: set-up and forward FFT, then per step */
        .mops = 1e-6 * (double)points *
                (14.8157 + 7.19641 * log_points + (5.23518 + 7.21113 * log_points) * FT_STEPS) / seconds,
        .operation = "floating point",
        .verified = verified,
    };
    ft_transform_free(&fft);
    free(decay);
    free(field);
    free(spectrum);
    return npb_report(&result);
}
