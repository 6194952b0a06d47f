/* The reference tile engine and the shared format rounding: the
 * specification itself, checked against values worked out by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "partile/partile.h"
#include "common/fp_formats.h"

static void test_fp16_rounding(void **state)
{
    (void)state;
    assert_int_equal(partile_float_to_fp16(1.0f), 0x3c00);
    assert_int_equal(partile_float_to_fp16(-2.0f), 0xc000);
    assert_int_equal(partile_float_to_fp16(65504.0f), 0x7bff);
    assert_int_equal(partile_float_to_fp16(65519.0f), 0x7bff); /* below the halfway point */
    assert_int_equal(partile_float_to_fp16(65520.0f), 0x7c00); /* tie to even: infinity */
    assert_int_equal(partile_float_to_fp16(INFINITY), 0x7c00);
    assert_true((partile_float_to_fp16(NAN) & 0x7c00) == 0x7c00 &&
                (partile_float_to_fp16(NAN) & 0x3ff) != 0);
    assert_int_equal(partile_float_to_fp16(0x1p-24f), 0x0001);  /* smallest subnormal */
    assert_int_equal(partile_float_to_fp16(0x1p-25f), 0x0000);  /* tie to even: zero */
    assert_int_equal(partile_float_to_fp16(0x1.8p-24f), 0x0002); /* tie to even: 2 */
    assert_int_equal(partile_float_to_fp16(0x1p-14f), 0x0400);  /* smallest normal */
    /* 1 + 2^-11 is a tie between 1 and 1 + 2^-10: even is 1 */
    assert_int_equal(partile_float_to_fp16(1.0f + 0x1p-11f), 0x3c00);
    assert_int_equal(partile_float_to_fp16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
    assert_int_equal(partile_float_to_fp16(1.0f + 0x3p-11f), 0x3c02); /* tie up to even */
    /* round trip of every finite half is exact */
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00)
            continue;
        assert_int_equal(partile_float_to_fp16(partile_fp16_to_float((uint16_t)h)), h);
    }
}

static void test_bf16_tf32_rounding(void **state)
{
    (void)state;
    assert_int_equal(partile_float_to_bf16(1.0f), 0x3f80);
    assert_int_equal(partile_float_to_bf16(1.0f + 0x1p-8f), 0x3f80); /* tie to even */
    assert_int_equal(partile_float_to_bf16(1.0f + 0x3p-8f), 0x3f82); /* tie to even, up */
    assert_true(partile_bf16_to_float(partile_float_to_bf16(3.0f)) == 3.0f);
    assert_true(isnan(partile_bf16_to_float(partile_float_to_bf16(NAN))));
    /* TF32 keeps 10 mantissa bits and rounds ties away from zero */
    assert_true(partile_round_tf32(1.0f + 0x1p-11f) == 1.0f + 0x1p-10f);
    assert_true(partile_round_tf32(-(1.0f + 0x1p-11f)) == -(1.0f + 0x1p-10f));
    assert_true(partile_round_tf32(1.0f + 0x1p-12f) == 1.0f);
    assert_true(partile_round_tf32(1.0f + 0x3p-12f) == 1.0f + 0x1p-10f);
    assert_true(isinf(partile_round_tf32(INFINITY)));
    assert_true(isinf(partile_round_tf32(0x1.fffffep127f)));
}

/* D = A·B + C, with the chain's order visible: a big term cancelled later
 * leaves a different result than the reverse order would. */
static void test_reference_order(void **state)
{
    (void)state;
    partile_context_t *ctx = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ctx), 0);
    partile_tile_t t = { 1, 1, 4, PARTILE_FP64, PARTILE_FP64 };
    double a[3] = { 0x1p60, -0x1p60, 1.0 }, b[3] = { 1.0, 1.0, 1.0 }, c = 1.0, d = NAN;
    /* forward: ((1 + 2^60) - 2^60) + 1 = 1 in FP64 (the first 1 is absorbed) */
    assert_int_equal(partile_mma_batched(ctx, &t, 1, 1, 1, 3, a, b, &c, &d), 0);
    assert_true(d == 1.0);
    /* the backward chain ((1 + 1) - 2^60) + 2^60 gives 0: we are not that */
    double rev = fma(a[0], b[0], fma(a[1], b[1], fma(a[2], b[2], c)));
    assert_true(rev == 0.0);
    /* fma is fused: a·b + c with one rounding */
    double x = 1.0 + 0x1p-30, y = 1.0 - 0x1p-30, mone = -1.0;
    t = (partile_tile_t){ 1, 1, 1, PARTILE_FP64, PARTILE_FP64 };
    assert_int_equal(partile_mma_batched(ctx, &t, 1, 1, 1, 1, &x, &y, &mone, &d), 0);
    assert_true(d == -0x1p-60);
    /* zero padding of the last step turns an accumulator of -0 into +0:
     * fma(-0, 0, -0) = -0, then the padded fma(0, 0, -0) = +0 */
    double mzero = -0.0, zero = 0.0;
    t = (partile_tile_t){ 1, 1, 1, PARTILE_FP64, PARTILE_FP64 };
    assert_int_equal(partile_mma_batched(ctx, &t, 1, 1, 1, 1, &mzero, &zero, &mzero, &d), 0);
    assert_true(d == 0.0 && signbit(d));
    t.k = 4;
    assert_int_equal(partile_mma_batched(ctx, &t, 1, 1, 1, 1, &mzero, &zero, &mzero, &d), 0);
    assert_true(d == 0.0 && !signbit(d));
    /* depth 0: no step at all, D = C exactly */
    assert_int_equal(partile_mma_batched(ctx, &t, 1, 1, 1, 0, NULL, NULL, &mzero, &d), 0);
    assert_true(d == 0.0 && signbit(d));
    partile_context_destroy(ctx);
}

/* A small batched product against integer arithmetic (exact in FP64). */
static void test_reference_batched_exact(void **state)
{
    (void)state;
    partile_context_t *ctx = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ctx), 0);
    enum { B = 3, R = 5, C = 7, K = 9 };
    double a[B * R * K], b[B * K * C], c[B * R * C], d[B * R * C];
    for (int i = 0; i < B * R * K; i++) a[i] = (i * 7) % 11 - 5;
    for (int i = 0; i < B * K * C; i++) b[i] = (i * 5) % 13 - 6;
    for (int i = 0; i < B * R * C; i++) c[i] = i % 3;
    partile_tile_t t = { 16, 8, 4, PARTILE_FP64, PARTILE_FP64 };
    assert_int_equal(partile_mma_batched(ctx, &t, B, R, C, K, a, b, c, d), 0);
    for (int q = 0; q < B; q++)
        for (int i = 0; i < R; i++)
            for (int j = 0; j < C; j++) {
                long s = (long)c[q * R * C + i * C + j];
                for (int k = 0; k < K; k++)
                    s += (long)a[q * R * K + i * K + k] * (long)b[q * K * C + k * C + j];
                assert_true(d[q * R * C + i * C + j] == (double)s);
            }
    /* in place: C == D */
    memcpy(d, c, sizeof c);
    double d2[B * R * C];
    assert_int_equal(partile_mma_batched(ctx, &t, B, R, C, K, a, b, c, d2), 0);
    assert_int_equal(partile_mma_batched(ctx, &t, B, R, C, K, a, b, d, d), 0);
    assert_memory_equal(d, d2, sizeof d2);
    /* FP16 tile: inputs rounded to FP16 first (1/3 is not exact) */
    float fa = 1.0f / 3.0f, fb = 3.0f, fc = 0.0f, fd = 0.0f;
    t = (partile_tile_t){ 16, 8, 16, PARTILE_FP16, PARTILE_FP32 };
    assert_int_equal(partile_mma_batched(ctx, &t, 1, 1, 1, 1, &fa, &fb, &fc, &fd), 0);
    assert_true(fd == partile_fp16_to_float(partile_float_to_fp16(1.0f / 3.0f)) * 3.0f);
    assert_true(fd != 1.0f);
    partile_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fp16_rounding),
        cmocka_unit_test(test_bf16_tf32_rounding),
        cmocka_unit_test(test_reference_order),
        cmocka_unit_test(test_reference_batched_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
