/* Random, often bad, input to every operation of the C API on the
 * reference backend: grids with zero, negative, NaN, infinite, subnormal
 * and huge corners and spacings; positions, charges, ω, B, OVERLAP sizes
 * and field values with NaN, ±inf, ±0, subnormals and extremes, on and just
 * below the upper bound; unknown enum values; broken cell lists. Each call
 * must return (no crash; under the sanitize build, no report), and a
 * failure must come with a detail and leave the outputs untouched
 * (poisoned before the call). A fixed seed per run, so that CI repeats it;
 * PARTILE_FUZZ_ITERATIONS and PARTILE_FUZZ_SEED change both. */
#include <float.h>
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

static uint64_t rng_state;
static uint64_t next_random(void) /* xorshift64 */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static double uniform(void) { return (double)(next_random() >> 11) * 0x1p-53; }
static int pick(int n) { return (int)(next_random() % (uint64_t)n); }
/* true once in n draws */
static int rarely(int n) { return pick(n) == 0; }

static double special_value(void)
{
    static const double v[] = { NAN,      INFINITY, -INFINITY, 0.0,     -0.0,   5e-324,
                                -5e-324,  DBL_MAX,  -DBL_MAX,  1e300,   -1e300, 1e-300,
                                0x1p52,   0x1p53,   -0x1p63,   1.0,     0.5 };
    return v[pick((int)(sizeof v / sizeof v[0]))];
}
/* a plain value most of the time */
static double mostly(double plain, int n) { return rarely(n) ? special_value() : plain; }

#define POISON 0x5a
static void poison(void *p, size_t bytes) { memset(p, POISON, bytes); }
static int untouched(const void *p, size_t bytes)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < bytes; i++)
        if (c[i] != POISON)
            return 0;
    return 1;
}

typedef struct tally {
    long long calls, succeeded;
} tally;
static tally total;

/* A call's status: a failure needs a detail and untouched outputs (out:
 * bytes of them, or NULL). */
static void judge(const char *op, int iteration, int st, const void *out, size_t bytes)
{
    total.calls++;
    if (st >= 0) {
        total.succeeded++;
        return;
    }
    const char *detail = partile_last_error_detail();
    if (!detail[0])
        fail_msg("iteration %d, %s: status %d (%s) without a detail", iteration, op, st,
                 partile_status_string(st));
    if (out && !untouched(out, bytes))
        fail_msg("iteration %d, %s: status %d (%s) but the output was written", iteration, op,
                 st, detail);
}

/* A case: a grid of at most 10^5 cells (else none), n particles. */
typedef struct fuzz_case {
    partile_grid_t g;
    int64_t cells;
    size_t n;
    double *x[3];        /* positions as drawn */
    double *sx[3];       /* in the sort's order (as drawn if it failed) */
    int64_t *off, *perm, *cell;
    int sorted;          /* the sort succeeded */
    partile_vectors_t pos, spos;
} fuzz_case;

static int draw_grid(partile_grid_t *g, int64_t *cells)
{
    static const int64_t counts[] = { 1, 2, 3, 4, 5, 6, 8, 13 };
    memset(g, 0, sizeof *g);
    g->dim = rarely(40) ? (pick(2) ? 0 : 4) : 1 + pick(3);
    *cells = 1;
    for (int a = 0; a < 3; a++) {
        g->cells[a] = rarely(50) ? (pick(2) ? 0 : -3) : counts[pick(8)];
        g->periodic[a] = pick(2);
        g->lower[a] = mostly(uniform() * 4 - 2, 8);
        g->spacing[a] = mostly(0.1 + uniform(), 8);
        if (a < g->dim && g->cells[a] > 0)
            *cells *= g->cells[a];
    }
    return *cells <= 100000;
}

static void draw_particles(fuzz_case *c)
{
    c->n = rarely(4) ? 0 : 1 + (size_t)pick(60);
    for (int a = 0; a < 3; a++) {
        c->x[a] = malloc((c->n + 1) * sizeof(double));
        c->sx[a] = malloc((c->n + 1) * sizeof(double));
        const double L = (double)c->g.cells[a] * c->g.spacing[a];
        for (size_t i = 0; i < c->n; i++)
            c->x[a][i] = !rarely(30) ? c->g.lower[a] + uniform() * L
                         : pick(2)   ? special_value()
                                     : c->g.lower[a] + (pick(2) ? L : nextafter(L, -INFINITY));
    }
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { c->x[0], c->x[1], c->x[2] } };
    if (rarely(30))
        pos.type = (partile_dtype_t)pick(5); /* FLOAT32 reads the doubles' bytes as floats */
    c->pos = pos;
    c->spos = pos;
    for (int a = 0; a < 3; a++)
        c->spos.axis[a] = c->sx[a];
}

static void run_sort(partile_context_t *ctx, fuzz_case *c, int it)
{
    c->off = malloc((size_t)(c->cells + 1) * sizeof(int64_t));
    c->perm = malloc((c->n + 1) * sizeof(int64_t));
    c->cell = malloc((c->n + 1) * sizeof(int64_t));
    poison(c->perm, c->n * sizeof(int64_t));
    int64_t bad = -1;
    const int st = partile_sort(ctx, &c->g, c->n, &c->pos, c->off, c->perm, c->cell, &bad);
    judge("sort", it, st, c->n ? c->perm : NULL, c->n * sizeof(int64_t));
    c->sorted = st >= 0;
    for (size_t i = 0; i < c->n; i++)
        for (int a = 0; a < 3; a++)
            c->sx[a][i] = c->x[a][c->sorted ? c->perm[i] : (int64_t)i];
    if (c->sorted && c->n > 1 && rarely(6)) { /* a list the positions no longer follow */
        const double t = c->sx[0][0];
        c->sx[0][0] = c->sx[0][c->n - 1];
        c->sx[0][c->n - 1] = t;
    }
}

static void run_transfers(partile_context_t *ctx, fuzz_case *c, int it)
{
    partile_transfer_t t;
    memset(&t, 0, sizeof t);
    t.grid = &c->g;
    t.shape = (partile_shape_t)(rarely(40) ? 5 + pick(3) : pick(4));
    t.centering = (partile_centering_t)pick(2);
    t.components = rarely(40) ? (pick(2) ? 0 : PARTILE_MAX_COMPONENTS + 1)
                              : 1 + pick(PARTILE_MAX_COMPONENTS);
    double *sizes = malloc((c->n + 1) * sizeof(double));
    for (size_t i = 0; i < c->n; i++)
        sizes[i] = mostly(0.05 + 0.05 * uniform(), 10);
    t.sizes = rarely(10) ? NULL : sizes;
    t.order = (partile_deposit_order_t)(rarely(10) ? 7 : pick(2));
    int64_t points[3], npoints = 0;
    if (partile_field_shape(&c->g, t.centering, points, &npoints) < 0 || npoints > 1000000 ||
        t.components < 1 || t.components > PARTILE_MAX_COMPONENTS) {
        free(sizes);
        return;
    }
    const size_t m = (size_t)t.components, field_bytes = (size_t)npoints * m * sizeof(double);
    double *field = malloc(field_bytes + 8), *values = malloc((c->n * m + 1) * sizeof(double));
    double *back = malloc((c->n * m + 1) * sizeof(double));
    for (size_t i = 0; i < c->n * m; i++)
        values[i] = mostly(uniform(), 20);
    poison(field, field_bytes);
    int64_t bad = -1;
    int st = partile_deposit(ctx, &t, c->n, &c->spos, values, c->sorted && pick(3) ? c->off : NULL,
                             field, &bad);
    judge("deposit", it, st, field, field_bytes);
    for (size_t i = 0; i < (size_t)npoints * m; i++)
        field[i] = mostly(uniform(), 20);
    poison(back, c->n * m * sizeof(double));
    st = partile_gather(ctx, &t, c->n, &c->spos, field, back, &bad);
    judge("gather", it, st, back, c->n * m * sizeof(double));
    free(field), free(values), free(back), free(sizes);
}

static void run_mass(partile_context_t *ctx, fuzz_case *c, int it)
{
    partile_mass_params_t p;
    memset(&p, 0, sizeof p);
    p.grid = &c->g;
    p.shape = (partile_shape_t)(rarely(10) ? pick(5) : 1 + pick(2));
    p.kind = (partile_mass_kind_t)(rarely(10) ? 3 : pick(2));
    p.sigma = mostly(uniform(), 10);
    p.mode = (partile_mass_mode_t)(rarely(10) ? 5 : pick(2));
    p.algorithm = (partile_mass_algorithm_t)(rarely(10) ? 9 : pick(3));
    p.precision = (partile_mass_precision_t)(rarely(10) ? 4 : pick(2));
    p.order = (partile_deposit_order_t)(rarely(10) ? 3 : pick(2));
    partile_mass_layout_t L;
    if (partile_mass_layout(&c->g, p.shape, p.kind, &L) < 0 || L.entries > 50000000 ||
        L.points > 1000000)
        return;
    const size_t n = c->n, xs = (size_t)L.points * (size_t)L.components;
    double *q = malloc((n + 1) * 8), *w[3], *B = NULL, *storage = malloc(L.entries * 8 + 8);
    double *x = malloc(xs * 8 + 8), *y = malloc(xs * 8 + 8);
    for (int a = 0; a < 3; a++)
        w[a] = malloc((n + 1) * 8);
    for (size_t i = 0; i < n; i++) {
        q[i] = mostly(uniform(), 20);
        for (int a = 0; a < 3; a++)
            w[a][i] = mostly(uniform(), 60);
    }
    for (size_t i = 0; i < xs; i++)
        x[i] = mostly(uniform(), 30);
    partile_vectors_t omega = { PARTILE_DTYPE_FLOAT64, { w[0], w[1], w[2] } };
    if (rarely(3)) { /* ω from a B field */
        B = malloc((size_t)L.points * 3 * 8);
        for (int64_t i = 0; i < L.points * 3; i++)
            B[i] = mostly(uniform(), 50);
        p.bfield = B;
        p.beta_over_c = mostly(uniform(), 10);
    }
    const int64_t *off = c->sorted ? c->off : NULL;
    int64_t bad = -1;
    poison(storage, L.entries * 8);
    int st = partile_mass_assemble(ctx, &p, n, &c->spos, off, q, B ? NULL : &omega, storage, &bad);
    judge("mass_assemble", it, st, storage, L.entries * 8);
    poison(y, xs * 8);
    st = partile_mass_apply_matfree(ctx, &p, n, &c->spos, off, q, B ? NULL : &omega, x, y, &bad);
    judge("mass_apply_matfree", it, st, y, xs * 8);
    for (size_t e = 0; e < L.entries; e++)
        storage[e] = uniform();
    poison(y, xs * 8);
    st = partile_mass_apply_assembled(ctx, &p, storage, x, y);
    judge("mass_apply_assembled", it, st, y, xs * 8);
    /* FP32 */
    float *qf = malloc((n + 1) * 4), *xf = malloc(xs * 4 + 4), *yf = malloc(xs * 4 + 4), *wf[3];
    for (int a = 0; a < 3; a++) {
        wf[a] = malloc((n + 1) * 4);
        for (size_t i = 0; i < n; i++)
            wf[a][i] = (float)w[a][i];
    }
    for (size_t i = 0; i < n; i++)
        qf[i] = (float)q[i];
    for (size_t i = 0; i < xs; i++)
        xf[i] = (float)x[i];
    partile_vectors_t omega32 = { PARTILE_DTYPE_FLOAT32, { wf[0], wf[1], wf[2] } };
    poison(yf, xs * 4);
    st = partile_mass_apply_matfree_f32(ctx, &p, n, &c->spos, off, qf, B ? NULL : &omega32, xf, yf,
                                        &bad);
    judge("mass_apply_matfree_f32", it, st, yf, xs * 4);
    /* export (host arrays) */
    int64_t nnz;
    if (partile_mass_export_count(&c->g, p.shape, &nnz) >= 0 && nnz < 10000000) {
        int64_t *indptr = malloc((size_t)(L.points + 1) * 8);
        int64_t *indices = malloc((size_t)nnz * 8 + 8);
        double *data = malloc((size_t)nnz * L.components * L.components * 8 + 8);
        st = partile_mass_export(&c->g, p.shape, p.kind, storage, indptr, indices, data);
        judge("mass_export", it, st, NULL, 0);
        free(indptr), free(indices), free(data);
    }
    for (int a = 0; a < 3; a++)
        free(w[a]), free(wf[a]);
    free(qf), free(xf), free(yf), free(q), free(B), free(storage), free(x), free(y);
}

static void run_pairs(partile_context_t *ctx, fuzz_case *c, int it)
{
    partile_pair_params_t p;
    memset(&p, 0, sizeof p);
    p.interaction = (partile_interaction_t)(rarely(10) ? 4 : pick(2));
    p.cutoff = mostly(0.1 + uniform() * 0.5, 5);
    p.epsilon = mostly(uniform(), 10);
    p.sigma = mostly(0.05 + 0.1 * uniform(), 10);
    p.shifted = pick(2);
    p.h = mostly(0.05 + 0.1 * uniform(), 10);
    p.mass = mostly(uniform(), 10);
    p.strategy = rarely(10) ? 9 : pick(PARTILE_PAIRS_STRATEGIES);
    const size_t n = c->n, bytes = n * sizeof(double);
    double *f[3], *scalar = malloc(bytes + 8), sum;
    for (int a = 0; a < 3; a++) {
        f[a] = malloc(bytes + 8);
        poison(f[a], bytes);
    }
    partile_vectors_t force = { c->spos.type, { f[0], f[1], f[2] } };
    const int with_force = p.interaction == PARTILE_PAIRS_LJ && pick(2);
    poison(scalar, bytes);
    int64_t bad = -1;
    const int st = partile_pairs(ctx, &c->g, &p, n, &c->spos, c->sorted ? c->off : NULL,
                                 with_force ? &force : NULL, scalar, &sum, &bad);
    judge("pairs", it, st, scalar, bytes);
    if (st < 0)
        for (int a = 0; a < 3; a++)
            judge("pairs (force)", it, st, f[a], bytes);
    for (int a = 0; a < 3; a++)
        free(f[a]);
    free(scalar);
}

static void run_binning(partile_context_t *ctx, fuzz_case *c, int it)
{
    const size_t n = c->n;
    int64_t bad = -1;
    if (c->sorted && n) {
        int64_t *off2 = malloc((size_t)(c->cells + 1) * 8), *perm2 = malloc(n * 8);
        poison(perm2, n * 8);
        if (rarely(3)) /* an old cell list out of range */
            c->cell[pick((int)n)] = pick(2) ? -5 : c->cells + 3;
        const int st =
            partile_resort(ctx, &c->g, n, &c->spos, c->off, c->cell, off2, perm2, NULL, &bad);
        judge("resort", it, st, perm2, n * 8);
        free(off2), free(perm2);
    }
    int64_t *bins = malloc((n + 1) * 8);
    poison(bins, n * 8);
    int st = partile_bin(ctx, &c->g, n, &c->pos, bins, &bad);
    judge("bin", it, st, n ? bins : NULL, n * 8);
    partile_sort_advice_t advice;
    st = partile_sort_interval(ctx, &c->g, n, &c->pos, mostly(0.25 + 0.25 * uniform(), 5),
                               mostly(uniform(), 5), &advice);
    judge("sort_interval", it, st, NULL, 0);
    free(bins);
}

static void free_case(fuzz_case *c)
{
    for (int a = 0; a < 3; a++)
        free(c->x[a]), free(c->sx[a]);
    free(c->off), free(c->perm), free(c->cell);
}

static void test_random_calls(void **state)
{
    (void)state;
    const char *env_it = getenv("PARTILE_FUZZ_ITERATIONS"), *env_seed = getenv("PARTILE_FUZZ_SEED");
    const int iterations = env_it ? atoi(env_it) : 3000;
    const uint64_t seed = env_seed ? strtoull(env_seed, NULL, 10) : 20261204;
    rng_state = seed * 2654435761ull + 1;
    printf("# %d iterations, seed %llu\n", iterations, (unsigned long long)seed);
    partile_context_t *ctx = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ctx), PARTILE_SUCCESS);
    for (int it = 0; it < iterations; it++) {
        fuzz_case c;
        memset(&c, 0, sizeof c);
        if (!draw_grid(&c.g, &c.cells))
            continue;
        draw_particles(&c);
        run_sort(ctx, &c, it);
        run_transfers(ctx, &c, it);
        run_mass(ctx, &c, it);
        run_pairs(ctx, &c, it);
        run_binning(ctx, &c, it);
        free_case(&c);
    }
    partile_context_destroy(ctx);
    printf("# %lld calls, %lld succeeded\n", total.calls, total.succeeded);
    /* the draws reach the successful paths too, not only the refusals */
    assert_true(total.succeeded > total.calls / 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_random_calls) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
