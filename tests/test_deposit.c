/* Deposit and gather on the reference backend; overlap weights by hand. */
#include "tests/deposit_scenarios.h"
#include "common/apply_math.h"
#include "common/shape.h"

static partile_context_t *ref(void)
{
    partile_context_t *ctx = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ctx), 0);
    return ctx;
}

static void test_all(void **state) { (void)state; partile_context_t *c = ref(); scenario_deposit_all(c, 11); partile_context_destroy(c); }
static void test_polynomials(void **state) { (void)state; partile_context_t *c = ref(); scenario_gather_polynomials(c, 12); partile_context_destroy(c); }
static void test_sorted_errors(void **state) { (void)state; partile_context_t *c = ref(); scenario_deposit_sorted_errors(c, 14); partile_context_destroy(c); }
static void test_orders(void **state) { (void)state; partile_context_t *c = ref(); scenario_deposit_orders(c); partile_context_destroy(c); }
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
    partile_transfer_t t = { &g, PARTILE_SHAPE_OVERLAP, PARTILE_CENTERING_CELL, 1, &d, PARTILE_ORDER_BY_POINT };
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

/* The GPU gather's per-axis stencil (partile_grid_stencil_axis and
 * partile_node_stencil_point) and the sorted deposit's first-point offset
 * (partile_first_cell_offset) against partile_particle_stencil and
 * partile_point_index, bit for bit: CIC and TSC, node- and cell-centred,
 * periodic axes of 2 … 9 cells with positions up to a few boxes away or
 * just below 0, non-periodic axes, and coordinates on and next to cell
 * faces and half-cells. */
static void test_node_stencil_axis(void **state)
{
    (void)state;
    uint64_t rng = 21;
    for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++)
        for (int cent = PARTILE_CENTERING_NODE; cent <= PARTILE_CENTERING_CELL; cent++)
            for (int periodic = 0; periodic < 2; periodic++)
                for (int64_t cells = 2; cells <= 9; cells++) {
                    partile_grid_t g = su_grid(1, cells, 1, 1, periodic);
                    g.lower[0] = -0.75, g.spacing[0] = 0.3;
                    for (int i = 0; i < 20000; i++) {
                        double s = su_uniform(&rng) * (double)cells; /* in cells */
                        if (i % 4 == 1)
                            s = floor(s) + (i % 8 < 4 ? 0.0 : 0.5);
                        if (periodic && i % 3 == 0)
                            s += (double)((int64_t)(su_next(&rng) % 7) - 3) * (double)cells;
                        double x = g.lower[0] + s * g.spacing[0];
                        if (i % 4 == 2)
                            x = nextafter(x, i % 8 < 4 ? -INFINITY : INFINITY);
                        if (i % 4 == 3) /* next to a face or half-cell, either side */
                            x = nextafter(g.lower[0] + (floor(s) + (i % 8 < 4 ? 0.0 : 0.5)) *
                                                           g.spacing[0],
                                          i % 16 < 8 ? -INFINITY : INFINITY);
                        if (periodic && i % 50 == 7) { /* just below 0 (lower 0 here) */
                            g.lower[0] = 0.0;
                            x = -(double)(1 + su_next(&rng) % 1000) * 1e-20;
                        } else {
                            g.lower[0] = -0.75;
                        }
                        partile_stencil_1d st[3];
                        int64_t cell;
                        if (partile_particle_stencil(&g, shape, cent, &x, 0.0, st, &cell) != 0)
                            continue; /* outside a non-periodic axis: checked before any kernel */
                        /* the check pass's offset of the first point from the cell */
                        const double q = (x - g.lower[0]) / g.spacing[0];
                        int64_t first;
                        partile_stencil_frac(shape, cent == PARTILE_CENTERING_CELL ? q - 0.5 : q,
                                             &first);
                        const int o = partile_first_cell_offset(first, q);
                        assert_true(o == -1 || o == 0);
                        assert_int_equal(partile_point_index(st[0].first, cells, periodic),
                                         periodic ? (cell + o + cells) % cells : cell + o + 1);
                        int64_t base;
                        const double f = partile_grid_stencil_axis(&g, 0, shape, cent, x, &base);
                        for (int k = 0; k < st[0].count; k++) {
                            const int64_t want =
                                partile_point_index(st[0].first + k, cells, periodic);
                            const int64_t got =
                                partile_node_stencil_point(base, k, cells, periodic);
                            if (got != want)
                                fail_msg("shape %d centering %d periodic %d cells %lld x %.17g "
                                         "point %d: %lld vs %lld",
                                         shape, cent, periodic, (long long)cells, x, k,
                                         (long long)got, (long long)want);
                            const double w = partile_stencil_weight(shape, f, k);
                            assert_memory_equal(&w, &st[0].w[k], 8);
                        }
                    }
                }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlap_by_hand),
        cmocka_unit_test(test_node_stencil_axis),
        cmocka_unit_test(test_all),
        cmocka_unit_test(test_polynomials),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_orders),
        cmocka_unit_test(test_sorted_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
