/* Fragment layouts of the HIP engine's MFMA shapes: which element of A, B
 * and C/D the e-th value held by lane `lane` (0..63, one wave64) is. Plain
 * integer functions, so CPU tests can check them against an emulation of
 * the documented CDNA layout (tests/test_mfma_layout.c).
 *
 * Every HIP shape is a single-block 16x16xK MFMA (CDNA2/CDNA3 ISA, "matrix
 * instruction calculator"). With i = lane % 16 and q = lane / 16 (0..3):
 *   A (16 x K): lane holds K/4 elements, element e at row i, column (K/4)·q + e;
 *   B (K x 16): lane holds K/4 elements, element e at row (K/4)·q + e, column i;
 *   C/D (16 x 16): lane holds 4, element e at row 4·q + e, column i.
 * Only K differs between the shapes, and B element e is A element e
 * transposed (S##_b_from_a, as backends/cuda/mma_layout.h). */
#ifndef PARTILE_HIP_MFMA_LAYOUT_H
#define PARTILE_HIP_MFMA_LAYOUT_H

#include "common/portable.h"

#define PARTILE_MFMA_LAYOUT(S, K)                                                \
    static inline PARTILE_HD void S##_a_pos(int lane, int e, int *row, int *col) \
    { *row = lane & 15; *col = ((K) / 4) * (lane >> 4) + e; }                    \
    static inline PARTILE_HD void S##_b_pos(int lane, int e, int *row, int *col) \
    { *row = ((K) / 4) * (lane >> 4) + e; *col = lane & 15; }                    \
    static inline PARTILE_HD void S##_c_pos(int lane, int e, int *row, int *col) \
    { *row = 4 * (lane >> 4) + e; *col = lane & 15; }

/* f64 16x16x4 (v_mfma_f64_16x16x4f64): A 1, B 1, C 4 doubles per lane. */
#define f64_16x16x4_A_N 1
#define f64_16x16x4_B_N 1
#define f64_16x16x4_C_N 4
#define f64_16x16x4_b_from_a(e) (e)
PARTILE_MFMA_LAYOUT(f64_16x16x4, 4)

/* f32 16x16x4 (v_mfma_f32_16x16x4f32): A 1, B 1, C 4 floats per lane. */
#define f32_16x16x4_A_N 1
#define f32_16x16x4_B_N 1
#define f32_16x16x4_C_N 4
#define f32_16x16x4_b_from_a(e) (e)
PARTILE_MFMA_LAYOUT(f32_16x16x4, 4)

/* xf32 16x16x8 (v_mfma_f32_16x16x8_xf32, gfx940+): A 2, B 2, C 4 per lane. */
#define xf32_16x16x8_A_N 2
#define xf32_16x16x8_B_N 2
#define xf32_16x16x8_C_N 4
#define xf32_16x16x8_b_from_a(e) (e)
PARTILE_MFMA_LAYOUT(xf32_16x16x8, 8)

/* f16 16x16x16 (v_mfma_f32_16x16x16f16): A 4, B 4, C 4 per lane. */
#define f16_16x16x16_A_N 4
#define f16_16x16x16_B_N 4
#define f16_16x16x16_C_N 4
#define f16_16x16x16_b_from_a(e) (e)
PARTILE_MFMA_LAYOUT(f16_16x16x16, 16)

/* bf16 16x16x16 (v_mfma_f32_16x16x16bf16_1k): A 4, B 4, C 4 per lane. */
#define bf16_16x16x16_A_N 4
#define bf16_16x16x16_B_N 4
#define bf16_16x16x16_C_N 4
#define bf16_16x16x16_b_from_a(e) (e)
PARTILE_MFMA_LAYOUT(bf16_16x16x16, 16)

#endif
