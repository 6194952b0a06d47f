/* Mass-matrix application scenarios (include/partile/apply.h): one random
 * case — sorted particles, charges, ω per particle and a B field, x — run
 * on the reference and, where given, on a GPU backend (staged through its
 * memory), compared bit for bit (FP64 matrix-free with ω and with the B
 * field, assembled, FP32 matrix-free), matrix-free against assembled to
 * 1e-14, FP32 against FP64 to 1e-5. Included by test_apply_f32.c
 * (reference only) and test_apply_gpu.c. */
#ifndef PARTILE_TESTS_APPLY_SCENARIOS_H
#define PARTILE_TESTS_APPLY_SCENARIOS_H

#include "tests/sort_scenarios.h"

typedef struct apply_case {
    partile_grid_t g;
    size_t n;
    int shape, kind, f32pos;
    double *x, *q, *w, *B, *xv; /* sorted positions SoA (3 n), q, ω SoA, B (points × 3), x */
    float *xf, *qf, *wf, *xvf;  /* FP32 copies */
    int64_t *off;
    int64_t points, ncells;
    int m;
} apply_case;

static double ap_rel_err(const double *a, const double *b, int64_t count)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < count; i++) {
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

static apply_case make_case(partile_context_t *ref, int dim, int64_t side, int periodic, int shape,
                            int kind, size_t n, int f32pos, uint64_t *rng)
{
    apply_case c;
    memset(&c, 0, sizeof c);
    c.g = su_grid(dim, side, side + 1, side, periodic);
    c.n = n;
    c.shape = shape;
    c.kind = kind;
    c.f32pos = f32pos;
    c.m = kind ? 3 : 1;
    partile_grid_cell_count(&c.g, &c.ncells);
    partile_mass_layout_t L;
    assert_int_equal(partile_mass_layout(&c.g, (partile_shape_t)shape, (partile_mass_kind_t)kind, &L),
                     0);
    c.points = L.points;
    double *x = su_positions(&c.g, n, rng);
    if (periodic) /* periodic: some positions boxes away (they wrap) */
        for (size_t i = 0; i < n; i += 7)
            x[i] += (double)c.g.cells[0] * c.g.spacing[0] * (i % 2 ? 2.0 : -1.0);
    if (f32pos) /* positions representable in FP32, so both sorts agree */
        for (size_t i = 0; i < 3 * n; i++)
            x[i] = (double)(float)x[i];
    int64_t *perm = malloc(n * 8);
    c.off = malloc((size_t)(c.ncells + 1) * 8);
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { x, x + n, x + 2 * n } };
    assert_int_equal(partile_sort(ref, &c.g, n, &pos, c.off, perm, NULL, NULL), 0);
    c.x = malloc(3 * n * 8);
    c.xf = malloc(3 * n * 4);
    for (int a = 0; a < 3; a++)
        for (size_t i = 0; i < n; i++) {
            c.x[a * n + i] = a < dim ? x[a * n + perm[i]] : 0.0;
            c.xf[a * n + i] = (float)c.x[a * n + i];
        }
    free(x), free(perm);
    c.q = malloc(n * 8), c.qf = malloc(n * 4);
    c.w = malloc(3 * n * 8), c.wf = malloc(3 * n * 4);
    for (size_t i = 0; i < n; i++) {
        c.q[i] = 0.5 + su_uniform(rng);
        c.qf[i] = (float)c.q[i];
    }
    for (size_t i = 0; i < 3 * n; i++) {
        c.w[i] = 3 * su_uniform(rng) - 1.5;
        c.wf[i] = (float)c.w[i];
    }
    c.B = malloc((size_t)c.points * 3 * 8);
    for (int64_t i = 0; i < c.points * 3; i++)
        c.B[i] = 4 * su_uniform(rng) - 2;
    c.xv = malloc((size_t)c.points * c.m * 8);
    c.xvf = malloc((size_t)c.points * c.m * 4);
    for (int64_t i = 0; i < c.points * c.m; i++) {
        c.xv[i] = 2 * su_uniform(rng) - 1;
        c.xvf[i] = (float)c.xv[i];
    }
    return c;
}

static void free_case(apply_case *c)
{
    free(c->x), free(c->q), free(c->w), free(c->B), free(c->xv);
    free(c->xf), free(c->qf), free(c->wf), free(c->xvf), free(c->off);
}

/* The outputs of one backend for a case. */
typedef struct apply_out {
    double *y_omega, *y_bfield, *y_asm;
    double *y_cell_omega, *y_cell_bfield; /* FP64 matrix-free by cell */
    float *y32_omega, *y32_bfield;
} apply_out;

static void free_out(apply_out *o)
{
    free(o->y_omega), free(o->y_bfield), free(o->y_asm), free(o->y32_omega), free(o->y32_bfield);
    free(o->y_cell_omega), free(o->y_cell_bfield);
}

/* Runs every path of case c on ctx (host pointers staged when ctx is not
 * the reference); storage: the assembled matrix (host) for the ω case. */
static apply_out run_case(partile_context_t *ctx, const apply_case *c, const double *storage)
{
    const size_t n = c->n, yb = (size_t)c->points * c->m * 8;
    partile_mass_layout_t L;
    partile_mass_layout(&c->g, (partile_shape_t)c->shape, (partile_mass_kind_t)c->kind, &L);
    void *x = stage(ctx, c->f32pos ? (const void *)c->xf : (const void *)c->x,
                    3 * n * (c->f32pos ? 4 : 8));
    const size_t es = c->f32pos ? 4 : 8;
    partile_vectors_t pos = { c->f32pos ? PARTILE_DTYPE_FLOAT32 : PARTILE_DTYPE_FLOAT64,
                              { x, (char *)x + n * es, (char *)x + 2 * n * es } };
    int64_t *off = stage(ctx, c->off, (size_t)(c->ncells + 1) * 8);
    double *q = stage(ctx, c->q, n * 8), *w = stage(ctx, c->w, 3 * n * 8);
    double *B = stage(ctx, c->B, (size_t)c->points * 24), *xv = stage(ctx, c->xv, yb);
    double *S = stage(ctx, storage, L.entries * 8), *y = stage(ctx, NULL, yb);
    float *qf = stage(ctx, c->qf, n * 4), *wf = stage(ctx, c->wf, 3 * n * 4);
    float *xvf = stage(ctx, c->xvf, yb / 2), *yf = stage(ctx, NULL, yb / 2);
    partile_vectors_t om = { PARTILE_DTYPE_FLOAT64, { w, w + n, w + 2 * n } };
    partile_vectors_t omf = { PARTILE_DTYPE_FLOAT32, { wf, wf + n, wf + 2 * n } };
    partile_mass_params_t p;
    memset(&p, 0, sizeof p);
    p.grid = &c->g;
    p.shape = (partile_shape_t)c->shape;
    p.kind = (partile_mass_kind_t)c->kind;
    p.sigma = 0.8;
    apply_out o;
    memset(&o, 0, sizeof o);
    o.y_omega = malloc(yb), o.y_bfield = malloc(yb), o.y_asm = malloc(yb);
    o.y32_omega = malloc(yb / 2), o.y32_bfield = malloc(yb / 2);
    o.y_cell_omega = malloc(yb), o.y_cell_bfield = malloc(yb);
    assert_int_equal(partile_mass_apply_matfree(ctx, &p, n, &pos, off, q, &om, xv, y, NULL), 0);
    fetch(ctx, o.y_omega, y, yb);
    p.order = PARTILE_ORDER_BY_CELL;
    assert_int_equal(partile_mass_apply_matfree(ctx, &p, n, &pos, off, q, &om, xv, y, NULL), 0);
    fetch(ctx, o.y_cell_omega, y, yb);
    p.order = PARTILE_ORDER_BY_POINT;
    assert_int_equal(partile_mass_apply_matfree_f32(ctx, &p, n, &pos, off, qf, &omf, xvf, yf, NULL),
                     0);
    fetch(ctx, o.y32_omega, yf, yb / 2);
    assert_int_equal(partile_mass_apply_assembled(ctx, &p, S, xv, y), 0);
    fetch(ctx, o.y_asm, y, yb);
    if (c->kind) { /* ω = (β/c) B(x_p) */
        p.bfield = B;
        p.beta_over_c = 0.7;
        assert_int_equal(partile_mass_apply_matfree(ctx, &p, n, &pos, off, q, NULL, xv, y, NULL), 0);
        fetch(ctx, o.y_bfield, y, yb);
        p.order = PARTILE_ORDER_BY_CELL;
        assert_int_equal(partile_mass_apply_matfree(ctx, &p, n, &pos, off, q, NULL, xv, y, NULL), 0);
        fetch(ctx, o.y_cell_bfield, y, yb);
        p.order = PARTILE_ORDER_BY_POINT;
        assert_int_equal(partile_mass_apply_matfree_f32(ctx, &p, n, &pos, off, qf, NULL, xvf, yf, NULL),
                         0);
        fetch(ctx, o.y32_bfield, yf, yb / 2);
    }
    partile_free(ctx, x), partile_free(ctx, off), partile_free(ctx, q), partile_free(ctx, w);
    partile_free(ctx, B), partile_free(ctx, xv), partile_free(ctx, S), partile_free(ctx, y);
    partile_free(ctx, qf), partile_free(ctx, wf), partile_free(ctx, xvf), partile_free(ctx, yf);
    return o;
}

static double rel_err_f32(const float *a, const double *b, int64_t count)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < count; i++) {
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += b[i] * b[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

static void expect_same(const char *what, const void *a, const void *b, size_t bytes, int es,
                        const apply_case *c)
{
    if (memcmp(a, b, bytes) == 0)
        return;
    size_t first = 0;
    while (first < bytes / es && memcmp((const char *)a + first * es, (const char *)b + first * es, es) == 0)
        first++;
    fail_msg("%s differs from the reference at entry %zu (dim %d periodic %d shape %d kind %d "
             "f32pos %d n %zu): %.17g vs %.17g", what, first, c->g.dim, c->g.periodic[0], c->shape,
             c->kind, c->f32pos, c->n,
             es == 8 ? ((const double *)a)[first] : (double)((const float *)a)[first],
             es == 8 ? ((const double *)b)[first] : (double)((const float *)b)[first]);
}

/* The particles of variant v of a case (n on a 13, 8 × 9 or 6 × 7 × 6
 * grid; 0 past its last variant): 1-D 46 per cell, 2-D 21, 3-D 16; 3-D
 * CIC, whose by-cell apply changes with the density
 * (backends/gpu/deposit_gpu.inc, corner_first; apply_gpu.inc,
 * apply_by_cell_split), also 5 and 0.8 per cell (scalar: V formed first up
 * to 1.5 per cell) and 2, 4.6 and 1 (tensor: V formed first up to 3 per
 * cell, with B up to 5; else the compacted rounds up to 3 per cell, batches
 * of 8 per cell up to 6, of 16 above); V formed first goes through the
 * deposit's first pass, with a thread per cell up to 2 per cell. */
static size_t scenario_apply_count(int dim, int shape, int kind, int variant)
{
    static const size_t cic3[2][5] = { { 4000, 1260, 200, 0 }, { 4000, 500, 1150, 250, 0 } };
    if (dim == 3 && shape == PARTILE_SHAPE_CIC)
        return cic3[kind][variant];
    return variant == 0 ? (dim == 3 ? 4000 : dim == 2 ? 1500 : 600) : 0;
}

/* Every case on ctx (GPU: bitwise against the reference) or on the
 * reference alone (gpu NULL). */
static void scenario_apply_all(partile_context_t *gpu, uint64_t seed)
{
    partile_context_t *ref = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ref), 0);
    uint64_t rng = seed;
    int cases = 0;
    for (int dim = 1; dim <= 3; dim++)
        for (int periodic = 0; periodic < 2; periodic++)
            for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++)
                for (int kind = 0; kind < 2; kind++)
                for (int variant = 0; scenario_apply_count(dim, shape, kind, variant); variant++) {
                    const int f32pos = (dim + shape + kind + variant) % 3 == 0;
                    const size_t n = scenario_apply_count(dim, shape, kind, variant);
                    apply_case c = make_case(ref, dim, dim == 1 ? 13 : dim == 2 ? 8 : 6, periodic,
                                             shape, kind, n, f32pos, &rng);
                    partile_mass_layout_t L;
                    partile_mass_layout(&c.g, (partile_shape_t)shape, (partile_mass_kind_t)kind, &L);
                    double *S = malloc(L.entries * 8);
                    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { c.x, c.x + c.n, c.x + 2 * c.n } };
                    partile_vectors_t om = { PARTILE_DTYPE_FLOAT64, { c.w, c.w + c.n, c.w + 2 * c.n } };
                    partile_mass_params_t p;
                    memset(&p, 0, sizeof p);
                    p.grid = &c.g;
                    p.shape = (partile_shape_t)shape;
                    p.kind = (partile_mass_kind_t)kind;
                    p.sigma = 0.8;
                    assert_int_equal(partile_mass_assemble(ref, &p, c.n, &pos, c.off, c.q, &om, S, NULL), 0);
                    apply_out r = run_case(ref, &c, S);
                    const int64_t count = c.points * c.m;
                    /* matrix-free against assembled, FP32 against FP64 */
                    double e = ap_rel_err(r.y_omega, r.y_asm, count);
                    if (!(e < 1e-14))
                        fail_msg("reference: matrix-free vs assembled %.3g (dim %d periodic %d shape %d kind %d)",
                                 e, dim, periodic, shape, kind);
                    e = ap_rel_err(r.y_cell_omega, r.y_asm, count);
                    if (!(e < 1e-14))
                        fail_msg("reference: matrix-free by cell vs assembled %.3g (dim %d periodic %d "
                                 "shape %d kind %d)", e, dim, periodic, shape, kind);
                    e = rel_err_f32(r.y32_omega, r.y_omega, count);
                    if (!(e < 1e-5))
                        fail_msg("reference: FP32 vs FP64 %.3g (dim %d periodic %d shape %d kind %d)", e,
                                 dim, periodic, shape, kind);
                    if (kind) {
                        e = rel_err_f32(r.y32_bfield, r.y_bfield, count);
                        if (!(e < 1e-5))
                            fail_msg("reference: FP32 vs FP64 (B field) %.3g", e);
                    }
                    if (gpu) {
                        apply_out d = run_case(gpu, &c, S);
                        expect_same("matrix-free (omega)", d.y_omega, r.y_omega, (size_t)count * 8, 8, &c);
                        expect_same("assembled", d.y_asm, r.y_asm, (size_t)count * 8, 8, &c);
                        expect_same("matrix-free by cell (omega)", d.y_cell_omega, r.y_cell_omega,
                                    (size_t)count * 8, 8, &c);
                        expect_same("FP32 matrix-free (omega)", d.y32_omega, r.y32_omega, (size_t)count * 4,
                                    4, &c);
                        if (kind) {
                            expect_same("matrix-free (B field)", d.y_bfield, r.y_bfield, (size_t)count * 8, 8,
                                        &c);
                            expect_same("FP32 matrix-free (B field)", d.y32_bfield, r.y32_bfield,
                                        (size_t)count * 4, 4, &c);
                            expect_same("matrix-free by cell (B field)", d.y_cell_bfield,
                                        r.y_cell_bfield, (size_t)count * 8, 8, &c);
                        }
                        e = ap_rel_err(d.y_omega, d.y_asm, count);
                        if (!(e < 1e-14))
                            fail_msg("GPU: matrix-free vs assembled %.3g", e);
                        free_out(&d);
                    }
                    free_out(&r);
                    free(S);
                    free_case(&c);
                    cases++;
                }
    printf("# %d cases\n", cases);
    partile_context_destroy(ref);
}

/* Bad input: the same status and particle as the reference, y untouched
 * (GPU: the sorted deposit is launched before the host has read the
 * checks; TSC takes the tile kernel, CIC the line kernel, and 3-D CIC by
 * cell the corner passes). */
static void scenario_apply_errors_shape(partile_context_t *ctx, uint64_t seed,
                                        partile_shape_t shape, int dim,
                                        partile_deposit_order_t order, int64_t side3)
{
    partile_context_t *ref = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ref), 0);
    uint64_t rng = seed;
    apply_case c = make_case(ref, dim, dim == 3 ? side3 : 7, 0, shape, 1, 500, 0, &rng);
    const size_t n = c.n, yb = (size_t)c.points * 3 * 8;
    partile_mass_params_t p;
    memset(&p, 0, sizeof p);
    p.grid = &c.g;
    p.shape = shape;
    p.kind = PARTILE_MASS_TENSOR;
    p.sigma = 1.0;
    p.order = order;
    for (int k = 0; k < 7; k++) {
        /* 0: NaN positions; 1: outside (the grid is not periodic); 2: unsorted;
         * 3: non-finite ω; 4: a B field giving an infinite ω; 5: a cell list
         * that is not monotone; 6: that list and a non-finite ω (ω first) */
        double *x = malloc(3 * n * 8), *w = malloc(3 * n * 8), *B = malloc((size_t)c.points * 24);
        memcpy(x, c.x, 3 * n * 8), memcpy(w, c.w, 3 * n * 8), memcpy(B, c.B, (size_t)c.points * 24);
        if (k == 0)
            x[n + 321] = NAN, x[17] = NAN;
        if (k == 1)
            x[n + 100] = 5.0, x[300] = -7.0;
        if (k == 2) /* the first and last particles (different cells) swapped whole */
            for (int a = 0; a < 2; a++) {
                double t = x[a * n];
                x[a * n] = x[a * n + n - 1], x[a * n + n - 1] = t;
            }
        if (k == 3 || k == 6)
            w[2 * n + 77] = NAN, w[n + 400] = INFINITY;
        int64_t *list = malloc((size_t)(c.ncells + 1) * 8);
        memcpy(list, c.off, (size_t)(c.ncells + 1) * 8);
        if (k >= 5) /* a middle offset past its successor and past n */
            list[c.ncells / 2] = (int64_t)n + 40;
        if (k == 4)
            for (int64_t i = 0; i < c.points * 3; i++)
                B[i] = 1e308;
        partile_context_t *cs[2] = { ref, ctx };
        int status[2];
        int64_t bad[2];
        for (int b = 0; b < 2; b++) {
            partile_context_t *cx = cs[b];
            double *dx = stage(cx, x, 3 * n * 8), *dw = stage(cx, w, 3 * n * 8);
            double *dB = stage(cx, B, (size_t)c.points * 24), *dq = stage(cx, c.q, n * 8);
            double *dxv = stage(cx, c.xv, yb), *dy = stage(cx, NULL, yb);
            int64_t *doff = stage(cx, list, (size_t)(c.ncells + 1) * 8);
            double *before = malloc(yb), *after = malloc(yb);
            fetch(cx, before, dy, yb);
            partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { dx, dx + n, dx + 2 * n } };
            partile_vectors_t om = { PARTILE_DTYPE_FLOAT64, { dw, dw + n, dw + 2 * n } };
            partile_mass_params_t pp = p;
            if (k == 4) {
                pp.bfield = dB;
                pp.beta_over_c = 1e10;
            }
            bad[b] = -1;
            status[b] = partile_mass_apply_matfree(cx, &pp, n, &pos, doff, dq, k == 4 ? NULL : &om, dxv,
                                                   dy, &bad[b]);
            fetch(cx, after, dy, yb);
            assert_memory_equal(before, after, yb);
            free(before), free(after);
            partile_free(cx, dx), partile_free(cx, dw), partile_free(cx, dB), partile_free(cx, dq);
            partile_free(cx, dxv), partile_free(cx, dy), partile_free(cx, doff);
        }
        assert_true(status[0] < 0);
        assert_int_equal(status[1], status[0]);
        assert_int_equal(bad[1], bad[0]);
        free(x), free(w), free(B), free(list);
    }
    free_case(&c);
    partile_context_destroy(ref);
}

static void scenario_apply_errors(partile_context_t *ctx, uint64_t seed)
{
    scenario_apply_errors_shape(ctx, seed, PARTILE_SHAPE_TSC, 2, PARTILE_ORDER_BY_POINT, 5);
    scenario_apply_errors_shape(ctx, seed + 1, PARTILE_SHAPE_CIC, 2, PARTILE_ORDER_BY_POINT, 5);
    scenario_apply_errors_shape(ctx, seed + 2, PARTILE_SHAPE_CIC, 3, PARTILE_ORDER_BY_POINT, 5);
    /* 3.3 per cell: the by-cell apply's passes form V_p (fused), but for
     * the B field (k == 4: V formed first) */
    scenario_apply_errors_shape(ctx, seed + 3, PARTILE_SHAPE_CIC, 3, PARTILE_ORDER_BY_CELL, 5);
    /* 0.87 per cell (8 × 9 × 8): k_prepare forms V first (split) */
    scenario_apply_errors_shape(ctx, seed + 5, PARTILE_SHAPE_CIC, 3, PARTILE_ORDER_BY_CELL, 8);
    scenario_apply_errors_shape(ctx, seed + 4, PARTILE_SHAPE_TSC, 3, PARTILE_ORDER_BY_CELL, 5);
}

#endif
