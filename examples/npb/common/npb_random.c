/* NPB pseudo-random number generator; see npb_random.h for the contract. */
#include "npb_random.h"

#include <stdint.h>

#define MOD46_MASK ((UINT64_C(1) << 46) - 1)
#define TWO_TO_MINUS_46 0x1p-46

/* Both operands are below 2^46: the product modulo 2^64 has the right low 46 bits, which is all we keep. */
static inline uint64_t mul_mod46(uint64_t x, uint64_t a)
{
    return (x * a) & MOD46_MASK;
}

double npb_randlc(double *seed, double multiplier)
{
    uint64_t x = mul_mod46((uint64_t)*seed, (uint64_t)multiplier);
    *seed = (double)x;
    return (double)x * TWO_TO_MINUS_46;
}

void npb_vranlc(long count, double *seed, double multiplier, double *out)
{
    uint64_t x = (uint64_t)*seed;
    const uint64_t a = (uint64_t)multiplier;
    for (long i = 0; i < count; i++) {
        x = mul_mod46(x, a);
        out[i] = (double)x * TWO_TO_MINUS_46;
    }
    *seed = (double)x;
}

double npb_power(double multiplier, long exponent)
{
    uint64_t result = 1, square = (uint64_t)multiplier;
    for (; exponent > 0; exponent >>= 1) {
        if (exponent & 1)
            result = mul_mod46(result, square);
        square = mul_mod46(square, square);
    }
    return (double)result;
}
