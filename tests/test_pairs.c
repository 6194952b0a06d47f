/* Pair interactions on the reference backend: against an independent
 * all-pairs loop, Newton's third law, hand-computed pairs, the cutoff edge,
 * periodic images, and bad input. */
#include "tests/sort_scenarios.h"
#include "common/pairs_math.h"

typedef struct sorted_set {
    partile_grid_t g;
    size_t n;
    double *x; /* SoA, sorted by cell */
    int64_t *off;
} sorted_set;

static sorted_set make_set(partile_context_t *ref, int dim, int periodic, int64_t side, double h,
                           size_t n, uint64_t *rng)
{
    sorted_set S;
    memset(&S.g, 0, sizeof S.g);
    S.g.dim = dim;
    for (int a = 0; a < 3; a++) {
        S.g.cells[a] = a < dim ? side : 1;
        S.g.lower[a] = -0.5;
        S.g.spacing[a] = h;
        S.g.periodic[a] = periodic;
    }
    S.n = n;
    int64_t ncells;
    partile_grid_cell_count(&S.g, &ncells);
    double *x = su_positions(&S.g, n, rng);
    int64_t *perm = malloc((n ? n : 1) * 8);
    S.off = malloc((size_t)(ncells + 1) * 8);
    S.x = malloc(3 * (n ? n : 1) * 8);
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { x, x + n, x + 2 * n } };
    assert_int_equal(partile_sort(ref, &S.g, n, &pos, S.off, perm, NULL, NULL), 0);
    for (int a = 0; a < 3; a++)
        for (size_t i = 0; i < n; i++)
            S.x[a * n + i] = a < dim ? x[a * n + perm[i]] : 0.0;
    free(x), free(perm);
    return S;
}

static void free_set(sorted_set *S) { free(S->x), free(S->off); }

/* O(N²), plain double arithmetic: the expected results. */
static void all_pairs(const sorted_set *S, const partile_pair_params_t *p, double *f, double *s,
                      double *scale)
{
    const partile_grid_t *g = &S->g;
    const size_t n = S->n;
    double shift = 0;
    if (p->interaction == PARTILE_PAIRS_LJ && p->shifted) {
        double q = (p->sigma / p->cutoff);
        shift = 4 * p->epsilon * (pow(q, 12) - pow(q, 6));
    }
    const double norm = partile_spline_norm(g->dim, p->h);
    for (size_t i = 0; i < n; i++) {
        double fi[3] = { 0, 0, 0 }, si = p->interaction == PARTILE_PAIRS_LJ ? 0 : p->mass * norm, sc = fabs(si);
        for (size_t j = 0; j < n; j++) {
            if (j == i)
                continue;
            double d[3] = { 0, 0, 0 }, r2 = 0;
            for (int a = 0; a < g->dim; a++) {
                d[a] = S->x[a * n + i] - S->x[a * n + j];
                double L = (double)g->cells[a] * g->spacing[a];
                if (g->periodic[a])
                    d[a] -= L * round(d[a] / L);
                r2 += d[a] * d[a];
            }
            if (r2 >= p->cutoff * p->cutoff)
                continue;
            double r = sqrt(r2);
            if (p->interaction == PARTILE_PAIRS_LJ) {
                double sr6 = pow(p->sigma / r, 6), fs = 24 * p->epsilon * (2 * sr6 * sr6 - sr6) / r2;
                for (int a = 0; a < 3; a++)
                    fi[a] += fs * d[a];
                si += 0.5 * (4 * p->epsilon * (sr6 * sr6 - sr6) - shift);
                sc += fabs(fs) * r + fabs(4 * p->epsilon * (sr6 * sr6 + sr6)) + fabs(shift);
            } else {
                double q = r / p->h;
                double w = q < 1 ? 1 - 1.5 * q * q + 0.75 * q * q * q : q < 2 ? 0.25 * pow(2 - q, 3) : 0;
                si += p->mass * norm * w;
                sc += fabs(p->mass * norm * w);
            }
        }
        for (int a = 0; a < 3; a++)
            f[a * n + i] = fi[a];
        s[i] = si;
        scale[i] = sc;
    }
}

static void run_case(partile_context_t *ctx, int dim, int periodic, int interaction, int f32,
                     uint64_t *rng)
{
    const double h = 0.125;
    sorted_set S = make_set(ctx, dim, periodic, 8, h, dim == 3 ? 1500 : dim == 2 ? 400 : 60, rng);
    const size_t n = S.n;
    /* FP32: a smaller σ keeps (σ/r)^12 of the closest random pairs inside float range */
    partile_pair_params_t p = { (partile_interaction_t)interaction, 0.12, 1.0, f32 ? 0.003 : 0.03,
                                periodic, 0.05, 0.7, 0 };
    double *f = calloc(3 * n, 8), *s = calloc(n, 8), *want_f = calloc(3 * n, 8), *want_s = calloc(n, 8),
           *scale = calloc(n, 8);
    all_pairs(&S, &p, want_f, want_s, scale);
    double total = -1;
    if (f32) {
        float *xf = malloc(3 * n * 4), *ff = calloc(3 * n, 4), *sf = calloc(n, 4);
        for (size_t i = 0; i < 3 * n; i++)
            xf[i] = (float)S.x[i];
        /* the expected values from the float positions */
        for (size_t i = 0; i < 3 * n; i++)
            S.x[i] = xf[i];
        all_pairs(&S, &p, want_f, want_s, scale);
        partile_vectors_t pos = { PARTILE_DTYPE_FLOAT32, { xf, xf + n, xf + 2 * n } };
        partile_vectors_t force = { PARTILE_DTYPE_FLOAT32, { ff, ff + n, ff + 2 * n } };
        assert_int_equal(partile_pairs(ctx, &S.g, &p, n, &pos, S.off,
                                       interaction == PARTILE_PAIRS_LJ ? &force : NULL, sf, &total, NULL), 0);
        for (size_t i = 0; i < 3 * n; i++)
            f[i] = ff[i];
        for (size_t i = 0; i < n; i++)
            s[i] = sf[i];
        free(xf), free(ff), free(sf);
    } else {
        partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { S.x, S.x + n, S.x + 2 * n } };
        partile_vectors_t force = { PARTILE_DTYPE_FLOAT64, { f, f + n, f + 2 * n } };
        assert_int_equal(partile_pairs(ctx, &S.g, &p, n, &pos, S.off,
                                       interaction == PARTILE_PAIRS_LJ ? &force : NULL, s, &total, NULL), 0);
    }
    const double tol = f32 ? 2e-5 : 1e-12;
    double sum_s = 0, fsum[3] = { 0, 0, 0 }, fabs_sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (f32 && scale[i] > 1e37) { /* a nearly coincident pair overflows FP32, as it should */
            assert_true(isinf(s[i]) || fabs(s[i]) > 1e36 || scale[i] > 1e300);
            continue;
        }
        if (!(fabs(s[i] - want_s[i]) <= tol * (scale[i] + 1)))
            fail_msg("particle %zu: scalar %.17g, all pairs %.17g (dim %d per %d int %d f32 %d)", i, s[i],
                     want_s[i], dim, periodic, interaction, f32);
        for (int a = 0; a < dim; a++) {
            assert_true(fabs(f[a * n + i] - want_f[a * n + i]) <= tol * (scale[i] + 1));
            fsum[a] += f[a * n + i];
            fabs_sum += fabs(f[a * n + i]);
        }
        sum_s += s[i];
    }
    if (isfinite(total))
        assert_true(fabs(total - sum_s) <= 1e-9 * (fabs(sum_s) + 1));
    if (periodic && interaction == PARTILE_PAIRS_LJ && isfinite(fabs_sum)) /* Newton's third law */
        for (int a = 0; a < dim; a++)
            assert_true(fabs(fsum[a]) <= (f32 ? 1e-4 : 1e-10) * (fabs_sum + 1));
    free(f), free(s), free(want_f), free(want_s), free(scale);
    free_set(&S);
}

static partile_context_t *ref(void)
{
    partile_context_t *ctx = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ctx), 0);
    return ctx;
}

static void test_against_all_pairs(void **state)
{
    (void)state;
    partile_context_t *ctx = ref();
    uint64_t rng = 77;
    for (int dim = 1; dim <= 3; dim++)
        for (int periodic = 0; periodic < 2; periodic++)
            for (int it = 0; it < 2; it++)
                for (int f32 = 0; f32 < 2; f32++)
                    run_case(ctx, dim, periodic, it, f32, &rng);
    partile_context_destroy(ctx);
}

/* Two particles by hand: the LJ minimum, σ, the cutoff edge, a periodic
 * image; SPH for one and two particles. */
static void test_by_hand(void **state)
{
    (void)state;
    partile_context_t *ctx = ref();
    partile_grid_t g;
    memset(&g, 0, sizeof g);
    g.dim = 1;
    g.cells[0] = 4;
    g.spacing[0] = 0.25;
    g.periodic[0] = 1; /* box [0, 1) */
    int64_t off[5];
    double x[2], f[2], e[2], total;
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { x } }, force = { PARTILE_DTYPE_FLOAT64, { f } };
    partile_pair_params_t lj = { PARTILE_PAIRS_LJ, 0.25, 2.0, 0.1, 0, 0, 0, 0 };
    int64_t perm[2];
    /* r = 2^(1/6) σ: force 0, energy −ε split in halves */
    x[0] = 0.3, x[1] = 0.3 + pow(2.0, 1.0 / 6) * 0.1;
    assert_int_equal(partile_sort(ctx, &g, 2, &pos, off, perm, NULL, NULL), 0);
    assert_int_equal(partile_pairs(ctx, &g, &lj, 2, &pos, off, &force, e, &total, NULL), 0);
    assert_true(fabs(f[0]) < 1e-12 && fabs(f[1]) < 1e-12);
    assert_true(fabs(e[0] + 1.0) < 1e-12 && fabs(total + 2.0) < 1e-12);
    /* exactly at the cutoff (0.25 = 0.5 − 0.25 exactly): no interaction */
    x[0] = 0.25, x[1] = 0.5;
    assert_int_equal(partile_sort(ctx, &g, 2, &pos, off, perm, NULL, NULL), 0);
    assert_int_equal(partile_pairs(ctx, &g, &lj, 2, &pos, off, &force, e, &total, NULL), 0);
    assert_true(f[0] == 0 && f[1] == 0 && e[0] == 0 && total == 0);
    /* through the periodic boundary: 0.02 and 0.98 are 0.04 apart; the
     * force on the first pushes it in +x (away from the image at −0.02) */
    x[0] = 0.02, x[1] = 0.98;
    assert_int_equal(partile_sort(ctx, &g, 2, &pos, off, perm, NULL, NULL), 0);
    double xs[2] = { x[perm[0]], x[perm[1]] };
    pos.axis[0] = xs;
    assert_int_equal(partile_pairs(ctx, &g, &lj, 2, &pos, off, &force, e, &total, NULL), 0);
    assert_true(f[0] > 0 && f[1] < 0 && f[0] == -f[1]);
    /* shifted: energy 0 just inside the cutoff */
    lj.shifted = 1;
    x[0] = 0.1, x[1] = 0.1 + 0.25 * (1 - 1e-12);
    pos.axis[0] = x;
    assert_int_equal(partile_sort(ctx, &g, 2, &pos, off, perm, NULL, NULL), 0);
    assert_int_equal(partile_pairs(ctx, &g, &lj, 2, &pos, off, NULL, e, &total, NULL), 0);
    assert_true(fabs(total) < 1e-9);
    /* SPH: one particle: m W(0) = m·2/(3h) in 1-D; a pair at r = h adds m·W(1) = m·¼·norm */
    partile_pair_params_t sph = { PARTILE_PAIRS_SPH_DENSITY, 0.25, 0, 0, 0, 0.1, 3.0, 0 };
    assert_int_equal(partile_sort(ctx, &g, 1, &pos, off, perm, NULL, NULL), 0);
    assert_int_equal(partile_pairs(ctx, &g, &sph, 1, &pos, off, NULL, e, NULL, NULL), 0);
    assert_true(fabs(e[0] - 3.0 * 2.0 / (3.0 * 0.1)) < 1e-12);
    x[0] = 0.5, x[1] = 0.5 + 0.1;
    assert_int_equal(partile_sort(ctx, &g, 2, &pos, off, perm, NULL, NULL), 0);
    assert_int_equal(partile_pairs(ctx, &g, &sph, 2, &pos, off, NULL, e, NULL, NULL), 0);
    assert_true(fabs(e[0] - 3.0 * (2.0 / 0.3) * 1.25) < 1e-9);
    partile_context_destroy(ctx);
}

static void test_bad_input(void **state)
{
    (void)state;
    partile_context_t *ctx = ref();
    uint64_t rng = 3;
    sorted_set S = make_set(ctx, 2, 1, 6, 0.125, 200, &rng);
    const size_t n = S.n;
    double *f = malloc(2 * n * 8), *e = malloc(n * 8);
    for (size_t i = 0; i < n; i++)
        e[i] = -9;
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { S.x, S.x + n } };
    partile_vectors_t force = { PARTILE_DTYPE_FLOAT64, { f, f + n } };
    partile_pair_params_t p = { PARTILE_PAIRS_LJ, 0.1, 1, 0.02, 0, 0, 0, 0 };
    double t = S.x[0], total = 42; /* the total is an output too: untouched */
    S.x[0] = S.x[n - 1]; /* unsorted */
    assert_int_equal(partile_pairs(ctx, &S.g, &p, n, &pos, S.off, &force, e, &total, NULL),
                     PARTILE_ERROR_NOT_SORTED);
    S.x[0] = t;
    S.x[n + 3] = NAN;
    int64_t bad = -1;
    assert_int_equal(partile_pairs(ctx, &S.g, &p, n, &pos, S.off, &force, e, &total, &bad),
                     PARTILE_ERROR_NOT_FINITE);
    assert_int_equal(bad, 3);
    for (size_t i = 0; i < n; i++)
        assert_true(e[i] == -9); /* untouched */
    assert_true(total == 42);
    assert_int_equal(partile_pairs(ctx, &S.g, &p, n, &pos, S.off, &force, NULL, &total, NULL),
                     PARTILE_ERROR_NULL_POINTER); /* a total needs the scalar output */
    assert_true(total == 42);
    p.cutoff = 0.2; /* wider than the cells */
    assert_int_equal(partile_pairs(ctx, &S.g, &p, n, &pos, S.off, &force, e, NULL, NULL),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    p.cutoff = 0.1;
    p.sigma = 0;
    assert_int_equal(partile_pairs(ctx, &S.g, &p, n, &pos, S.off, &force, e, NULL, NULL),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    partile_pair_params_t sph = { PARTILE_PAIRS_SPH_DENSITY, 0.1, 0, 0, 0, 0.06, 1, 0 }; /* 2h > r_c */
    assert_int_equal(partile_pairs(ctx, &S.g, &sph, n, &pos, S.off, NULL, e, NULL, NULL),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    sph.h = 0.05;
    assert_int_equal(partile_pairs(ctx, &S.g, &sph, n, &pos, S.off, &force, e, NULL, NULL),
                     PARTILE_ERROR_INVALID_ARGUMENT); /* SPH has no force */
    sph.strategy = PARTILE_PAIRS_STRATEGIES; /* no such strategy */
    assert_int_equal(partile_pairs(ctx, &S.g, &sph, n, &pos, S.off, NULL, e, NULL, NULL),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    sph.strategy = -1;
    assert_int_equal(partile_pairs(ctx, &S.g, &sph, n, &pos, S.off, NULL, e, NULL, NULL),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    for (size_t i = 0; i < n; i++)
        assert_true(e[i] == -9); /* still untouched */
    S.g.cells[0] = 2;
    assert_int_equal(partile_pairs(ctx, &S.g, &p, n, &pos, S.off, &force, e, NULL, NULL),
                     PARTILE_ERROR_INVALID_ARGUMENT); /* periodic with 2 cells */
    free(f), free(e);
    free_set(&S);
    partile_context_destroy(ctx);
}

/* The reference takes every strategy (it defines their common order) and
 * gives the same bits for each; the names round-trip; the selector picks one. */
static void test_strategies(void **state)
{
    (void)state;
    partile_context_t *ctx = ref();
    uint64_t rng = 11;
    sorted_set S = make_set(ctx, 3, 1, 5, 0.125, 300, &rng);
    const size_t n = S.n;
    double *f0 = malloc(3 * n * 8), *e0 = malloc(n * 8), *f = malloc(3 * n * 8), *e = malloc(n * 8);
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { S.x, S.x + n, S.x + 2 * n } };
    partile_vectors_t force0 = { PARTILE_DTYPE_FLOAT64, { f0, f0 + n, f0 + 2 * n } };
    partile_vectors_t force = { PARTILE_DTYPE_FLOAT64, { f, f + n, f + 2 * n } };
    partile_pair_params_t p;
    memset(&p, 0, sizeof p); /* zero: strategy auto */
    p.interaction = PARTILE_PAIRS_LJ;
    p.cutoff = 0.12, p.epsilon = 1, p.sigma = 0.03;
    assert_int_equal(partile_pairs(ctx, &S.g, &p, n, &pos, S.off, &force0, e0, NULL, NULL), 0);
    for (int s = 0; s < PARTILE_PAIRS_STRATEGIES; s++) {
        int back = -1;
        assert_non_null(partile_pairs_strategy_name(s));
        assert_int_equal(partile_pairs_strategy_from_name(partile_pairs_strategy_name(s), &back), 0);
        assert_int_equal(back, s);
        p.strategy = s;
        assert_int_equal(partile_pairs(ctx, &S.g, &p, n, &pos, S.off, &force, e, NULL, NULL), 0);
        assert_memory_equal(f, f0, 3 * n * 8);
        assert_memory_equal(e, e0, n * 8);
    }
    int back = 0;
    assert_null(partile_pairs_strategy_name(PARTILE_PAIRS_STRATEGIES));
    assert_int_equal(partile_pairs_strategy_from_name("x-pencils", &back), PARTILE_ERROR_INVALID_ARGUMENT);
    int pick = -1;
    double times[PARTILE_PAIRS_STRATEGIES];
    assert_int_equal(partile_pairs_select(ctx, &S.g, &p, n, &pos, S.off, &force, e, &pick, times), 0);
    assert_true(pick >= PARTILE_PAIRS_NAIVE && pick < PARTILE_PAIRS_STRATEGIES);
    assert_memory_equal(e, e0, n * 8);
    free(f0), free(e0), free(f), free(e);
    free_set(&S);
    partile_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_strategies),
        cmocka_unit_test(test_against_all_pairs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
