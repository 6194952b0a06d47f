/* The detail of an error that names a particle (common/bad_particle.c): its
 * position, and which coordinate, bound, cell or ω is wrong, through every
 * front end that reports one (bin/sort/resort, deposit/gather, the mass
 * matrix and its apply, the pair interactions), on the reference backend. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "partile/partile.h"

#define N 6

static partile_context_t *ctx;

static int setup(void **state)
{
    (void)state;
    return partile_context_create("reference", 0, &ctx);
}

static int teardown(void **state)
{
    (void)state;
    return partile_context_destroy(ctx);
}

/* 4 × 4 cells of 0.25 from (0, 0); periodic as asked. */
static partile_grid_t grid2(int periodic)
{
    partile_grid_t g = { 2, { 4, 4, 1 }, { 0.0, 0.0, 0.0 }, { 0.25, 0.25, 1.0 },
                         { periodic, periodic, 0 } };
    return g;
}

/* Six particles inside [0, 1)², x and y given, in two host arrays. */
static double px[N], py[N];
static partile_vectors_t positions(void)
{
    const double x0[N] = { 0.1, 0.3, 0.55, 0.8, 0.9, 0.05 };
    const double y0[N] = { 0.2, 0.4, 0.6, 0.7, 0.1, 0.95 };
    memcpy(px, x0, sizeof px);
    memcpy(py, y0, sizeof py);
    partile_vectors_t v = { PARTILE_DTYPE_FLOAT64, { px, py, NULL } };
    return v;
}

static void assert_detail_has(const char *needle)
{
    const char *detail = partile_last_error_detail();
    if (!strstr(detail, needle))
        fail_msg("detail \"%s\" lacks \"%s\"", detail, needle);
}

static void test_sort_names_the_coordinate(void **state)
{
    (void)state;
    partile_grid_t g = grid2(0);
    partile_vectors_t pos = positions();
    int64_t offsets[17], perm[N], cell[N], bad = -1;

    py[3] = NAN;
    assert_int_equal(partile_sort(ctx, &g, N, &pos, offsets, perm, NULL, &bad),
                     PARTILE_ERROR_NOT_FINITE);
    assert_int_equal(bad, 3);
    assert_detail_has("particle 3 at (0.80000000000000004, nan)");
    assert_detail_has("its y coordinate is NaN");

    pos = positions();
    px[2] = -INFINITY;
    assert_int_equal(partile_bin(ctx, &g, N, &pos, cell, &bad), PARTILE_ERROR_NOT_FINITE);
    assert_int_equal(bad, 2);
    assert_detail_has("its x coordinate is -infinity");

    pos = positions();
    px[4] = 1.5; /* the non-periodic x axis is [0, 1) */
    assert_int_equal(partile_bin(ctx, &g, N, &pos, cell, &bad), PARTILE_ERROR_OUT_OF_DOMAIN);
    assert_int_equal(bad, 4);
    assert_detail_has("x = 1.5 is outside [0, 1), the non-periodic x axis");

    pos = positions();
    py[5] = 1.0; /* the upper bound itself is outside */
    assert_int_equal(partile_bin(ctx, &g, N, &pos, cell, &bad), PARTILE_ERROR_OUT_OF_DOMAIN);
    assert_detail_has("particle 5 at (0.050000000000000003, 1): y = 1 is outside [0, 1)");

    partile_grid_t p = grid2(1);
    pos = positions();
    py[1] = -1e300; /* valid on a periodic axis up to 2^52 cells away */
    assert_int_equal(partile_sort(ctx, &p, N, &pos, offsets, perm, NULL, &bad),
                     PARTILE_ERROR_OUT_OF_DOMAIN);
    assert_int_equal(bad, 1);
    assert_detail_has("y = -1.0000000000000001e+300 is 2^52 or more cells (of 0.25) away from "
                      "the periodic y axis [0, 1)");

    /* FP32 positions: the value as stored, widened */
    float fx[N] = { 0.1f, 0.3f, 0.55f, 0.8f, 2.5f, 0.05f };
    float fy[N] = { 0.2f, 0.4f, 0.6f, 0.7f, 0.1f, 0.95f };
    partile_vectors_t f = { PARTILE_DTYPE_FLOAT32, { fx, fy, NULL } };
    assert_int_equal(partile_bin(ctx, &g, N, &f, cell, &bad), PARTILE_ERROR_OUT_OF_DOMAIN);
    assert_detail_has("particle 4 at (2.5, 0.10000000149011612): x = 2.5 is outside [0, 1)");
}

static void test_resort_keeps_its_own_cause(void **state)
{
    (void)state;
    partile_grid_t g = grid2(1);
    partile_vectors_t pos = positions();
    int64_t offsets[17], perm[N], cell[N], new_offsets[17], new_perm[N], bad = -1;
    assert_int_equal(partile_sort(ctx, &g, N, &pos, offsets, perm, cell, &bad), PARTILE_SUCCESS);
    cell[0] = cell[N - 1] + 1; /* old_cell no longer non-decreasing */
    assert_int_equal(partile_resort(ctx, &g, N, &pos, offsets, cell, new_offsets, new_perm, NULL,
                                    &bad),
                     PARTILE_ERROR_NOT_SORTED);
    assert_detail_has("is not where old_cell/old_offsets place it");
}

static void test_deposit_names_cell_and_size(void **state)
{
    (void)state;
    partile_grid_t g = grid2(1);
    partile_vectors_t pos = positions();
    int64_t offsets[17], perm[N], bad = -1;
    assert_int_equal(partile_sort(ctx, &g, N, &pos, offsets, perm, NULL, &bad), PARTILE_SUCCESS);
    double sx[N], sy[N], values[N], field[16], sizes[N];
    for (int i = 0; i < N; i++) {
        sx[i] = px[perm[i]];
        sy[i] = py[perm[i]];
        values[i] = 1.0;
        sizes[i] = 0.1;
    }
    memset(field, 0, sizeof field);
    partile_vectors_t sorted = { PARTILE_DTYPE_FLOAT64, { sx, sy, NULL } };
    partile_transfer_t t = { &g, PARTILE_SHAPE_CIC, PARTILE_CENTERING_NODE, 1, NULL,
                             PARTILE_ORDER_BY_POINT };
    /* particle 2 moved to cell 0's corner after the sort */
    const double keep = sx[2];
    sx[2] = 0.01;
    sy[2] = 0.01;
    assert_int_equal(partile_deposit(ctx, &t, N, &sorted, values, offsets, field, &bad),
                     PARTILE_ERROR_NOT_SORTED);
    assert_int_equal(bad, 2);
    assert_detail_has("particle 2 at (0.01, 0.01): it bins to cell 0; cell_offsets lists it in "
                      "another cell's range");
    sx[2] = keep;
    sy[2] = py[perm[2]];

    t.shape = PARTILE_SHAPE_OVERLAP;
    t.sizes = sizes;
    sizes[3] = 0.5; /* wider than a cell */
    assert_int_equal(partile_deposit(ctx, &t, N, &sorted, values, offsets, field, &bad),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(bad, 3);
    assert_detail_has("its OVERLAP size 0.5 must be > 0 and <= the spacing");
    assert_detail_has("(0.25 along x)"); /* the spacing it exceeds */

    t.shape = PARTILE_SHAPE_CIC;
    t.sizes = NULL;
    sy[1] = INFINITY;
    double back[N];
    assert_int_equal(partile_gather(ctx, &t, N, &sorted, field, back, &bad),
                     PARTILE_ERROR_NOT_FINITE);
    assert_int_equal(bad, 1);
    assert_detail_has("its y coordinate is +infinity");
}

/* ω given or from the B field: the detail says it is ω, not the position. */
static void test_mass_names_omega(void **state)
{
    (void)state;
    partile_grid_t g = { 3, { 4, 4, 4 }, { 0, 0, 0 }, { 0.25, 0.25, 0.25 }, { 1, 1, 1 } };
    double x[N] = { 0.1, 0.3, 0.55, 0.8, 0.9, 0.05 }, y[N] = { 0.2, 0.4, 0.6, 0.7, 0.1, 0.95 },
           z[N] = { 0.3, 0.3, 0.3, 0.3, 0.3, 0.3 };
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { x, y, z } };
    int64_t offsets[65], perm[N], bad = -1;
    assert_int_equal(partile_sort(ctx, &g, N, &pos, offsets, perm, NULL, &bad), PARTILE_SUCCESS);
    double sx[N], sy[N], sz[N], q[N], w0[N], w1[N], w2[N];
    for (int i = 0; i < N; i++) {
        sx[i] = x[perm[i]];
        sy[i] = y[perm[i]];
        sz[i] = z[perm[i]];
        q[i] = 1.0;
        w0[i] = w1[i] = w2[i] = 0.5;
    }
    w1[4] = NAN;
    partile_vectors_t sorted = { PARTILE_DTYPE_FLOAT64, { sx, sy, sz } };
    partile_vectors_t omega = { PARTILE_DTYPE_FLOAT64, { w0, w1, w2 } };
    partile_mass_params_t p;
    memset(&p, 0, sizeof p);
    p.grid = &g;
    p.shape = PARTILE_SHAPE_CIC;
    p.kind = PARTILE_MASS_TENSOR;
    p.sigma = 1.0;
    partile_mass_layout_t L;
    assert_int_equal(partile_mass_layout(&g, p.shape, p.kind, &L), PARTILE_SUCCESS);
    double *storage = test_calloc(L.entries, sizeof *storage);
    assert_int_equal(partile_mass_assemble(ctx, &p, N, &sorted, offsets, q, &omega, storage, &bad),
                     PARTILE_ERROR_NOT_FINITE);
    assert_int_equal(bad, 4);
    assert_detail_has("its omega (0.5, nan, 0.5) is not finite");

    /* the same through the matrix-free apply */
    double *xv = test_calloc((size_t)L.points * 3, sizeof *xv);
    double *yv = test_calloc((size_t)L.points * 3, sizeof *yv);
    assert_int_equal(
        partile_mass_apply_matfree(ctx, &p, N, &sorted, offsets, q, &omega, xv, yv, &bad),
        PARTILE_ERROR_NOT_FINITE);
    assert_detail_has("its omega (0.5, nan, 0.5) is not finite");

    /* the FP32 apply reads its FLOAT32 ω */
    float f0[N], f1[N], f2[N], fq[N];
    for (int i = 0; i < N; i++) {
        f0[i] = f1[i] = f2[i] = 0.5f;
        fq[i] = 1.0f;
    }
    f2[1] = -INFINITY;
    partile_vectors_t omega32 = { PARTILE_DTYPE_FLOAT32, { f0, f1, f2 } };
    float *xf = test_calloc((size_t)L.points * 3, sizeof *xf);
    float *yf = test_calloc((size_t)L.points * 3, sizeof *yf);
    assert_int_equal(
        partile_mass_apply_matfree_f32(ctx, &p, N, &sorted, offsets, fq, &omega32, xf, yf, &bad),
        PARTILE_ERROR_NOT_FINITE);
    assert_int_equal(bad, 1);
    assert_detail_has("its omega (0.5, 0.5, -inf) is not finite");
    test_free(xf);
    test_free(yf);

    /* ω = β/c · B(x) with a B field that is NaN at one node */
    double *B = test_calloc((size_t)L.points * 3, sizeof *B);
    B[3 * 21 + 2] = NAN; /* node (1, 1, 1), a corner of cells 0, 1, 4, 5, 16, … */
    p.bfield = B;
    p.beta_over_c = 1.0;
    assert_int_equal(partile_mass_assemble(ctx, &p, N, &sorted, offsets, q, NULL, storage, &bad),
                     PARTILE_ERROR_NOT_FINITE);
    assert_detail_has("its omega = beta_over_c * B(x)");

    /* a position that is not finite is named as such, not as ω */
    p.bfield = NULL;
    w1[4] = 0.5;
    sz[0] = NAN;
    assert_int_equal(partile_mass_assemble(ctx, &p, N, &sorted, offsets, q, &omega, storage, &bad),
                     PARTILE_ERROR_NOT_FINITE);
    assert_int_equal(bad, 0);
    assert_detail_has("its z coordinate is NaN");
    assert_null(strstr(partile_last_error_detail(), "omega"));
    test_free(B);
    test_free(xv);
    test_free(yv);
    test_free(storage);
}

static void test_pairs_names_the_coordinate(void **state)
{
    (void)state;
    partile_grid_t g = grid2(0); /* an open box [0, 1)², cells of 0.25 */
    partile_vectors_t pos = positions();
    int64_t offsets[17], perm[N], bad = -1;
    assert_int_equal(partile_sort(ctx, &g, N, &pos, offsets, perm, NULL, &bad), PARTILE_SUCCESS);
    double sx[N], sy[N], rho[N];
    for (int i = 0; i < N; i++) {
        sx[i] = px[perm[i]];
        sy[i] = py[perm[i]];
    }
    sx[5] = -0.5;
    partile_vectors_t sorted = { PARTILE_DTYPE_FLOAT64, { sx, sy, NULL } };
    partile_pair_params_t pp = { PARTILE_PAIRS_SPH_DENSITY, 0.25, 0, 0, 0, 0.1, 1.0, 0 };
    assert_int_equal(partile_pairs(ctx, &g, &pp, N, &sorted, offsets, NULL, rho, NULL, &bad),
                     PARTILE_ERROR_OUT_OF_DOMAIN);
    assert_int_equal(bad, 5);
    assert_detail_has("x = -0.5 is outside [0, 1), the non-periodic x axis");
}

static void test_status_strings_say_both_cases(void **state)
{
    (void)state;
    assert_non_null(strstr(partile_status_string(PARTILE_ERROR_OUT_OF_DOMAIN), "periodic"));
    assert_non_null(strstr(partile_status_string(PARTILE_ERROR_NOT_FINITE), "omega"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_names_the_coordinate),
        cmocka_unit_test(test_resort_keeps_its_own_cause),
        cmocka_unit_test(test_deposit_names_cell_and_size),
        cmocka_unit_test(test_mass_names_omega),
        cmocka_unit_test(test_pairs_names_the_coordinate),
        cmocka_unit_test(test_status_strings_say_both_cases),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
