/* Reference pair interactions: for each particle, the 3^d cells around its
 * own in the order of include/partile/pairs.h. Particles are independent,
 * so OpenMP over them cannot change a result. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/binning.h"
#include "common/error.h"
#include "common/grid_checks.h"
#include "common/pairs_math.h"
#include "reference/pairs_ref.h"
#include "reference/sort_ref.h"

#define DEFINE_PAIRS(T, SUFFIX)                                                                 \
    static void pairs_##SUFFIX(const partile_grid_t *g, const partile_pair_params_t *pp, size_t n, \
                               const partile_vectors_t *pos, const int64_t *off, const int64_t *cell, \
                               partile_vectors_t *force, T *scalar)                            \
    {                                                                                           \
        const T *x[3] = { NULL, NULL, NULL };                                                   \
        T L[3] = { 0, 0, 0 };                                                                   \
        for (int a = 0; a < g->dim; a++) {                                                      \
            x[a] = (const T *)pos->axis[a];                                                     \
            L[a] = (T)((double)g->cells[a] * g->spacing[a]);                                    \
        }                                                                                       \
        const int lj = pp->interaction == PARTILE_PAIRS_LJ;                                     \
        const T rc = (T)pp->cutoff, rc2 = rc * rc, eps = (T)pp->epsilon;                        \
        const T sig = (T)pp->sigma, sig2 = sig * sig, h = (T)pp->h, m = (T)pp->mass;            \
        const T norm = (T)partile_spline_norm(g->dim, pp->h);                                   \
        T shift = 0, unused;                                                                    \
        if (lj && pp->shifted)                                                                  \
            partile_lj_##SUFFIX(rc2, eps, sig2, (T)0, &unused, &shift);                         \
        _Pragma("omp parallel for schedule(dynamic, 256)")                                     \
        for (int64_t i = 0; i < (int64_t)n; i++) {                                              \
            int64_t cc[3] = { 0, 0, 0 }, rest = cell[i];                                        \
            for (int a = 0; a < g->dim; a++) {                                                  \
                cc[a] = rest % g->cells[a];                                                     \
                rest /= g->cells[a];                                                            \
            }                                                                                   \
            T f[3] = { 0, 0, 0 };                                                               \
            T s = lj ? (T)0 : m * partile_spline_##SUFFIX((T)0, h, norm);                       \
            const int rz = g->dim > 2, ry = g->dim > 1;                                         \
            for (int dz = -rz; dz <= rz; dz++)                                                  \
                for (int dy = -ry; dy <= ry; dy++)                                              \
                    for (int dx = -1; dx <= 1; dx++) {                                          \
                        const int d3[3] = { dx, dy, dz };                                       \
                        int64_t nc = 0, stride = 1, skip = 0;                                   \
                        for (int a = 0; a < g->dim; a++) {                                      \
                            int64_t k = cc[a] + d3[a];                                          \
                            if (g->periodic[a])                                                 \
                                k = (k + g->cells[a]) % g->cells[a];                            \
                            else if (k < 0 || k >= g->cells[a])                                 \
                                skip = 1;                                                       \
                            nc += k * stride;                                                   \
                            stride *= g->cells[a];                                              \
                        }                                                                       \
                        if (skip)                                                               \
                            continue;                                                           \
                        for (int64_t j = off[nc]; j < off[nc + 1]; j++) {                       \
                            if (j == i)                                                         \
                                continue;                                                       \
                            T d[3] = { 0, 0, 0 };                                               \
                            for (int a = 0; a < g->dim; a++) {                                  \
                                d[a] = x[a][i] - x[a][j];                                       \
                                if (g->periodic[a])                                             \
                                    d[a] = partile_min_image_##SUFFIX(d[a], L[a]);              \
                            }                                                                   \
                            const T r2 = (d[0] * d[0] + d[1] * d[1]) + d[2] * d[2];             \
                            if (!(r2 < rc2))                                                    \
                                continue;                                                       \
                            if (lj) {                                                           \
                                T fs, e;                                                        \
                                partile_lj_##SUFFIX(r2, eps, sig2, shift, &fs, &e);             \
                                for (int a = 0; a < 3; a++)                                     \
                                    f[a] = f[a] + fs * d[a];                                    \
                                s = s + (T)0.5 * e;                                             \
                            } else {                                                            \
                                s = s + m * partile_spline_##SUFFIX((T)sqrt((double)r2), h, norm); \
                            }                                                                   \
                        }                                                                       \
                    }                                                                           \
            if (force)                                                                          \
                for (int a = 0; a < g->dim; a++)                                                \
                    ((T *)force->axis[a])[i] = f[a];                                            \
            if (scalar)                                                                         \
                scalar[i] = s;                                                                  \
        }                                                                                       \
    }

DEFINE_PAIRS(double, f64)
DEFINE_PAIRS(float, f32)

int partile_pairs_ref(const partile_grid_t *g, const partile_pair_params_t *pp, size_t n,
                      const partile_vectors_t *pos, const int64_t *off, partile_vectors_t *force,
                      void *scalar, int64_t *bad)
{
    int64_t ncells;
    partile_count_grid_cells(g, &ncells);
    int64_t *cell = malloc(n * sizeof *cell);
    if (!cell)
        return partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "pairs scratch");
    int st = partile_bin_ref(g, n, pos, cell, bad);
    if (st == 0)
        st = partile_check_cell_list_ref(ncells, n, off, cell, bad);
    if (st == 0) {
        if (pos->type == PARTILE_DTYPE_FLOAT32)
            pairs_f32(g, pp, n, pos, off, cell, force, (float *)scalar);
        else
            pairs_f64(g, pp, n, pos, off, cell, force, (double *)scalar);
    }
    free(cell);
    return st;
}
