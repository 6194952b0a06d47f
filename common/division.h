/* Division by a number whose reciprocal is known, with the bits of IEEE
 * division: for the GPU kernels that divide every particle's coordinate by
 * the grid spacing, where nvcc's division refines a reciprocal of the
 * spacing anew each time (about 20 instructions with its special-case
 * test). The reference backend divides; this gives the same double.
 *
 * Why it is exact (Muller et al., Handbook of Floating-Point Arithmetic,
 * the correction step of Markstein): with y the correctly rounded 1/b
 * (relative error below 2^-53) and q a faithful quotient (within one ulp
 * of a/b), r = a − b·q is exact in one FMA and RN(q + r·y) = RN(a/b).
 * q0 = RN(a·y) is within 1.5 ulp only, so one correction first makes it
 * faithful (its error becomes ½ ulp plus (a − b·q0)(y − 1/b), far below
 * an ulp), and a second gives the rounded quotient. Every step stays
 * normal and finite for |a| in [2^-900, 2^900] and |b| in [2^-100, 2^100];
 * anything else (0, subnormals, ±inf, NaN, extreme spacings) divides.
 * tests/test_division.c checks it against division on the CPU, whose FMA
 * rounds as the GPUs' does. */
#ifndef PARTILE_COMMON_DIVISION_H
#define PARTILE_COMMON_DIVISION_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "common/portable.h"

/* The two corrections alone, for a caller that has shown its operands in
 * range: |a| in [2^-900, 2^900] or a = +0, and |b| in [2^-100, 2^100]. With
 * b > 0, a = +0 gives +0 as a / b does (q = +0, and every r is −0 + +0 =
 * +0); a = −0 would give +0 too, so −0 is out of range. */
static inline PARTILE_HD double partile_div_by_reciprocal_in_range(double a, double b, double y)
{
    double q = a * y;
    double r = fma(-q, b, a);
    q = fma(r, y, q); /* faithful */
    r = fma(-q, b, a); /* exact */
    return fma(r, y, q);
}

/* The range of the proof, for the dividend and the divisor apart (a caller
 * may test the divisor once for many quotients). False for NaN. */
static inline PARTILE_HD int partile_div_dividend_in_range(double a)
{
    const double ma = fabs(a);
    return ma >= 0x1p-900 && ma <= 0x1p900;
}
/* The dividend's test in integer instructions, for kernels that test
 * several at once: key < PARTILE_DIV_KEY_LIMIT only for |a| in [2^-900,
 * 2^900) (never 0, NaN or ±inf), inside the range above; several keys
 * pass together when their maximum does. From the high word with the sign
 * shifted out: a shift-add per dividend, where the test above takes two
 * FP64 comparisons. */
#define PARTILE_DIV_KEY_LOW 0x07B00000u  /* the high word of 2^-900 */
#define PARTILE_DIV_KEY_HIGH 0x78300000u /* and of 2^900 */
#define PARTILE_DIV_KEY_LIMIT ((PARTILE_DIV_KEY_HIGH - PARTILE_DIV_KEY_LOW) << 1)
static inline PARTILE_HD uint32_t partile_div_dividend_key(double a)
{
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    /* below 2^-900 the difference wraps to above the limit */
    return ((uint32_t)(bits >> 32) << 1) - (PARTILE_DIV_KEY_LOW << 1);
}
static inline PARTILE_HD int partile_div_divisor_in_range(double b)
{
    const double mb = fabs(b);
    return mb >= 0x1p-100 && mb <= 0x1p100;
}

/* a / b, rounded to nearest even as IEEE division rounds it, where y is
 * 1.0 / b (correctly rounded: a division on the host or device). */
static inline PARTILE_HD double partile_div_with_reciprocal(double a, double b, double y)
{
    if (partile_div_dividend_in_range(a) && partile_div_divisor_in_range(b))
        return partile_div_by_reciprocal_in_range(a, b, y);
    return a / b;
}

#endif
