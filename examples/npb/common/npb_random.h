/* The NPB pseudo-random number generator (NPB 3 spec, section 2.2 "Pseudorandom number generator").
 *
 * A linear congruential generator x_{k+1} = a * x_k (mod 2^46) returning x_{k+1} * 2^-46 in (0, 1). Seeds and
 * multipliers are carried as doubles holding odd integers below 2^46, as in the spec, so the kernels read like
 * the spec's pseudo-code; the arithmetic itself is exact 64-bit integer arithmetic (the low 46 bits of a
 * 64-bit product are exact), which gives bit-identical sequences to the spec's split-double algorithm.
 */
#ifndef NPB_RANDOM_H
#define NPB_RANDOM_H

/* The spec's multiplier a = 5^13 and the default seed used by CG, MG, IS and FT. */
#define NPB_MULTIPLIER 1220703125.0
#define NPB_DEFAULT_SEED 314159265.0

/* Advances *seed once and returns the new value scaled into (0, 1) (the spec's randlc). */
double npb_randlc(double *seed, double multiplier);

/* Advances *seed count times, storing each scaled value into out[0..count) (the spec's vranlc). */
void npb_vranlc(long count, double *seed, double multiplier, double *out);

/* multiplier^exponent mod 2^46: jumping `exponent` steps ahead in a sequence is one multiplication by it. */
double npb_power(double multiplier, long exponent);

#endif /* NPB_RANDOM_H */
