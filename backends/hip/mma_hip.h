/* The HIP tile engine: one MFMA per tile (wave64). Register forms and the
 * instruction wrappers (clang's __builtin_amdgcn_mfma_*); layouts are in
 * mfma_layout.h. The gfx940-only xf32 shape traps if ever reached on
 * another target (the host never launches it there: shape_available checks
 * gcnArchName).
 *
 * Unverified on hardware (no AMD GPU here, DESIGN.md §3): the accumulation
 * order inside one MFMA (the engine declares the forward FMA chain over k,
 * as measured for mma.sync on NVIDIA), and the rounding xf32 applies inside
 * the instruction. Inputs are rounded on the way in with the shared rules of
 * common/fp_formats.h, so every backend feeds the tile the same values. */
#ifndef PARTILE_HIP_MMA_HIP_H
#define PARTILE_HIP_MMA_HIP_H

#include <stdint.h>

#include "backends/gpu/dialect.h"
#include "backends/hip/mfma_layout.h"
#include "common/fp_formats.h"

#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define PARTILE_GFX940_XF32 1
#else
#define PARTILE_GFX940_XF32 0
#endif

typedef double mfma_v4d __attribute__((ext_vector_type(4)));
typedef float mfma_v4f __attribute__((ext_vector_type(4)));
typedef float mfma_v2f __attribute__((ext_vector_type(2)));
typedef _Float16 mfma_v4h __attribute__((ext_vector_type(4)));
typedef short mfma_v4s __attribute__((ext_vector_type(4)));

PARTILE_DEVICE mfma_v4f load_v4f(const float *d) { return mfma_v4f{d[0], d[1], d[2], d[3]}; }
PARTILE_DEVICE void store_v4f(float *d, mfma_v4f v)
{
    d[0] = v[0]; d[1] = v[1]; d[2] = v[2]; d[3] = v[3];
}

/* f64: no conversion. */
typedef double f64_16x16x4_in_t;
PARTILE_DEVICE double f64_16x16x4_in(double x) { return x; }
PARTILE_DEVICE void f64_16x16x4_mma(double *d, const double *a, const double *b)
{
    mfma_v4d acc = {d[0], d[1], d[2], d[3]};
    acc = __builtin_amdgcn_mfma_f64_16x16x4f64(a[0], b[0], acc, 0, 0, 0);
    d[0] = acc[0]; d[1] = acc[1]; d[2] = acc[2]; d[3] = acc[3];
}

/* f32: no conversion. */
typedef float f32_16x16x4_in_t;
PARTILE_DEVICE float f32_16x16x4_in(float x) { return x; }
PARTILE_DEVICE void f32_16x16x4_mma(float *d, const float *a, const float *b)
{
    store_v4f(d, __builtin_amdgcn_mfma_f32_16x16x4f32(a[0], b[0], load_v4f(d), 0, 0, 0));
}

/* xf32: rounded to TF32 with the shared rule (ties away, = cvt.rna on
 * NVIDIA); whether the instruction itself rounds or truncates an unrounded
 * float is not documented, and we never give it one. */
typedef float xf32_16x16x8_in_t;
PARTILE_DEVICE float xf32_16x16x8_in(float x) { return partile_round_tf32(x); }
PARTILE_DEVICE void xf32_16x16x8_mma(float *d, const float *a, const float *b)
{
#if PARTILE_GFX940_XF32
    const mfma_v2f va = {a[0], a[1]}, vb = {b[0], b[1]};
    store_v4f(d, __builtin_amdgcn_mfma_f32_16x16x8_xf32(va, vb, load_v4f(d), 0, 0, 0));
#else
    (void)d; (void)a; (void)b;
    __builtin_trap();
#endif
}

/* 16-bit inputs: raw bits from the shared rounding, four to a lane, element
 * e in vector slot e. */
PARTILE_DEVICE mfma_v4s load_v4s(const uint16_t *x)
{
    return mfma_v4s{(short)x[0], (short)x[1], (short)x[2], (short)x[3]};
}

typedef uint16_t f16_16x16x16_in_t;
PARTILE_DEVICE uint16_t f16_16x16x16_in(float x) { return partile_float_to_fp16(x); }
PARTILE_DEVICE void f16_16x16x16_mma(float *d, const uint16_t *a, const uint16_t *b)
{
    const mfma_v4h va = __builtin_bit_cast(mfma_v4h, load_v4s(a));
    const mfma_v4h vb = __builtin_bit_cast(mfma_v4h, load_v4s(b));
    store_v4f(d, __builtin_amdgcn_mfma_f32_16x16x16f16(va, vb, load_v4f(d), 0, 0, 0));
}

typedef uint16_t bf16_16x16x16_in_t;
PARTILE_DEVICE uint16_t bf16_16x16x16_in(float x) { return partile_float_to_bf16(x); }
PARTILE_DEVICE void bf16_16x16x16_mma(float *d, const uint16_t *a, const uint16_t *b)
{
    store_v4f(d, __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(load_v4s(a), load_v4s(b),
                                                           load_v4f(d), 0, 0, 0));
}

#endif
