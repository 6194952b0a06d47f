/* Binning, sorting, re-sorting and permuting on the reference backend, and
 * the sort-interval advisor and argument checks. */
#include "common/binning.h"
#include "tests/sort_scenarios.h"

static partile_context_t *ref(void)
{
    partile_context_t *ctx = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ctx), 0);
    return ctx;
}

static void test_random(void **state) { (void)state; partile_context_t *c = ref(); scenario_random(c, 1); partile_context_destroy(c); }
static void test_crowded(void **state) { (void)state; partile_context_t *c = ref(); scenario_crowded(c, 2); partile_context_destroy(c); }
static void test_zero(void **state) { (void)state; partile_context_t *c = ref(); scenario_zero_particles(c); partile_context_destroy(c); }
static void test_bad(void **state) { (void)state; partile_context_t *c = ref(); scenario_bad_positions(c, 3); partile_context_destroy(c); }
static void test_resort(void **state) { (void)state; partile_context_t *c = ref(); scenario_resort(c, 4); partile_context_destroy(c); }
static void test_permute(void **state) { (void)state; partile_context_t *c = ref(); scenario_permute(c, 5); partile_context_destroy(c); }

/* Cell index numbering, x fastest, and the half-open domain. */
static void test_bin_numbering(void **state)
{
    (void)state;
    partile_context_t *ctx = ref();
    partile_grid_t g = su_grid(3, 4, 3, 2, 0);
    double xs[3] = { 0, 0, 0 }, ys[3], zs[3];
    /* cell (3, 2, 1) = 3 + 4·(2 + 3·1) = 23; the lower corner is cell 0 */
    xs[0] = g.lower[0] + 3.5 * g.spacing[0], ys[0] = g.lower[1] + 2.5 * g.spacing[1],
    zs[0] = g.lower[2] + 1.5 * g.spacing[2];
    xs[1] = g.lower[0], ys[1] = g.lower[1], zs[1] = g.lower[2];
    xs[2] = g.lower[0] + 1e-9, ys[2] = g.lower[1] + 2 * g.spacing[1] + 1e-9, zs[2] = g.lower[2];
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { xs, ys, zs } };
    int64_t cell[3] = { -5, -5, -5 }, bad = -1;
    assert_int_equal(partile_bin(ctx, &g, 3, &pos, cell, &bad), 0);
    assert_int_equal(cell[0], 23);
    assert_int_equal(cell[1], 0);
    assert_int_equal(cell[2], 8);
    /* the upper face belongs to nobody on a non-periodic axis... */
    xs[1] = g.lower[0] + 4 * g.spacing[0];
    assert_int_equal(partile_bin(ctx, &g, 3, &pos, cell, &bad), PARTILE_ERROR_OUT_OF_DOMAIN);
    assert_int_equal(bad, 1);
    assert_int_equal(cell[1], 0); /* untouched */
    /* ...and is cell 0 of a periodic one */
    g.periodic[0] = 1;
    assert_int_equal(partile_bin(ctx, &g, 3, &pos, cell, &bad), 0);
    assert_int_equal(cell[1], 0);
    xs[1] = g.lower[0] - 1e-12; /* just below: the last cell */
    assert_int_equal(partile_bin(ctx, &g, 3, &pos, cell, &bad), 0);
    assert_int_equal(cell[1], 3);
    partile_context_destroy(ctx);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    partile_context_t *ctx = ref();
    partile_grid_t g = su_grid(2, 3, 3, 1, 0);
    double x[2] = { -1.4, -1.2 };
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { x, x + 1 } };
    int64_t off[10], perm[1], cell[1], n;
    assert_int_equal(partile_sort(NULL, &g, 1, &pos, off, perm, cell, NULL), PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_sort(ctx, NULL, 1, &pos, off, perm, cell, NULL), PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_sort(ctx, &g, 1, NULL, off, perm, cell, NULL), PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_sort(ctx, &g, 1, &pos, NULL, perm, cell, NULL), PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_sort(ctx, &g, 1, &pos, off, NULL, cell, NULL), PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_sort(ctx, &g, 1, &pos, off, perm, NULL, NULL), 0); /* cell optional */
    pos.axis[1] = NULL;
    assert_int_equal(partile_sort(ctx, &g, 1, &pos, off, perm, cell, NULL), PARTILE_ERROR_NULL_POINTER);
    pos.axis[1] = x + 1;
    pos.type = PARTILE_DTYPE_INT32;
    assert_int_equal(partile_sort(ctx, &g, 1, &pos, off, perm, cell, NULL), PARTILE_ERROR_INVALID_ARGUMENT);
    pos.type = PARTILE_DTYPE_FLOAT64;
    assert_int_equal(partile_sort(ctx, &g, SIZE_MAX / 2, &pos, off, perm, cell, NULL), PARTILE_ERROR_SIZE_OVERFLOW);
    partile_grid_t bad = g;
    bad.dim = 4;
    assert_int_equal(partile_grid_cell_count(&bad, &n), PARTILE_ERROR_INVALID_ARGUMENT);
    bad = g, bad.cells[1] = 0;
    assert_int_equal(partile_sort(ctx, &bad, 1, &pos, off, perm, cell, NULL), PARTILE_ERROR_INVALID_ARGUMENT);
    bad = g, bad.spacing[0] = -1;
    assert_int_equal(partile_sort(ctx, &bad, 1, &pos, off, perm, cell, NULL), PARTILE_ERROR_INVALID_ARGUMENT);
    bad = g, bad.spacing[0] = NAN;
    assert_int_equal(partile_sort(ctx, &bad, 1, &pos, off, perm, cell, NULL), PARTILE_ERROR_INVALID_ARGUMENT);
    bad = g, bad.periodic[0] = 2;
    assert_int_equal(partile_sort(ctx, &bad, 1, &pos, off, perm, cell, NULL), PARTILE_ERROR_INVALID_ARGUMENT);
    bad = su_grid(3, INT64_C(1) << 20, INT64_C(1) << 20, INT64_C(1) << 20, 0);
    assert_int_equal(partile_grid_cell_count(&bad, &n), PARTILE_ERROR_SIZE_OVERFLOW);
    assert_int_equal(partile_resort(ctx, &g, 1, &pos, off, cell, off, perm, cell, NULL),
                     PARTILE_ERROR_INVALID_ARGUMENT); /* outputs overlap inputs */
    partile_array_t arr = { x, (partile_dtype_t)9 };
    assert_int_equal(partile_permute(ctx, 1, perm, 1, &arr, NULL, 0), PARTILE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(partile_permute(ctx, 1, perm, -1, &arr, NULL, 0), PARTILE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(partile_permute(ctx, 1, NULL, 1, &arr, NULL, 0), PARTILE_ERROR_NULL_POINTER);
    partile_context_destroy(ctx);
}

static void test_sort_interval(void **state)
{
    (void)state;
    partile_context_t *ctx = ref();
    partile_grid_t g = su_grid(2, 10, 10, 1, 1);
    g.spacing[0] = 0.5, g.spacing[1] = 2.0;
    enum { N = 200 };
    double vx[N], vy[N];
    for (int i = 0; i < N; i++) {
        vx[i] = (i % 2 ? -1 : 1) * (double)(i + 1); /* |vx| = 1..200 */
        vy[i] = 0.01 * (i + 1);                       /* |vy| = 0.01..2 */
    }
    partile_vectors_t v = { PARTILE_DTYPE_FLOAT64, { vx, vy } };
    partile_sort_advice_t adv;
    /* nearest rank ceil(0.95·200) = 190: u_x = 190, u_y = 1.9;
     * min(0.5/190, 2/1.9) = 0.5/190; N = floor(0.5 · 0.5/190 / 1e-5) = 131 */
    assert_int_equal(partile_sort_interval(ctx, &g, N, &v, 0.5, 1e-5, &adv), 0);
    assert_true(adv.u_char[0] == 190.0);
    assert_true(fabs(adv.u_char[1] - 1.9) < 1e-15);
    assert_int_equal(adv.n_sort, (int64_t)floor(0.5 * (0.5 / 190.0) / 1e-5));
    assert_int_equal(adv.n_sort, 131);
    /* at least 1 step; all-zero velocities impose no limit */
    assert_int_equal(partile_sort_interval(ctx, &g, N, &v, 0.25, 1.0, &adv), 0);
    assert_int_equal(adv.n_sort, 1);
    double z[N] = { 0 };
    partile_vectors_t still = { PARTILE_DTYPE_FLOAT64, { z, z } };
    assert_int_equal(partile_sort_interval(ctx, &g, N, &still, 0.3, 1.0, &adv), 0);
    assert_true(adv.n_sort == INT64_MAX);
    /* bad input */
    assert_int_equal(partile_sort_interval(ctx, &g, N, &v, 0.2, 1.0, &adv), PARTILE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(partile_sort_interval(ctx, &g, N, &v, 0.6, 1.0, &adv), PARTILE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(partile_sort_interval(ctx, &g, N, &v, 0.3, 0.0, &adv), PARTILE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(partile_sort_interval(ctx, &g, 0, &v, 0.3, 1.0, &adv), PARTILE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(partile_sort_interval(ctx, &g, N, &v, 0.3, 1.0, NULL), PARTILE_ERROR_NULL_POINTER);
    vx[7] = NAN;
    assert_int_equal(partile_sort_interval(ctx, &g, N, &v, 0.3, 1.0, &adv), PARTILE_ERROR_NOT_FINITE);
    partile_context_destroy(ctx);
}

/* partile_position_status (the GPU check pass's test without a cell) gives
 * partile_cell_of's status for every position: edges and cell boundaries
 * give or take a few units of the last place, far and tiny values,
 * non-finite ones, random grids. */
static void test_position_status(void **state)
{
    (void)state;
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    long inside = 0, checked = 0;
    for (int trial = 0; trial < 4000; trial++) {
        partile_grid_t g;
        memset(&g, 0, sizeof g);
        g.dim = 1 + (int)(su_next(&rng) % 3);
        for (int a = 0; a < 3; a++) {
            g.cells[a] = 1 + (int64_t)(su_next(&rng) % (trial % 5 == 0 ? 100000 : 40));
            g.periodic[a] = (int)(su_next(&rng) % 2);
            g.lower[a] = (su_uniform(&rng) - 0.5) * (trial % 3 == 0 ? 1e6 : 10.0);
            g.spacing[a] = (trial % 7 == 0 ? 1e-9 : 0.01) + su_uniform(&rng) * 3.0;
        }
        double inv[3];
        for (int a = 0; a < 3; a++)
            inv[a] = 1.0 / g.spacing[a];
        for (int k = 0; k < 64; k++) {
            double x[3];
            for (int a = 0; a < 3; a++) {
                const double c = (double)g.cells[a];
                /* a cell boundary, an edge, or anywhere, nudged by ulps */
                double s;
                switch (su_next(&rng) % 8) {
                case 0: s = 0.0; break;
                case 1: s = c; break;
                case 2: s = (double)(su_next(&rng) % (uint64_t)(g.cells[a] + 1)); break;
                case 3: s = su_uniform(&rng) * 0x1p-18; break;
                case 4: s = c * (1.0 - su_uniform(&rng) * 0x1p-18); break;
                case 5: s = (su_uniform(&rng) - 0.5) * 0x1p55; break; /* past 2^52 too */
                case 6: s = (su_uniform(&rng) - 0.5) * 4.0 * c; break;
                default: s = su_uniform(&rng) * c; break;
                }
                x[a] = g.lower[a] + s * g.spacing[a];
                const int ulps = (int)(su_next(&rng) % 9) - 4;
                for (int u = 0; u < (ulps < 0 ? -ulps : ulps); u++)
                    x[a] = nextafter(x[a], ulps < 0 ? -INFINITY : INFINITY);
                const int odd = (int)(su_next(&rng) % 64);
                if (odd == 0)
                    x[a] = NAN;
                else if (odd == 1)
                    x[a] = INFINITY;
                else if (odd == 2)
                    x[a] = -INFINITY;
                else if (odd == 3)
                    x[a] = 1e308;
            }
            int64_t cell = 0;
            const int want = partile_cell_of(&g, x, &cell), got = partile_position_status(&g, x, inv);
            if (want != got)
                fail_msg("position status %d, cell_of %d: dim %d x (%.17g %.17g %.17g)", got, want,
                         g.dim, x[0], x[1], x[2]);
            inside += want == 0;
            checked++;
        }
    }
    assert_true(checked == 4000 * 64);
    /* both outcomes, often */
    assert_true(inside > checked / 10 && inside < checked - checked / 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bin_numbering), cmocka_unit_test(test_random),
        cmocka_unit_test(test_crowded),       cmocka_unit_test(test_zero),
        cmocka_unit_test(test_bad),           cmocka_unit_test(test_resort),
        cmocka_unit_test(test_permute),       cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_sort_interval), cmocka_unit_test(test_position_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
