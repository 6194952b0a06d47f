/* Pair interactions on the GPU backends: every strategy (and auto, and the
 * selector's pick) bit for bit against the reference, FP64 and FP32, on
 * fresh random inputs: 1-D/2-D/3-D, periodic or not, LJ shifted or not, SPH,
 * sparse grids with empty cells, one particle, a lattice at exactly the
 * cutoff, and clusters denser than all-in-sm's shared-memory bound; bad
 * input reported as the reference does, outputs untouched. Skips (exit 77
 * if all) without a device. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/gpu_test.h"
#include "tests/sort_scenarios.h"

typedef struct pset {
    partile_grid_t g;
    size_t n;
    int f32;
    void *x;      /* host, SoA (3 axes, n each), sorted by cell */
    int64_t *off; /* host */
} pset;

/* Positions as given (x: 3n doubles, SoA), rounded to FP32 if f32, sorted
 * by the reference. */
static pset make_pset(partile_context_t *ref, const partile_grid_t *g, size_t n, double *x, int f32)
{
    pset S;
    S.g = *g;
    S.n = n;
    S.f32 = f32;
    int64_t ncells;
    partile_grid_cell_count(g, &ncells);
    const size_t esz = f32 ? 4 : 8, m = n ? n : 1;
    void *raw = malloc(3 * m * esz);
    for (size_t i = 0; i < 3 * n; i++) {
        if (f32)
            ((float *)raw)[i] = (float)x[i];
        else
            ((double *)raw)[i] = x[i];
    }
    int64_t *perm = malloc(m * 8);
    S.off = malloc((size_t)(ncells + 1) * 8);
    S.x = calloc(3 * m, esz);
    partile_vectors_t pos = { f32 ? PARTILE_DTYPE_FLOAT32 : PARTILE_DTYPE_FLOAT64,
                              { raw, (char *)raw + n * esz, (char *)raw + 2 * n * esz } };
    assert_int_equal(partile_sort(ref, g, n, &pos, S.off, perm, NULL, NULL), 0);
    for (int a = 0; a < g->dim; a++)
        for (size_t i = 0; i < n; i++)
            memcpy((char *)S.x + (a * n + i) * esz, (char *)raw + (a * n + (size_t)perm[i]) * esz, esz);
    free(raw), free(perm);
    return S;
}

static void free_pset(pset *S) { free(S->x), free(S->off); }

/* bitwise, or both NaN (hosts and GPUs spell the default NaN differently) */
static void expect_same(const void *want, const void *got, size_t n, int f32, const char *what,
                        const char *strategy)
{
    for (size_t i = 0; i < n; i++) {
        double w, v;
        int same;
        if (f32) {
            float a = ((const float *)want)[i], b = ((const float *)got)[i];
            same = !memcmp(&a, &b, 4) || (isnan(a) && isnan(b));
            w = a, v = b;
        } else {
            double a = ((const double *)want)[i], b = ((const double *)got)[i];
            same = !memcmp(&a, &b, 8) || (isnan(a) && isnan(b));
            w = a, v = b;
        }
        if (!same)
            fail_msg("%s, strategy %s, %s: particle %zu: reference %.17g, GPU %.17g", what, strategy,
                     f32 ? "FP32" : "FP64", i, w, v);
    }
}

/* Runs the reference, then every strategy and the selector on ctx, and
 * compares all outputs bit for bit. */
static void compare_all(partile_context_t *ctx, partile_context_t *ref, const pset *S,
                        const partile_pair_params_t *p0, const char *what)
{
    const size_t n = S->n, esz = S->f32 ? 4 : 8, m = n ? n : 1;
    const int dim = S->g.dim, lj = p0->interaction == PARTILE_PAIRS_LJ;
    const partile_dtype_t type = S->f32 ? PARTILE_DTYPE_FLOAT32 : PARTILE_DTYPE_FLOAT64;
    int64_t ncells;
    partile_grid_cell_count(&S->g, &ncells);
    char *want_f = calloc(3 * m, esz), *want_s = calloc(m, esz);
    partile_vectors_t pos = { type, { S->x, (char *)S->x + n * esz, (char *)S->x + 2 * n * esz } };
    partile_vectors_t force = { type, { want_f, want_f + n * esz, want_f + 2 * n * esz } };
    double want_total = 0, total = 0;
    assert_int_equal(partile_pairs(ref, &S->g, p0, n, &pos, S->off, lj ? &force : NULL, want_s,
                                   &want_total, NULL), 0);
    void *dx = stage(ctx, S->x, 3 * m * esz), *doff = stage(ctx, S->off, (size_t)(ncells + 1) * 8);
    char *dfo = stage(ctx, NULL, 3 * m * esz), *ds = stage(ctx, NULL, m * esz);
    char *got_f = malloc(3 * m * esz), *got_s = malloc(m * esz);
    partile_vectors_t dpos = { type, { dx, (char *)dx + n * esz, (char *)dx + 2 * n * esz } };
    partile_vectors_t dforce = { type, { dfo, dfo + n * esz, dfo + 2 * n * esz } };
    for (int s = 0; s <= PARTILE_PAIRS_STRATEGIES; s++) { /* the last: the selector */
        partile_pair_params_t p = *p0;
        const char *name = s < PARTILE_PAIRS_STRATEGIES ? partile_pairs_strategy_name(s) : "selected";
        assert_int_equal(partile_memset(ctx, dfo, 0xab, 3 * m * esz), 0);
        assert_int_equal(partile_memset(ctx, ds, 0xab, m * esz), 0);
        if (s < PARTILE_PAIRS_STRATEGIES) {
            p.strategy = s;
            int st = partile_pairs(ctx, &S->g, &p, n, &dpos, doff, lj ? &dforce : NULL, ds, &total,
                                   NULL);
            if (st != 0)
                fail_msg("%s, strategy %s: %s: %s", what, name, partile_status_string(st),
                         partile_last_error_detail());
        } else {
            int pick = -1;
            double times[PARTILE_PAIRS_STRATEGIES];
            assert_int_equal(partile_pairs_select(ctx, &S->g, &p, n, &dpos, doff,
                                                  lj ? &dforce : NULL, ds, &pick, times), 0);
            assert_true(pick >= PARTILE_PAIRS_NAIVE && pick < PARTILE_PAIRS_STRATEGIES);
            for (int k = PARTILE_PAIRS_NAIVE; k < PARTILE_PAIRS_STRATEGIES; k++)
                assert_true(times[k] > 0 && times[pick] <= times[k]);
            p.strategy = pick;
            assert_int_equal(partile_pairs(ctx, &S->g, &p, n, &dpos, doff, lj ? &dforce : NULL, ds,
                                           &total, NULL), 0);
        }
        fetch(ctx, got_s, ds, n * esz);
        expect_same(want_s, got_s, n, S->f32, what, name);
        if (lj) {
            fetch(ctx, got_f, dfo, (size_t)dim * n * esz);
            expect_same(want_f, got_f, (size_t)dim * n, S->f32, what, name);
        }
        assert_true(total == want_total || (isnan(total) && isnan(want_total)));
    }
    partile_free(ctx, dx), partile_free(ctx, doff), partile_free(ctx, dfo), partile_free(ctx, ds);
    free(want_f), free(want_s), free(got_f), free(got_s);
}

static partile_grid_t pgrid(int dim, const int64_t cells[3], double h, int periodic)
{
    partile_grid_t g;
    memset(&g, 0, sizeof g);
    g.dim = dim;
    for (int a = 0; a < 3; a++) {
        g.cells[a] = a < dim ? cells[a] : 1;
        g.lower[a] = -0.25;
        g.spacing[a] = h;
        g.periodic[a] = periodic;
    }
    return g;
}

static partile_pair_params_t lj_params(double rc, double sigma, int shifted)
{
    partile_pair_params_t p;
    memset(&p, 0, sizeof p);
    p.interaction = PARTILE_PAIRS_LJ;
    p.cutoff = rc;
    p.epsilon = 1.3;
    p.sigma = sigma;
    p.shifted = shifted;
    return p;
}

static partile_pair_params_t sph_params(double rc)
{
    partile_pair_params_t p;
    memset(&p, 0, sizeof p);
    p.interaction = PARTILE_PAIRS_SPH_DENSITY;
    p.cutoff = rc;
    p.h = 0.45 * rc;
    p.mass = 0.7;
    return p;
}

/* Uniform random particles, mean ppc per cell, on odd grid sizes (partial
 * sub-boxes and pencils), both interactions, both precisions. */
static void pairs_random(partile_context_t *ctx, uint64_t seed)
{
    partile_context_t *ref = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ref), 0);
    uint64_t rng = seed;
    static const int64_t cells[4][3] = { { 0 }, { 301, 1, 1 }, { 37, 23, 1 }, { 13, 11, 9 } };
    static const double ppc[] = { 0.4, 3.0, 25.0 };
    char what[160];
    for (int dim = 1; dim <= 3; dim++)
        for (int periodic = 0; periodic < 2; periodic++)
            for (int k = 0; k < 3; k++)
                for (int f32 = 0; f32 < 2; f32++) {
                    const double h = 0.125; /* cell width = cutoff */
                    partile_grid_t g = pgrid(dim, cells[dim], h, periodic);
                    int64_t nc;
                    partile_grid_cell_count(&g, &nc);
                    const size_t n = (size_t)(ppc[k] * (double)nc);
                    double *x = su_positions(&g, n, &rng);
                    pset S = make_pset(ref, &g, n, x, f32);
                    /* FP32: a smaller σ keeps (σ/r)^12 of close random pairs in range */
                    const double sig = f32 ? 0.004 : 0.03;
                    partile_pair_params_t ps[3] = { lj_params(h, sig, 0), lj_params(h, sig, 1),
                                                    sph_params(h) };
                    for (int i = 0; i < 3; i++) {
                        snprintf(what, sizeof what, "random %d-D periodic %d ppc %g %s", dim,
                                 periodic, ppc[k], i == 2 ? "SPH" : i ? "LJ shifted" : "LJ");
                        compare_all(ctx, ref, &S, &ps[i], what);
                    }
                    free_pset(&S), free(x);
                }
    partile_context_destroy(ref);
}

/* One particle; an empty-but-one grid; a lattice with spacing exactly the
 * cutoff (neighbours at exactly r_c are left out, across periodic faces
 * too); clusters far denser than the mean (all-in-sm falls back, pencils
 * stage in several chunks). */
static void pairs_edges(partile_context_t *ctx, uint64_t seed)
{
    partile_context_t *ref = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ref), 0);
    uint64_t rng = seed;
    char what[160];
    for (int dim = 2; dim <= 3; dim++)
        for (int periodic = 0; periodic < 2; periodic++)
            for (int f32 = 0; f32 < 2; f32++) {
                const double h = 0.125;
                const int64_t side[3] = { 10, 10, 10 };
                partile_grid_t g = pgrid(dim, side, h, periodic);
                int64_t nc;
                partile_grid_cell_count(&g, &nc);
                const partile_pair_params_t lj = lj_params(h, f32 ? 0.004 : 0.03, 1), sph = sph_params(h);
                /* one particle */
                double one[3] = { 0.3, 0.4, 0.5 };
                pset S = make_pset(ref, &g, 1, one, f32);
                snprintf(what, sizeof what, "one particle %d-D periodic %d", dim, periodic);
                compare_all(ctx, ref, &S, &lj, what);
                compare_all(ctx, ref, &S, &sph, what);
                free_pset(&S);
                /* lattice at exactly the cutoff: x = lower + (k + 1/2) h, exact in binary */
                const size_t n = (size_t)nc;
                double *x = malloc(3 * n * sizeof *x);
                for (size_t i = 0; i < n; i++) {
                    size_t rest = i;
                    for (int a = 0; a < 3; a++) {
                        const size_t k = rest % (size_t)g.cells[a];
                        rest /= (size_t)g.cells[a];
                        x[a * n + i] = a < dim ? g.lower[a] + ((double)k + 0.5) * h : 0.0;
                    }
                }
                S = make_pset(ref, &g, n, x, f32);
                snprintf(what, sizeof what, "lattice at the cutoff %d-D periodic %d", dim, periodic);
                compare_all(ctx, ref, &S, &lj, what);
                compare_all(ctx, ref, &S, &sph, what);
                free_pset(&S), free(x);
                /* clusters: 3000 particles in each of two cells, 1 per cell elsewhere
                 * on average: more than all-in-sm stages for a sub-box at this mean
                 * density (600 per cell fitted; emulate-pairs showed no fallback) */
                const size_t nb = (size_t)nc, ncl = 6000;
                double *y = su_positions(&g, nb + ncl, &rng);
                for (size_t i = nb; i < nb + ncl; i++)
                    for (int a = 0; a < dim; a++)
                        y[a * (nb + ncl) + i] = g.lower[a] + h * ((i % 2 ? 3.0 : 7.0) + su_uniform(&rng) * 0.999);
                S = make_pset(ref, &g, nb + ncl, y, f32);
                snprintf(what, sizeof what, "dense clusters %d-D periodic %d", dim, periodic);
                compare_all(ctx, ref, &S, &lj, what);
                compare_all(ctx, ref, &S, &sph, what);
                free_pset(&S), free(y);
            }
    partile_context_destroy(ref);
}

/* A bad position and a broken list: the reference's status and particle,
 * outputs untouched, for every strategy. */
static void pairs_errors(partile_context_t *ctx, uint64_t seed)
{
    partile_context_t *ref = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ref), 0);
    uint64_t rng = seed;
    const int64_t side[3] = { 6, 5, 4 };
    partile_grid_t g = pgrid(3, side, 0.125, 0);
    const size_t n = 300;
    double *x = su_positions(&g, n, &rng);
    pset S = make_pset(ref, &g, n, x, 0);
    int64_t ncells;
    partile_grid_cell_count(&g, &ncells);
    const partile_pair_params_t p0 = lj_params(0.125, 0.03, 0);
    for (int kind = 0; kind < 3; kind++) {
        double *bx = malloc(3 * n * 8);
        int64_t *boff = malloc((size_t)(ncells + 1) * 8);
        memcpy(bx, S.x, 3 * n * 8);
        memcpy(boff, S.off, (size_t)(ncells + 1) * 8);
        if (kind == 0)
            bx[n + 17] = NAN, bx[150] = 1e9; /* NOT_FINITE at 17 before OUT_OF_DOMAIN at 150 */
        else if (kind == 1) {                /* particle 200 swapped with one of another cell */
            for (size_t a = 0; a < 3; a++) {
                double t = bx[a * n + 200];
                bx[a * n + 200] = bx[a * n + 20];
                bx[a * n + 20] = t;
            }
        } else
            boff[ncells / 2] = boff[ncells / 2 + 1] + 1; /* offsets go back */
        partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { bx, bx + n, bx + 2 * n } };
        double *e = calloc(n, 8);
        int64_t want_bad = -1;
        const int want = partile_pairs(ref, &g, &p0, n, &pos, boff, NULL, e, NULL, &want_bad);
        assert_true(want < 0);
        double *dx = stage(ctx, bx, 3 * n * 8), *de = stage(ctx, NULL, n * 8);
        int64_t *doff = stage(ctx, boff, (size_t)(ncells + 1) * 8);
        partile_vectors_t dpos = { PARTILE_DTYPE_FLOAT64, { dx, dx + n, dx + 2 * n } };
        for (int s = 0; s < PARTILE_PAIRS_STRATEGIES; s++) {
            partile_pair_params_t p = p0;
            p.strategy = s;
            int64_t bad = -1;
            assert_int_equal(partile_memset(ctx, de, 0x5a, n * 8), 0);
            assert_int_equal(partile_pairs(ctx, &g, &p, n, &dpos, doff, NULL, de, NULL, &bad), want);
            assert_int_equal(bad, want_bad);
            unsigned char *h = malloc(n * 8);
            fetch(ctx, h, de, n * 8);
            for (size_t i = 0; i < n * 8; i++)
                assert_int_equal(h[i], 0x5a);
            free(h);
        }
        partile_free(ctx, dx), partile_free(ctx, de), partile_free(ctx, doff);
        free(bx), free(boff), free(e);
    }
    free_pset(&S), free(x);
    partile_context_destroy(ref);
}

GPU_TEST(random, pairs_random(ctx, fresh_seed()))
GPU_TEST(edges, pairs_edges(ctx, fresh_seed()))
GPU_TEST(errors, pairs_errors(ctx, fresh_seed()))

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_cuda), cmocka_unit_test(edges_cuda), cmocka_unit_test(errors_cuda),
        cmocka_unit_test(random_hip),  cmocka_unit_test(edges_hip),  cmocka_unit_test(errors_hip),
    };
    GPU_TEST_MAIN(tests);
}
