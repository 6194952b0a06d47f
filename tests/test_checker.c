/* The conformance checker must fail when it should: a planted one-ULP
 * difference, an unwritten element and a write into a guard zone are each
 * caught and reported with the index, %a and hex values and the ULP count. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "partile/partile.h"
#include "tools/conformance.h"

enum { B = 2, R = 5, C = 3, K = 7, N = B * R * C, G = PARTILE_CHECK_GUARD };

static void fill_f64(double *x, size_t n, double seed)
{
    for (size_t i = 0; i < n; i++)
        x[i] = sin(seed + 1.37 * (double)i) * ldexp(1.0, (int)(i % 9) - 4);
}

/* Reference output with poisoned guards, as partile_check_shape lays it out. */
static unsigned char *reference_output(const partile_tile_t *t, const void *a, const void *b,
                                       const void *c, size_t eacc)
{
    partile_context_t *ref = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ref), 0);
    unsigned char *out = malloc((N + 2 * G) * eacc);
    assert_non_null(out);
    memset(out, 0xff, (N + 2 * G) * eacc);
    assert_int_equal(partile_mma_batched(ref, t, B, R, C, K, a, b, c, out + G * eacc), 0);
    partile_context_destroy(ref);
    return out;
}

static void test_fp64_planted_errors(void **state)
{
    (void)state;
    partile_tile_t t = { 16, 8, 4, PARTILE_FP64, PARTILE_FP64 };
    double a[B * R * K], b[B * K * C], c[N];
    fill_f64(a, B * R * K, 0.1);
    fill_f64(b, B * K * C, 0.7);
    fill_f64(c, N, 2.3);
    unsigned char *want = reference_output(&t, a, b, c, 8);
    unsigned char *got = malloc((N + 2 * G) * 8);
    memcpy(got, want, (N + 2 * G) * 8);

    char log[4096] = { 0 };
    FILE *f = fmemopen(log, sizeof log - 1, "w");
    partile_check_result_t r = { 0 };
    partile_check_compare(&t, B, R, C, K, a, b, c, got, want, 8, f, &r);
    assert_true(partile_check_passed(&r));
    assert_int_equal(r.compared, N);

    /* one ULP off in element 17 = batch 1, row 0, column 2 */
    uint64_t bits;
    memcpy(&bits, got + (G + 17) * 8, 8);
    bits ^= 1;
    memcpy(got + (G + 17) * 8, &bits, 8);
    memset(got + (G + 4) * 8, 0xff, 8);   /* element 4 never written */
    memset(got + 3 * 8, 0, 8);            /* a write before the output */
    memset(&r, 0, sizeof r);
    partile_check_compare(&t, B, R, C, K, a, b, c, got, want, 8, f, &r);
    fclose(f);
    assert_false(partile_check_passed(&r));
    assert_int_equal(r.mismatches, 1);
    assert_int_equal(r.unwritten, 1);
    assert_int_equal(r.guard_hits, 1);
    assert_true(r.max_ulp == 1.0);
    assert_non_null(strstr(log, "[1](0,2)"));
    assert_non_null(strstr(log, "1 ulp"));
    assert_non_null(strstr(log, "0x1."));  /* %a */
    assert_non_null(strstr(log, "(0x"));   /* hex bits */
    assert_non_null(strstr(log, "[0](1,1) never written"));
    free(got);
    free(want);
}

static void test_fp32_tolerance(void **state)
{
    (void)state;
    partile_tile_t t = { 16, 8, 16, PARTILE_BF16, PARTILE_FP32 };
    float a[B * R * K], b[B * K * C], c[N];
    for (int i = 0; i < B * R * K; i++) a[i] = 1.0f + 0.01f * (float)i;
    for (int i = 0; i < B * K * C; i++) b[i] = 0.5f - 0.02f * (float)i;
    for (int i = 0; i < N; i++) c[i] = (float)i;
    unsigned char *want = reference_output(&t, a, b, c, 4);
    unsigned char *got = malloc((N + 2 * G) * 4);
    memcpy(got, want, (N + 2 * G) * 4);
    FILE *f = fopen("/dev/null", "w");
    /* a change of a few float ULPs is within tolerance... */
    float v;
    memcpy(&v, got + (G + 9) * 4, 4);
    float small = nextafterf(nextafterf(v, INFINITY), INFINITY);
    memcpy(got + (G + 9) * 4, &small, 4);
    partile_check_result_t r = { 0 };
    partile_check_compare(&t, B, R, C, K, a, b, c, got, want, 8, f, &r);
    assert_true(partile_check_passed(&r));
    /* ...a change of 1e-3 relative is not */
    float big = v * 1.001f + 1e-3f;
    memcpy(got + (G + 9) * 4, &big, 4);
    memset(&r, 0, sizeof r);
    partile_check_compare(&t, B, R, C, K, a, b, c, got, want, 8, f, &r);
    assert_false(partile_check_passed(&r));
    assert_int_equal(r.mismatches, 1);
    fclose(f);
    free(got);
    free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fp64_planted_errors),
        cmocka_unit_test(test_fp32_tolerance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
