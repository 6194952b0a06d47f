/* The reference backend's results do not depend on its OpenMP thread count
 * (issue 4: "independent of thread count and run"): every operation, run
 * with 1, 2, 3, 5 and 8 threads on the same input, gives the same bits,
 * and bad input names the same (lowest) particle. Skips without OpenMP. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "partile/partile.h"
#include "tests/sort_util.h"

static uint64_t rng;
static double uniform(void) { return su_uniform(&rng); }

/* Every output of one run, in the order taken. */
#define MAX_RESULTS 64
typedef struct results {
    int count;
    const char *what[MAX_RESULTS];
    void *data[MAX_RESULTS];
    size_t bytes[MAX_RESULTS];
} results;

static void keep(results *r, const char *what, const void *data, size_t bytes)
{
    assert_true(r->count < MAX_RESULTS);
    r->what[r->count] = what;
    r->data[r->count] = malloc(bytes + 1);
    memcpy(r->data[r->count], data, bytes);
    r->bytes[r->count++] = bytes;
}

static void release(results *r)
{
    for (int i = 0; i < r->count; i++)
        free(r->data[i]);
    r->count = 0;
}

/* A problem: a grid and n particles, several per cell on average, some
 * cells empty (the positions crowd towards the lower corner). */
typedef struct problem {
    partile_grid_t g;
    size_t n;
    double *x[3], *q, *w[3], *v;
} problem;

static problem make_problem(int dim, int periodic, int64_t cells, size_t n)
{
    problem P;
    memset(&P, 0, sizeof P);
    P.g.dim = dim;
    for (int a = 0; a < 3; a++) {
        P.g.cells[a] = a < dim ? cells : 1;
        P.g.lower[a] = -0.5 + 0.25 * a;
        P.g.spacing[a] = 0.125 + 0.03125 * a;
        P.g.periodic[a] = periodic;
    }
    P.n = n;
    for (int a = 0; a < 3; a++) {
        P.x[a] = malloc(n * 8), P.w[a] = malloc(n * 8);
        for (size_t i = 0; i < n; i++) {
            const double u = uniform();
            P.x[a][i] = P.g.lower[a] + u * u * (double)P.g.cells[a] * P.g.spacing[a];
            P.w[a][i] = 2.0 * uniform() - 1.0;
        }
    }
    P.q = malloc(n * 8), P.v = malloc(3 * n * 8);
    for (size_t i = 0; i < n; i++)
        P.q[i] = uniform() + 0.5;
    for (size_t i = 0; i < 3 * n; i++)
        P.v[i] = 2.0 * uniform() - 1.0;
    return P;
}

static void free_problem(problem *P)
{
    for (int a = 0; a < 3; a++)
        free(P->x[a]), free(P->w[a]);
    free(P->q), free(P->v);
}

/* Sorts P (positions, charges, ω, values) by cell; its cell list in off. */
static void sort_problem(partile_context_t *ctx, problem *P, int64_t *off, results *r)
{
    int64_t ncells, bad;
    assert_int_equal(partile_grid_cell_count(&P->g, &ncells), 0);
    int64_t *perm = malloc(P->n * 8), *cell = malloc(P->n * 8);
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { P->x[0], P->x[1], P->x[2] } };
    assert_int_equal(partile_sort(ctx, &P->g, P->n, &pos, off, perm, cell, &bad), 0);
    keep(r, "sort perm", perm, P->n * 8);
    keep(r, "sort offsets", off, (size_t)(ncells + 1) * 8);
    keep(r, "sort cells", cell, P->n * 8);
    double *tmp = malloc(3 * P->n * 8);
    for (int a = 0; a < 3; a++) {
        for (size_t i = 0; i < P->n; i++)
            tmp[i] = P->x[a][perm[i]];
        memcpy(P->x[a], tmp, P->n * 8);
        for (size_t i = 0; i < P->n; i++)
            tmp[i] = P->w[a][perm[i]];
        memcpy(P->w[a], tmp, P->n * 8);
    }
    for (size_t i = 0; i < P->n; i++)
        tmp[i] = P->q[perm[i]];
    memcpy(P->q, tmp, P->n * 8);
    for (size_t i = 0; i < P->n; i++)
        for (int j = 0; j < 3; j++)
            tmp[3 * i + j] = P->v[3 * perm[i] + j];
    memcpy(P->v, tmp, 3 * P->n * 8);
    free(tmp), free(perm), free(cell);
}

/* Every operation on one (sorted) problem, its outputs into r. */
static void run_all(partile_context_t *ctx, const problem *P, const int64_t *off, results *r)
{
    const size_t n = P->n;
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { P->x[0], P->x[1], P->x[2] } };
    partile_vectors_t omega = { PARTILE_DTYPE_FLOAT64, { P->w[0], P->w[1], P->w[2] } };
    int64_t bad = -1, *bins = malloc(n * 8);
    assert_int_equal(partile_bin(ctx, &P->g, n, &pos, bins, &bad), 0);
    keep(r, "bin", bins, n * 8);
    free(bins);
    /* deposit (both orders, and any order) and gather, every shape */
    double *sizes = malloc(n * 8);
    for (size_t i = 0; i < n; i++)
        sizes[i] = 0.5 * P->g.spacing[0] * (0.2 + 0.8 * (double)(i % 7) / 7.0);
    for (int shape = 0; shape < 4; shape++)
        for (int cent = 0; cent < 2; cent++) {
            partile_transfer_t t = { &P->g, (partile_shape_t)shape, (partile_centering_t)cent, 3,
                                     shape == PARTILE_SHAPE_OVERLAP ? sizes : NULL,
                                     PARTILE_ORDER_BY_POINT };
            int64_t pts[3], total;
            assert_int_equal(partile_field_shape(&P->g, t.centering, pts, &total), 0);
            double *field = calloc((size_t)total * 3, 8), *back = malloc(n * 3 * 8);
            assert_int_equal(partile_deposit(ctx, &t, n, &pos, P->v, off, field, &bad), 0);
            keep(r, "deposit by point", field, (size_t)total * 24);
            memset(field, 0, (size_t)total * 24);
            t.order = PARTILE_ORDER_BY_CELL;
            assert_int_equal(partile_deposit(ctx, &t, n, &pos, P->v, off, field, &bad), 0);
            keep(r, "deposit by cell", field, (size_t)total * 24);
            memset(field, 0, (size_t)total * 24);
            t.order = PARTILE_ORDER_BY_POINT;
            assert_int_equal(partile_deposit(ctx, &t, n, &pos, P->v, NULL, field, &bad), 0);
            keep(r, "deposit, any order", field, (size_t)total * 24);
            assert_int_equal(partile_gather(ctx, &t, n, &pos, field, back, &bad), 0);
            keep(r, "gather", back, n * 24);
            free(field), free(back);
        }
    free(sizes);
    /* mass matrix and its applies, CIC and TSC, scalar and tensor */
    for (int shape = 1; shape <= 2; shape++)
        for (int kind = 0; kind < 2; kind++) {
            partile_mass_params_t p;
            memset(&p, 0, sizeof p);
            p.grid = &P->g, p.shape = (partile_shape_t)shape, p.kind = (partile_mass_kind_t)kind;
            p.sigma = 0.75;
            partile_mass_layout_t L;
            if (partile_mass_layout(&P->g, p.shape, p.kind, &L) < 0)
                continue;
            const size_t xs = (size_t)L.points * (kind ? 3 : 1); /* x, y: 3 per point (tensor) */
            double *storage = malloc(L.entries * 8), *x = malloc(xs * 8), *y = malloc(xs * 8);
            for (size_t i = 0; i < xs; i++)
                x[i] = sin((double)i);
            const partile_vectors_t *om = kind ? &omega : NULL;
            if (partile_mass_assemble(ctx, &p, n, &pos, off, P->q, om, storage, &bad) == 0) {
                keep(r, "mass matrix", storage, L.entries * 8);
                assert_int_equal(partile_mass_apply_assembled(ctx, &p, storage, x, y), 0);
                keep(r, "assembled apply", y, xs * 8);
            }
            for (int order = 0; order < 2; order++) {
                p.order = (partile_deposit_order_t)order;
                if (partile_mass_apply_matfree(ctx, &p, n, &pos, off, P->q, om, x, y, &bad) == 0)
                    keep(r, "matrix-free apply", y, xs * 8);
            }
            free(storage), free(x), free(y);
        }
    /* pair interactions: LJ force and energy, SPH density, and the totals */
    const double rc = P->g.spacing[0];
    partile_pair_params_t lj = { PARTILE_PAIRS_LJ, rc, 1.0, 0.3 * rc, 1, 0.0, 0.0, 0 };
    partile_pair_params_t sph = { PARTILE_PAIRS_SPH_DENSITY, rc, 0.0, 0.0, 0, 0.5 * rc, 1.0, 0 };
    double *f[3], *e = malloc(n * 8), total;
    for (int a = 0; a < 3; a++)
        f[a] = malloc(n * 8);
    partile_vectors_t force = { PARTILE_DTYPE_FLOAT64, { f[0], f[1], f[2] } };
    if (partile_pairs(ctx, &P->g, &lj, n, &pos, off, &force, e, &total, &bad) == 0) {
        for (int a = 0; a < P->g.dim; a++)
            keep(r, "LJ force", f[a], n * 8);
        keep(r, "LJ energy", e, n * 8);
        keep(r, "LJ total", &total, 8);
    }
    if (partile_pairs(ctx, &P->g, &sph, n, &pos, off, NULL, e, &total, &bad) == 0) {
        keep(r, "SPH density", e, n * 8);
        keep(r, "SPH total", &total, 8);
    }
    for (int a = 0; a < 3; a++)
        free(f[a]);
    free(e);
}

/* Two bad particles, the lower one (out of the domain or NaN) named. */
static void run_bad(partile_context_t *ctx, problem *P, const int64_t *off, results *r)
{
    const size_t n = P->n, lo = n / 3, hi = 2 * n / 3;
    const double keep_lo = P->x[0][lo], keep_hi = P->x[1][hi];
    P->x[0][lo] = P->g.periodic[0] ? NAN : P->g.lower[0] - 1.0;
    P->x[1][hi] = NAN;
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { P->x[0], P->x[1], P->x[2] } };
    int64_t bad = -1, named[3], *bins = malloc(n * 8);
    assert_true(partile_bin(ctx, &P->g, n, &pos, bins, &bad) < 0);
    named[0] = bad;
    partile_transfer_t t = { &P->g, PARTILE_SHAPE_CIC, PARTILE_CENTERING_NODE, 3, NULL,
                             PARTILE_ORDER_BY_POINT };
    double *back = malloc(n * 24);
    assert_true(partile_gather(ctx, &t, n, &pos, P->v, back, &bad) < 0);
    named[1] = bad;
    partile_mass_params_t p;
    memset(&p, 0, sizeof p);
    p.grid = &P->g, p.shape = PARTILE_SHAPE_CIC, p.sigma = 1.0;
    partile_mass_layout_t L;
    assert_int_equal(partile_mass_layout(&P->g, p.shape, p.kind, &L), 0);
    double *storage = malloc(L.entries * 8);
    assert_true(partile_mass_assemble(ctx, &p, n, &pos, off, P->q, NULL, storage, &bad) < 0);
    named[2] = bad;
    for (int i = 0; i < 3; i++)
        assert_int_equal(named[i], (int64_t)lo);
    keep(r, "bad particles named", named, sizeof named);
    P->x[0][lo] = keep_lo, P->x[1][hi] = keep_hi;
    free(bins), free(back), free(storage);
}

static void test_thread_counts(void **state)
{
    (void)state;
#ifndef _OPENMP
    skip();
#else
    static const int threads[] = { 1, 2, 3, 5, 8 };
    const int saved = omp_get_max_threads();
    partile_context_t *ctx = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ctx), 0);
    const struct {
        int dim, periodic;
        int64_t cells;
        size_t n;
    } cases[] = { { 3, 1, 6, 3000 }, { 3, 0, 5, 1500 }, { 2, 1, 9, 2000 }, { 1, 0, 40, 500 } };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        results first = { 0 };
        for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
            omp_set_num_threads(threads[i]);
            rng = 0x9e3779b97f4a7c15ull + k; /* the same input for every count */
            problem P = make_problem(cases[k].dim, cases[k].periodic, cases[k].cells, cases[k].n);
            int64_t ncells;
            assert_int_equal(partile_grid_cell_count(&P.g, &ncells), 0);
            int64_t *off = malloc((size_t)(ncells + 1) * 8);
            results now = { 0 };
            sort_problem(ctx, &P, off, &now);
            run_all(ctx, &P, off, &now);
            run_bad(ctx, &P, off, &now);
            if (i == 0) {
                first = now;
            } else {
                assert_int_equal(now.count, first.count);
                for (int j = 0; j < now.count; j++)
                    if (now.bytes[j] != first.bytes[j] ||
                        memcmp(now.data[j], first.data[j], now.bytes[j]) != 0)
                        fail_msg("case %zu: %s with %d threads differs from 1 thread", k,
                                 now.what[j], threads[i]);
                release(&now);
            }
            free(off);
            free_problem(&P);
        }
        printf("# case %zu: %d results the same with 1, 2, 3, 5 and 8 threads\n", k, first.count);
        release(&first);
    }
    omp_set_num_threads(saved);
    partile_context_destroy(ctx);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_thread_counts) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
