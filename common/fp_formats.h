/* Rounding of float to the tile input formats TF32, FP16 and BF16, and back.
 * Bit-exact integer implementations, shared by the reference engine and the
 * GPU engines so that every backend feeds the tile the same inputs.
 *   TF32: round to nearest, ties away from zero (what cvt.rna.tf32.f32 does),
 *         kept as a float whose low 13 mantissa bits are zero;
 *   FP16, BF16: round to nearest, ties to even; NaN stays NaN (quiet). */
#ifndef PARTILE_COMMON_FP_FORMATS_H
#define PARTILE_COMMON_FP_FORMATS_H

#include <stdint.h>
#include <string.h>

#include "common/portable.h"

static inline PARTILE_HD uint32_t partile_float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline PARTILE_HD float partile_bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline PARTILE_HD float partile_round_tf32(float f)
{
    uint32_t x = partile_float_bits(f);
    if ((x & 0x7f800000u) == 0x7f800000u) /* inf or NaN: unchanged */
        return f;
    x = (x + 0x1000u) & 0xffffe000u; /* a carry into the exponent is right */
    return partile_bits_float(x);
}

static inline PARTILE_HD uint16_t partile_float_to_bf16(float f)
{
    uint32_t x = partile_float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x0040u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

static inline PARTILE_HD float partile_bf16_to_float(uint16_t h)
{
    return partile_bits_float((uint32_t)h << 16);
}

static inline PARTILE_HD uint16_t partile_float_to_fp16(float f)
{
    uint32_t x = partile_float_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx > 0x7f800000u) /* NaN: quiet, keep the top payload bits */
        return (uint16_t)(sign | 0x7e00u | ((absx >> 13) & 0x3ffu));
    if (absx >= 0x477ff000u) /* >= 65520 rounds to infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (absx < 0x33000000u) /* < 2^-25 rounds to zero */
        return (uint16_t)sign;
    if (absx < 0x38800000u) { /* FP16 subnormal: units of 2^-24 */
        uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
        int shift = 126 - (int)(absx >> 23); /* 14 ... 24 */
        uint32_t q = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1u);
        uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1u)))
            q++;
        return (uint16_t)(sign | q);
    }
    uint32_t h = (absx >> 13) - (112u << 10);
    uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++; /* a carry into the exponent is right */
    return (uint16_t)(sign | h);
}

static inline PARTILE_HD float partile_fp16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1fu)
        return partile_bits_float(sign | 0x7f800000u | (mant << 13));
    if (exp != 0)
        return partile_bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
    if (mant == 0)
        return partile_bits_float(sign);
    /* subnormal: normalise */
    int e = 113;
    while (!(mant & 0x400u)) {
        mant <<= 1;
        e--;
    }
    return partile_bits_float(sign | ((uint32_t)e << 23) | ((mant & 0x3ffu) << 13));
}

#endif
