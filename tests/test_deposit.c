/* Deposit and gather on the reference backend; overlap weights by hand. */
#include "tests/deposit_scenarios.h"
#include "common/shape.h"

static partile_context_t *ref(void)
{
    partile_context_t *ctx = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ctx), 0);
    return ctx;
}

static void test_all(void **state) { (void)state; partile_context_t *c = ref(); scenario_deposit_all(c, 11); partile_context_destroy(c); }
static void test_polynomials(void **state) { (void)state; partile_context_t *c = ref(); scenario_gather_polynomials(c, 12); partile_context_destroy(c); }
static void test_errors(void **state) { (void)state; partile_context_t *c = ref(); scenario_deposit_errors(c, 13); partile_context_destroy(c); }

/* A particle straddling two cells (1-D) and eight cells (3-D), by hand. */
static void test_overlap_by_hand(void **state)
{
    (void)state;
    partile_stencil_1d s;
    /* cell-centred, unit cells: particle of size 1 at q = 2.25 covers
     * [1.75, 2.75]: a quarter in cell 1, three quarters in cell 2 */
    partile_stencil_at(PARTILE_SHAPE_OVERLAP, PARTILE_CENTERING_CELL, 2.25, 1.0, &s);
    assert_int_equal(s.first, 1);
    assert_int_equal(s.count, 2);
    assert_true(s.w[0] == 0.25 && s.w[1] == 0.75);
    /* size 0.5 at q = 3.5 lies inside cell 3 */
    partile_stencil_at(PARTILE_SHAPE_OVERLAP, PARTILE_CENTERING_CELL, 3.5, 0.5, &s);
    assert_int_equal(s.first, 3);
    assert_int_equal(s.count, 1);
    assert_true(s.w[0] == 1.0);
    /* 3-D through the library: a cube of side 0.5 centred on the corner
     * shared by 8 cells gets 1/8 in each; off-centre by (+0.125, −0.125, 0)
     * the x split is 3/4 | 1/4 ... */
    partile_context_t *ctx = ref();
    partile_grid_t g = su_grid(3, 4, 4, 4, 0);
    for (int a = 0; a < 3; a++)
        g.lower[a] = 0, g.spacing[a] = 1;
    double x[3] = { 2.0 + 0.125, 2.0 - 0.125, 2.0 }, d = 0.5, v = 8.0;
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { &x[0], &x[1], &x[2] } };
    int64_t pts[3], total;
    partile_field_shape(&g, PARTILE_CENTERING_CELL, pts, &total);
    double *f = calloc((size_t)total, 8);
    partile_transfer_t t = { &g, PARTILE_SHAPE_OVERLAP, PARTILE_CENTERING_CELL, 1, &d };
    assert_int_equal(partile_deposit(ctx, &t, 1, &pos, &v, NULL, f, NULL), 0);
    /* x: [1.875, 2.375] → cell 1: 0.125/0.5 = 1/4, cell 2: 3/4;
     * y: [1.625, 2.125] → cell 1: 3/4, cell 2: 1/4; z: 1/2 and 1/2 */
    const double wx[2] = { 0.25, 0.75 }, wy[2] = { 0.75, 0.25 }, wz[2] = { 0.5, 0.5 };
    double sum = 0;
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 2; i++) {
                int64_t gi = (1 + i + 1) + pts[0] * ((1 + j + 1) + pts[1] * (1 + k + 1));
                assert_true(f[gi] == v * wx[i] * wy[j] * wz[k]);
                sum += f[gi];
            }
    assert_true(sum == v); /* nothing landed anywhere else */
    free(f);
    partile_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlap_by_hand),
        cmocka_unit_test(test_all),
        cmocka_unit_test(test_polynomials),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
