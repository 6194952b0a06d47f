/* Sorting scenarios run on one backend (staged through its memory) and
 * checked two ways: against the independent stable-sort check, and — for a
 * GPU backend — bit for bit against the reference backend. Included by
 * test_sort.c (reference) and test_sort_gpu.c (cuda, hip). */
#ifndef PARTILE_TESTS_SORT_SCENARIOS_H
#define PARTILE_TESTS_SORT_SCENARIOS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-function" /* each test uses some scenarios */
#endif

#include "tests/sort_util.h"

static void *stage(partile_context_t *ctx, const void *host, size_t bytes)
{
    void *d = NULL;
    assert_int_equal(partile_malloc(ctx, bytes ? bytes : 8, &d), 0);
    if (host && bytes)
        assert_int_equal(partile_memcpy(ctx, d, host, bytes, PARTILE_COPY_HOST_TO_DEVICE), 0);
    else
        assert_int_equal(partile_memset(ctx, d, 0xab, bytes ? bytes : 8), 0); /* poison */
    return d;
}

static void fetch(partile_context_t *ctx, void *host, const void *dev, size_t bytes)
{
    if (bytes)
        assert_int_equal(partile_memcpy(ctx, host, dev, bytes, PARTILE_COPY_DEVICE_TO_HOST), 0);
}

typedef struct sort_result {
    int status;
    int64_t bad;
    int64_t *offsets, *perm, *cell; /* host copies */
    char detail[512];               /* partile_last_error_detail() right after the call */
} sort_result;

static void free_result(sort_result *r)
{
    free(r->offsets);
    free(r->perm);
    free(r->cell);
}

/* Positions x (host SoA, dim × n doubles) sorted on ctx; FP32 if f32. When
 * old_* are given, partile_resort is used instead. */
static sort_result run_sort(partile_context_t *ctx, const partile_grid_t *g, size_t n,
                            const double *x, int f32, const int64_t *old_offsets,
                            const int64_t *old_cell)
{
    int64_t ncells;
    assert_int_equal(partile_grid_cell_count(g, &ncells), 0);
    const size_t esz = f32 ? 4 : 8;
    partile_vectors_t pos = { f32 ? PARTILE_DTYPE_FLOAT32 : PARTILE_DTYPE_FLOAT64, { 0 } };
    void *dev_axis[3] = { 0 };
    for (int a = 0; a < g->dim; a++) {
        if (f32) {
            float *tmp = malloc((n ? n : 1) * sizeof *tmp);
            for (size_t p = 0; p < n; p++)
                tmp[p] = (float)x[a * n + p];
            dev_axis[a] = stage(ctx, tmp, n * esz);
            free(tmp);
        } else {
            dev_axis[a] = stage(ctx, x + a * n, n * esz);
        }
        pos.axis[a] = dev_axis[a];
    }
    const size_t ob = (size_t)(ncells + 1) * 8, pb = n * 8;
    int64_t *d_off = stage(ctx, NULL, ob), *d_perm = stage(ctx, NULL, pb),
            *d_cell = stage(ctx, NULL, pb);
    int64_t *d_old_off = NULL, *d_old_cell = NULL;
    sort_result r = { 0, -1, malloc(ob), malloc(pb + 8), malloc(pb + 8), "" };
    if (old_offsets) {
        d_old_off = stage(ctx, old_offsets, ob);
        d_old_cell = stage(ctx, old_cell, pb);
        r.status = partile_resort(ctx, g, n, &pos, d_old_off, d_old_cell, d_off, d_perm, d_cell,
                                  &r.bad);
    } else {
        r.status = partile_sort(ctx, g, n, &pos, d_off, d_perm, d_cell, &r.bad);
    }
    snprintf(r.detail, sizeof r.detail, "%s", partile_last_error_detail());
    fetch(ctx, r.offsets, d_off, ob);
    fetch(ctx, r.perm, d_perm, pb);
    fetch(ctx, r.cell, d_cell, pb);
    for (int a = 0; a < g->dim; a++)
        partile_free(ctx, dev_axis[a]);
    partile_free(ctx, d_off);
    partile_free(ctx, d_perm);
    partile_free(ctx, d_cell);
    partile_free(ctx, d_old_off);
    partile_free(ctx, d_old_cell);
    return r;
}

/* Checks r is the stable sort of x's cells and, for a GPU backend, equals
 * the reference bit for bit. */
static void expect_sorted(partile_context_t *ctx, const partile_grid_t *g, size_t n,
                          const double *x, int f32, const sort_result *r)
{
    int64_t ncells;
    partile_grid_cell_count(g, &ncells);
    assert_int_equal(r->status, 0);
    int64_t *cells = malloc((n ? n : 1) * sizeof *cells);
    for (size_t p = 0; p < n; p++) {
        if (f32) { /* the cell of the float-rounded position */
            double xr[9];
            size_t one = 1;
            for (int a = 0; a < g->dim; a++)
                xr[a] = (double)(float)x[a * n + p];
            cells[p] = su_cell(g, xr, one, 0);
        } else {
            cells[p] = su_cell(g, x, n, p);
        }
    }
    assert_true(su_is_stable_sort(ncells, n, cells, r->offsets, r->perm, r->cell));
    if (strcmp(partile_context_backend(ctx), "reference") != 0) {
        partile_context_t *ref = NULL;
        assert_int_equal(partile_context_create("reference", 0, &ref), 0);
        sort_result want = run_sort(ref, g, n, x, f32, NULL, NULL);
        assert_memory_equal(want.offsets, r->offsets, (size_t)(ncells + 1) * 8);
        if (n) {
            assert_memory_equal(want.perm, r->perm, n * 8);
            assert_memory_equal(want.cell, r->cell, n * 8);
        }
        free_result(&want);
        partile_context_destroy(ref);
    }
    free(cells);
}

static void scenario_random(partile_context_t *ctx, uint64_t seed)
{
    const int64_t shapes[][4] = {
        { 1, 37, 1, 1 }, { 2, 13, 7, 1 }, { 3, 5, 6, 7 }, { 3, 16, 16, 16 }, { 1, 1, 1, 1 },
    };
    const size_t counts[] = { 1, 3, 100, 1000, 20011 };
    uint64_t rng = seed;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
            for (int f32 = 0; f32 < 2; f32++)
                for (int periodic = 0; periodic < 2; periodic++) {
                    partile_grid_t g = su_grid((int)shapes[s][0], shapes[s][1], shapes[s][2],
                                               shapes[s][3], periodic);
                    double *x = su_positions(&g, counts[c], &rng);
                    sort_result r = run_sort(ctx, &g, counts[c], x, f32, NULL, NULL);
                    expect_sorted(ctx, &g, counts[c], x, f32, &r);
                    free_result(&r);
                    free(x);
                }
}

/* Many particles in few cells (long segments), everything in one cell,
 * empty cells, and periodic positions far outside the box. */
static void scenario_crowded(partile_context_t *ctx, uint64_t seed)
{
    uint64_t rng = seed;
    partile_grid_t g = su_grid(3, 4, 3, 2, 0);
    size_t n = 70001;
    double *x = su_positions(&g, n, &rng);
    sort_result r = run_sort(ctx, &g, n, x, 0, NULL, NULL);
    expect_sorted(ctx, &g, n, x, 0, &r);
    free_result(&r);
    /* all in cell (2, 1, 1) */
    for (int a = 0; a < 3; a++)
        for (size_t p = 0; p < n; p++)
            x[a * n + p] = g.lower[a] + g.spacing[a] * ((a == 0 ? 2 : 1) + 0.5 * su_uniform(&rng));
    r = run_sort(ctx, &g, n, x, 0, NULL, NULL);
    expect_sorted(ctx, &g, n, x, 0, &r);
    assert_true(r.offsets[2 + 4 * (1 + 3 * 1)] == 0 && r.offsets[3 + 4 * (1 + 3 * 1)] == (int64_t)n);
    free_result(&r);
    free(x);
    /* 50 particles on 10^3 cells: mostly empty cells */
    g = su_grid(3, 10, 10, 10, 0);
    x = su_positions(&g, 50, &rng);
    r = run_sort(ctx, &g, 50, x, 0, NULL, NULL);
    expect_sorted(ctx, &g, 50, x, 0, &r);
    free_result(&r);
    free(x);
    /* periodic: positions up to 1000 boxes away wrap */
    g = su_grid(2, 9, 4, 1, 1);
    n = 5000;
    x = su_positions(&g, n, &rng);
    for (size_t p = 0; p < n; p++) {
        x[p] += (double)((int64_t)(su_next(&rng) % 2001) - 1000) * 9 * g.spacing[0];
        x[n + p] -= (double)(su_next(&rng) % 7) * 4 * g.spacing[1];
    }
    r = run_sort(ctx, &g, n, x, 0, NULL, NULL);
    expect_sorted(ctx, &g, n, x, 0, &r);
    free_result(&r);
    free(x);
}

static void scenario_zero_particles(partile_context_t *ctx)
{
    partile_grid_t g = su_grid(2, 3, 4, 1, 0);
    sort_result r = run_sort(ctx, &g, 0, NULL, 0, NULL, NULL);
    assert_int_equal(r.status, 0);
    for (int c = 0; c <= 12; c++)
        assert_int_equal(r.offsets[c], 0);
    free_result(&r);
}

/* Bad positions: an error naming the first offender, outputs untouched. */
static void scenario_bad_positions(partile_context_t *ctx, uint64_t seed)
{
    uint64_t rng = seed;
    partile_grid_t g = su_grid(3, 6, 5, 4, 0);
    const size_t n = 10007;
    const double bad_values[] = { NAN, INFINITY, -INFINITY, -1e30, 1e30 }; /* finite in FP32 too */
    const int expect[] = { PARTILE_ERROR_NOT_FINITE, PARTILE_ERROR_NOT_FINITE,
                           PARTILE_ERROR_NOT_FINITE, PARTILE_ERROR_OUT_OF_DOMAIN,
                           PARTILE_ERROR_OUT_OF_DOMAIN };
    for (int k = 0; k < 5; k++) {
        double *x = su_positions(&g, n, &rng);
        /* the first offender at 4321 (axis k % 3); a later one at 9000 */
        x[(k % 3) * n + 4321] = bad_values[k];
        x[((k + 1) % 3) * n + 9000] = NAN;
        for (int f32 = 0; f32 < 2; f32++) {
            sort_result r = run_sort(ctx, &g, n, x, f32, NULL, NULL);
            assert_int_equal(r.status, expect[k]);
            assert_int_equal(r.bad, 4321);
            assert_non_null(strstr(r.detail, "4321"));
            /* outputs still hold the poison written by stage() */
            for (size_t i = 0; i < n; i++) {
                assert_true((uint64_t)r.perm[i] == 0xababababababababull);
                assert_true((uint64_t)r.cell[i] == 0xababababababababull);
            }
            assert_true((uint64_t)r.offsets[0] == 0xababababababababull);
            free_result(&r);
        }
        free(x);
    }
    /* just past the upper face of a non-periodic axis is outside */
    double *x = su_positions(&g, n, &rng);
    x[2 * n + 17] = g.lower[2] + (double)g.cells[2] * g.spacing[2] * (1 + 1e-15);
    sort_result r = run_sort(ctx, &g, n, x, 0, NULL, NULL);
    assert_int_equal(r.status, PARTILE_ERROR_OUT_OF_DOMAIN);
    assert_int_equal(r.bad, 17);
    free_result(&r);
    free(x);
}

/* Re-sort after a small move equals the full sort; an old cell list that
 * does not match the particle order is refused. */
static void scenario_resort(partile_context_t *ctx, uint64_t seed)
{
    uint64_t rng = seed;
    const double moves[] = { 0.0, 0.1, 0.5, 2.5 };
    /* dense grids (~55 particles per cell) and sparse ones (< 1): a GPU
     * takes different paths for the two */
    const int64_t dense[3] = { 12, 9, 5 }, /* 1-D: 12 cells, 2-D: 108, 3-D: 540 */ sparse[3][3] = { { 50000, 1, 1 }, { 300, 200, 1 },
                                                            { 40, 40, 30 } };
    for (int dim = 1; dim <= 3; dim++)
        for (int sp = 0; sp < 2; sp++)
        for (int periodic = 0; periodic < 2; periodic++)
            for (size_t m = 0; m < sizeof moves / sizeof moves[0]; m++) {
                const int64_t *nc = sp ? sparse[dim - 1] : dense;
                partile_grid_t g = su_grid(dim, nc[0], nc[1], nc[2], periodic);
                int64_t ncells;
                partile_grid_cell_count(&g, &ncells);
                size_t n = 30011;
                double *x = su_positions(&g, n, &rng);
                sort_result first = run_sort(ctx, &g, n, x, 0, NULL, NULL);
                assert_int_equal(first.status, 0);
                /* the caller reorders its particles, then moves them */
                double *y = malloc(3 * n * sizeof *y);
                for (int a = 0; a < dim; a++)
                    for (size_t i = 0; i < n; i++) {
                        double step = (2 * su_uniform(&rng) - 1) * moves[m] * g.spacing[a];
                        double v = x[a * n + first.perm[i]] + step;
                        double lo = g.lower[a], hi = lo + (double)g.cells[a] * g.spacing[a];
                        if (!periodic) /* reflect into the box */
                            v = v < lo ? lo + (lo - v) : v >= hi ? hi - (v - hi) - 1e-9 : v;
                        y[a * n + i] = v;
                    }
                sort_result re = run_sort(ctx, &g, n, y, 0, first.offsets, first.cell);
                expect_sorted(ctx, &g, n, y, 0, &re);
                sort_result full = run_sort(ctx, &g, n, y, 0, NULL, NULL);
                assert_memory_equal(full.offsets, re.offsets, (size_t)(ncells + 1) * 8);
                assert_memory_equal(full.perm, re.perm, n * 8);
                assert_memory_equal(full.cell, re.cell, n * 8);
                free_result(&full);
                free_result(&re);
                /* a wrong old list: two particles' cells swapped */
                if (ncells > 1 && m == 1) {
                    int64_t *wrong = malloc(n * 8);
                    memcpy(wrong, first.cell, n * 8);
                    size_t i = 0;
                    while (i + 1 < n && wrong[i] == wrong[n - 1])
                        i++;
                    int64_t t = wrong[i];
                    wrong[i] = wrong[n - 1];
                    wrong[n - 1] = t;
                    sort_result bad = run_sort(ctx, &g, n, y, 0, first.offsets, wrong);
                    assert_int_equal(bad.status, PARTILE_ERROR_NOT_SORTED);
                    assert_int_equal(bad.bad, (int64_t)i);
                    assert_true((uint64_t)bad.perm[0] == 0xababababababababull);
                    free_result(&bad);
                    free(wrong);
                }
                free_result(&first);
                free(x);
                free(y);
            }
}

/* partile_permute on all element types, with library and caller scratch. */
static void scenario_permute(partile_context_t *ctx, uint64_t seed)
{
    uint64_t rng = seed;
    const size_t n = 12345;
    int64_t *perm = malloc(n * 8);
    for (size_t i = 0; i < n; i++)
        perm[i] = (int64_t)i;
    for (size_t i = n - 1; i > 0; i--) { /* Fisher–Yates */
        size_t j = su_next(&rng) % (i + 1);
        int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    double *f64 = malloc(n * 8);
    float *f32 = malloc(n * 4);
    int32_t *i32 = malloc(n * 4);
    int64_t *i64 = malloc(n * 8);
    for (size_t i = 0; i < n; i++) {
        f64[i] = su_uniform(&rng);
        f32[i] = (float)i * 0.5f;
        i32[i] = (int32_t)i - 7;
        i64[i] = (int64_t)i << 33;
    }
    void *d[4] = { stage(ctx, f64, n * 8), stage(ctx, f32, n * 4), stage(ctx, i32, n * 4),
                   stage(ctx, i64, n * 8) };
    int64_t *dperm = stage(ctx, perm, n * 8);
    partile_array_t arrays[4] = { { d[0], PARTILE_DTYPE_FLOAT64 }, { d[1], PARTILE_DTYPE_FLOAT32 },
                                  { d[2], PARTILE_DTYPE_INT32 }, { d[3], PARTILE_DTYPE_INT64 } };
    assert_int_equal(partile_permute(ctx, n, dperm, 2, arrays, NULL, 0), 0);
    void *scratch = stage(ctx, NULL, n * 8);
    assert_int_equal(partile_permute(ctx, n, dperm, 2, arrays + 2, scratch, n * 8), 0);
    assert_int_equal(partile_permute(ctx, n, dperm, 1, arrays, scratch, n * 8 - 1),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    double *g64 = malloc(n * 8);
    float *g32 = malloc(n * 4);
    int32_t *gi32 = malloc(n * 4);
    int64_t *gi64 = malloc(n * 8);
    fetch(ctx, g64, d[0], n * 8);
    fetch(ctx, g32, d[1], n * 4);
    fetch(ctx, gi32, d[2], n * 4);
    fetch(ctx, gi64, d[3], n * 8);
    for (size_t i = 0; i < n; i++) {
        assert_true(g64[i] == f64[perm[i]]);
        assert_true(g32[i] == f32[perm[i]]);
        assert_int_equal(gi32[i], i32[perm[i]]);
        assert_int_equal(gi64[i], i64[perm[i]]);
    }
    /* not a permutation: a repeat, then an out-of-range entry; nothing moves */
    int64_t keep = perm[99];
    perm[99] = perm[5];
    partile_memcpy(ctx, dperm, perm, n * 8, PARTILE_COPY_HOST_TO_DEVICE);
    assert_int_equal(partile_permute(ctx, n, dperm, 4, arrays, NULL, 0),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    perm[99] = (int64_t)n;
    partile_memcpy(ctx, dperm, perm, n * 8, PARTILE_COPY_HOST_TO_DEVICE);
    assert_int_equal(partile_permute(ctx, n, dperm, 4, arrays, NULL, 0),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(partile_last_error_detail(), "99"));
    perm[99] = keep;
    fetch(ctx, g64, d[0], n * 8);
    for (size_t i = 0; i < n; i++)
        assert_true(g64[i] == f64[perm[i]]);
    for (int k = 0; k < 4; k++)
        partile_free(ctx, d[k]);
    partile_free(ctx, dperm);
    partile_free(ctx, scratch);
    free(perm), free(f64), free(f32), free(i32), free(i64);
    free(g64), free(g32), free(gi32), free(gi64);
}

#endif
