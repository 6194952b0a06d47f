/* Helpers shared by the sorting tests: random particles, staging through a
 * context, and an independent check that a result is the stable sort. */
#ifndef PARTILE_TESTS_SORT_UTIL_H
#define PARTILE_TESTS_SORT_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inside_as_float.h"
#include "partile/partile.h"

static inline uint64_t su_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline double su_uniform(uint64_t *s) { return (double)(su_next(s) >> 11) * 0x1p-53; }

static inline partile_grid_t su_grid(int dim, int64_t nx, int64_t ny, int64_t nz, int periodic)
{
    partile_grid_t g;
    memset(&g, 0, sizeof g);
    g.dim = dim;
    int64_t n[3] = { nx, ny, nz };
    for (int a = 0; a < 3; a++) {
        g.cells[a] = a < dim ? n[a] : 1;
        g.lower[a] = -1.5 + 0.25 * a;
        g.spacing[a] = 0.125 + 0.0625 * a; /* exact in binary */
        g.periodic[a] = periodic;
    }
    return g;
}

/* Host SoA positions uniformly inside the grid, in FP64 and in FP32. */
static inline double *su_positions(const partile_grid_t *g, size_t n, uint64_t *rng)
{
    double *x = malloc(3 * (n ? n : 1) * sizeof *x);
    for (int a = 0; a < g->dim; a++) {
        const double lo = g->lower[a], span = (double)g->cells[a] * g->spacing[a];
        for (size_t p = 0; p < n; p++)
            x[a * n + p] = su_inside_as_float(lo + su_uniform(rng) * span * (1.0 - 1e-12), lo,
                                              lo + span);
    }
    return x;
}

/* An independent statement of the binning rule, for checking. */
static inline int64_t su_cell(const partile_grid_t *g, const double *x, size_t n, size_t p)
{
    int64_t c = 0, stride = 1;
    for (int a = 0; a < g->dim; a++) {
        double f = floor((x[a * n + p] - g->lower[a]) / g->spacing[a]);
        int64_t i = (int64_t)f;
        if (g->periodic[a])
            i = ((i % g->cells[a]) + g->cells[a]) % g->cells[a];
        c += i * stride;
        stride *= g->cells[a];
    }
    return c;
}

/* 1 if (offsets, perm, sorted_cell) is the stable sort of cells[0..n). */
static inline int su_is_stable_sort(int64_t ncells, size_t n, const int64_t *cells,
                                    const int64_t *offsets, const int64_t *perm,
                                    const int64_t *sorted_cell)
{
    if (offsets[0] != 0 || offsets[ncells] != (int64_t)n)
        return 0;
    char *seen = calloc(n + 1, 1);
    int ok = 1;
    for (int64_t c = 0; c < ncells && ok; c++) {
        if (offsets[c] > offsets[c + 1])
            ok = 0;
        for (int64_t i = offsets[c]; i < offsets[c + 1] && ok; i++) {
            int64_t p = perm[i];
            if (p < 0 || p >= (int64_t)n || seen[p]++ || cells[p] != c ||
                (i > offsets[c] && perm[i - 1] >= p) || (sorted_cell && sorted_cell[i] != c))
                ok = 0;
        }
    }
    free(seen);
    return ok;
}

#endif
