/* y = M x on the reference backend, the parts tests/test_apply.c does not
 * cover: the FP32 matrix-free apply against FP64 (1e-5), the B-field path,
 * matrix-free against assembled at 1e-14, bad input (status, particle, y
 * untouched), and the fraction form of the CIC/TSC weights used by the
 * fused GPU apply (common/apply_math.h) against partile_stencil_at, bit for
 * bit. */
#include "tests/apply_scenarios.h"
#include "common/apply_math.h"
#include "common/shape.h"

static void test_all(void **state)
{
    (void)state;
    scenario_apply_all(NULL, 20261130);
}

static void test_errors(void **state)
{
    (void)state;
    partile_context_t *ref = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ref), 0);
    scenario_apply_errors(ref, 99);
    partile_context_destroy(ref);
}

/* the FP32 apply's own refusals: an unknown order, the by-cell order, ω of FP64 */
static void test_f32_bad_arguments(void **state)
{
    (void)state;
    partile_context_t *ref = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ref), 0);
    uint64_t rng = 3;
    apply_case c = make_case(ref, 1, 9, 1, PARTILE_SHAPE_CIC, 1, 50, 0, &rng);
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { c.x } };
    partile_vectors_t om = { PARTILE_DTYPE_FLOAT64, { c.w, c.w + c.n, c.w + 2 * c.n } };
    partile_mass_params_t p;
    memset(&p, 0, sizeof p);
    p.grid = &c.g;
    p.shape = PARTILE_SHAPE_CIC;
    p.kind = PARTILE_MASS_TENSOR;
    p.sigma = 1;
    float y[27];
    /* an order that does not exist; the by-cell order, which FP64 has only */
    p.order = (partile_deposit_order_t)7;
    assert_int_equal(partile_mass_apply_matfree_f32(ref, &p, c.n, &pos, c.off, c.qf, NULL, c.xvf,
                                                    y, NULL),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    p.order = PARTILE_ORDER_BY_CELL;
    assert_int_equal(partile_mass_apply_matfree_f32(ref, &p, c.n, &pos, c.off, c.qf, NULL, c.xvf,
                                                    y, NULL),
                     PARTILE_ERROR_UNSUPPORTED);
    p.order = PARTILE_ORDER_BY_POINT;
    assert_int_equal(partile_mass_apply_matfree_f32(ref, &p, c.n, &pos, c.off, c.qf, &om, c.xvf, y,
                                                    NULL),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(partile_mass_apply_matfree_f32(ref, &p, c.n, &pos, c.off, c.qf, NULL, c.xvf, y,
                                                    NULL),
                     PARTILE_ERROR_NULL_POINTER); /* no ω, no B field */
    assert_int_equal(partile_mass_apply_matfree_f32(ref, &p, c.n, &pos, c.off, c.qf, NULL, NULL, y,
                                                    NULL),
                     PARTILE_ERROR_NULL_POINTER);
    free_case(&c);
    partile_context_destroy(ref);
}

static void test_fraction_weights(void **state)
{
    (void)state;
    uint64_t rng = 11;
    for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++)
        for (int i = 0; i < 200000; i++) {
            /* random s, and values at and next to (half-)integers */
            double s = (su_uniform(&rng) - 0.5) * 64.0;
            if (i % 4 == 1)
                s = floor(s);
            else if (i % 4 == 2)
                s = floor(s) + 0.5;
            else if (i % 4 == 3)
                s = nextafter(floor(s) + (i % 8 < 4 ? 0.5 : 0.0), i % 2 ? -INFINITY : INFINITY);
            partile_stencil_1d st;
            partile_stencil_at(shape, PARTILE_CENTERING_NODE, s, 0.0, &st);
            int64_t first;
            const double f = partile_stencil_frac(shape, s, &first);
            assert_int_equal(first, st.first);
            assert_int_equal(first, (int64_t)floor(s) + partile_stencil_first_offset(shape, f));
            for (int k = 0; k < st.count; k++) {
                const double w = partile_stencil_weight(shape, f, k);
                if (memcmp(&w, &st.w[k], 8) != 0)
                    fail_msg("shape %d s %.17g weight %d: %.17g vs %.17g", shape, s, k, w, st.w[k]);
            }
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fraction_weights),
        cmocka_unit_test(test_f32_bad_arguments),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
