/* y = M x: matrix-free against assembled (to rounding), assembled against
 * the exported CSR/BSR matrix times x, and bad input. Reference backend. */
#include "tests/sort_scenarios.h"

static void sorted_particles(partile_context_t *ref, partile_grid_t *g, size_t n, uint64_t *rng,
                             double **x_out, int64_t **off_out)
{
    int64_t ncells;
    partile_grid_cell_count(g, &ncells);
    double *x = su_positions(g, n, rng), *xs = malloc(3 * n * 8);
    int64_t *perm = malloc(n * 8), *off = malloc((size_t)(ncells + 1) * 8);
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { x, x + n, x + 2 * n } };
    assert_int_equal(partile_sort(ref, g, n, &pos, off, perm, NULL, NULL), 0);
    for (int a = 0; a < 3; a++)
        for (size_t i = 0; i < n; i++)
            xs[a * n + i] = a < g->dim ? x[a * n + perm[i]] : 0.0;
    free(x), free(perm);
    *x_out = xs;
    *off_out = off;
}

static double rel_err(const double *a, const double *b, int64_t count)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < count; i++) {
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

static void test_matfree_against_assembled(void **state)
{
    (void)state;
    partile_context_t *ctx = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ctx), 0);
    uint64_t rng = 55;
    for (int dim = 1; dim <= 3; dim++)
        for (int periodic = 0; periodic < 2; periodic++)
            for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++)
                for (int kind = 0; kind < 2; kind++) {
                    partile_grid_t g = su_grid(dim, dim == 1 ? 13 : 6, 5, 5, periodic);
                    const size_t n = dim == 3 ? 3000 : 800;
                    double *x, *q = malloc(n * 8), *w = malloc(3 * n * 8);
                    int64_t *off;
                    sorted_particles(ctx, &g, n, &rng, &x, &off);
                    for (size_t i = 0; i < n; i++) {
                        q[i] = 0.5 + su_uniform(&rng);
                        for (int a = 0; a < 3; a++)
                            w[a * n + i] = 2 * su_uniform(&rng) - 1;
                    }
                    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { x, x + n, x + 2 * n } };
                    partile_vectors_t om = { PARTILE_DTYPE_FLOAT64, { w, w + n, w + 2 * n } };
                    partile_mass_params_t p = { &g, (partile_shape_t)shape, (partile_mass_kind_t)kind,
                                                0.8, 0, NULL, 0.0, PARTILE_MASS_BITWISE, PARTILE_MASS_TILES, PARTILE_MASS_FP64, PARTILE_ORDER_BY_POINT };
                    partile_mass_layout_t L;
                    assert_int_equal(partile_mass_layout(&g, p.shape, p.kind, &L), 0);
                    const int m = kind ? 3 : 1;
                    double *S = malloc(L.entries * 8), *xv = malloc((size_t)L.points * m * 8);
                    double *y1 = malloc((size_t)L.points * m * 8), *y2 = malloc((size_t)L.points * m * 8);
                    double *y3 = calloc((size_t)L.points * m, 8), *y4 = malloc((size_t)L.points * m * 8);
                    for (int64_t e = 0; e < L.points * m; e++)
                        xv[e] = 2 * su_uniform(&rng) - 1;
                    assert_int_equal(partile_mass_assemble(ctx, &p, n, &pos, off, q, &om, S, NULL), 0);
                    assert_int_equal(partile_mass_apply_assembled(ctx, &p, S, xv, y1), 0);
                    assert_int_equal(partile_mass_apply_matfree(ctx, &p, n, &pos, off, q, &om, xv, y2, NULL), 0);
                    double e12 = rel_err(y2, y1, L.points * m);
                    if (!(e12 < 1e-13))
                        fail_msg("matrix-free vs assembled: %.3g (dim %d per %d shape %d kind %d)", e12,
                                 dim, periodic, shape, kind);
                    /* the exported matrix times x */
                    int64_t nnz;
                    assert_int_equal(partile_mass_export_count(&g, p.shape, &nnz), 0);
                    int64_t *ip = malloc((size_t)(L.points + 1) * 8), *ix = malloc((size_t)nnz * 8);
                    double *dv = malloc((size_t)nnz * L.components * 8);
                    assert_int_equal(partile_mass_export(&g, p.shape, p.kind, S, ip, ix, dv), 0);
                    for (int64_t r = 0; r < L.points; r++)
                        for (int64_t k = ip[r]; k < ip[r + 1]; k++)
                            for (int i = 0; i < m; i++)
                                for (int j = 0; j < m; j++)
                                    y3[r * m + i] += dv[k * L.components + i * m + j] * xv[ix[k] * m + j];
                    assert_true(rel_err(y3, y1, L.points * m) < 1e-14);
                    /* deterministic */
                    assert_int_equal(partile_mass_apply_matfree(ctx, &p, n, &pos, off, q, &om, xv, y4, NULL), 0);
                    assert_memory_equal(y2, y4, (size_t)L.points * m * 8);
                    /* by cell: to rounding of the assembled product; for the
                     * scalar kind, bit for bit the spec's composition σ·(the
                     * deposit of V = q·X into zeros) in each order */
                    double *yc = malloc((size_t)L.points * m * 8);
                    p.order = PARTILE_ORDER_BY_CELL;
                    assert_int_equal(partile_mass_apply_matfree(ctx, &p, n, &pos, off, q, &om, xv, yc, NULL), 0);
                    p.order = PARTILE_ORDER_BY_POINT;
                    e12 = rel_err(yc, y1, L.points * m);
                    if (!(e12 < 1e-13))
                        fail_msg("matrix-free by cell vs assembled: %.3g (dim %d per %d shape %d kind %d)",
                                 e12, dim, periodic, shape, kind);
                    if (!kind) {
                        partile_transfer_t t = { &g, (partile_shape_t)shape, PARTILE_CENTERING_NODE, 1, NULL,
                                                 PARTILE_ORDER_BY_POINT };
                        double *V = malloc(n * 8), *F = malloc((size_t)L.points * 8);
                        assert_int_equal(partile_gather(ctx, &t, n, &pos, xv, V, NULL), 0);
                        for (size_t i = 0; i < n; i++)
                            V[i] = q[i] * V[i];
                        for (int order = 0; order < 2; order++) {
                            t.order = (partile_deposit_order_t)order;
                            memset(F, 0, (size_t)L.points * 8);
                            assert_int_equal(partile_deposit(ctx, &t, n, &pos, V, off, F, NULL), 0);
                            for (int64_t e = 0; e < L.points; e++)
                                F[e] = 0.8 * F[e];
                            assert_memory_equal(F, order ? yc : y2, (size_t)L.points * 8);
                        }
                        if (dim == 3) /* the two orders round differently */
                            assert_true(memcmp(yc, y2, (size_t)L.points * 8) != 0);
                        free(V), free(F);
                    }
                    free(yc);
                    free(x), free(q), free(w), free(off), free(S), free(xv), free(y1), free(y2), free(y3),
                        free(y4), free(ip), free(ix), free(dv);
                }
    partile_context_destroy(ctx);
}

static void test_bad_input(void **state)
{
    (void)state;
    partile_context_t *ctx = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ctx), 0);
    uint64_t rng = 7;
    partile_grid_t g = su_grid(2, 6, 6, 1, 1);
    const size_t n = 200;
    double *x, q[200], xv[36], y[36];
    int64_t *off;
    sorted_particles(ctx, &g, n, &rng, &x, &off);
    for (size_t i = 0; i < n; i++)
        q[i] = 1;
    for (int i = 0; i < 36; i++)
        xv[i] = 1, y[i] = -3;
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { x, x + n } };
    partile_mass_params_t p = { &g, PARTILE_SHAPE_CIC, PARTILE_MASS_SCALAR, 1.0, 0, NULL, 0.0, PARTILE_MASS_BITWISE, PARTILE_MASS_TILES, PARTILE_MASS_FP64, PARTILE_ORDER_BY_POINT };
    assert_int_equal(partile_mass_apply_matfree(ctx, &p, n, &pos, off, q, NULL, NULL, y, NULL),
                     PARTILE_ERROR_NULL_POINTER);
    double t = x[0];
    x[0] = x[n - 1]; /* unsorted */
    assert_int_equal(partile_mass_apply_matfree(ctx, &p, n, &pos, off, q, NULL, xv, y, NULL),
                     PARTILE_ERROR_NOT_SORTED);
    for (int i = 0; i < 36; i++)
        assert_true(y[i] == -3); /* untouched */
    p.order = PARTILE_ORDER_BY_CELL;
    assert_int_equal(partile_mass_apply_matfree(ctx, &p, n, &pos, off, q, NULL, xv, y, NULL),
                     PARTILE_ERROR_NOT_SORTED);
    x[0] = t;
    p.order = (partile_deposit_order_t)2;
    assert_int_equal(partile_mass_apply_matfree(ctx, &p, n, &pos, off, q, NULL, xv, y, NULL),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    /* FP32 has the point order only */
    float qf[200], xf[36], yf[36];
    for (int i = 0; i < 200; i++)
        qf[i] = 1.0f;
    for (int i = 0; i < 36; i++)
        xf[i] = 1.0f, yf[i] = -3.0f;
    p.order = PARTILE_ORDER_BY_CELL;
    assert_int_equal(partile_mass_apply_matfree_f32(ctx, &p, n, &pos, off, qf, NULL, xf, yf, NULL),
                     PARTILE_ERROR_UNSUPPORTED);
    p.order = (partile_deposit_order_t)2; /* not an order at all: as in FP64 */
    assert_int_equal(partile_mass_apply_matfree_f32(ctx, &p, n, &pos, off, qf, NULL, xf, yf, NULL),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    for (int i = 0; i < 36; i++)
        assert_true(y[i] == -3 && yf[i] == -3.0f); /* untouched */
    p.order = PARTILE_ORDER_BY_POINT;
    p.kind = PARTILE_MASS_TENSOR;
    assert_int_equal(partile_mass_apply_matfree(ctx, &p, n, &pos, off, q, NULL, xv, y, NULL),
                     PARTILE_ERROR_NULL_POINTER); /* no omega, no field */
    assert_int_equal(partile_mass_apply_assembled(ctx, &p, NULL, xv, y), PARTILE_ERROR_NULL_POINTER);
    free(x), free(off);
    partile_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_matfree_against_assembled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
