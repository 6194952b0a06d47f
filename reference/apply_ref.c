/* Reference FP32 matrix-free apply: the FP64 order of include/partile/apply.h
 * in float arithmetic — gather with fmaf, V = q α X with fmaf, the deposit
 * in particle (sorted) order with fmaf, y = (float)σ·(0 + F). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/apply_math.h"
#include "common/error.h"
#include "common/grid_checks.h"
#include "reference/apply_ref.h"
#include "reference/deposit_ref.h"
#include "reference/mass_ref.h"
#include "reference/sort_ref.h"

int partile_mass_apply_matfree_f32_ref(const partile_mass_params_t *p, size_t n,
                                       const partile_vectors_t *pos, const int64_t *off,
                                       const float *q, const partile_vectors_t *omega,
                                       const float *x, float *y, int64_t *bad)
{
    const partile_grid_t *g = p->grid;
    partile_mass_layout_t L;
    partile_mass_layout(g, p->shape, p->kind, &L);
    const int m = p->kind == PARTILE_MASS_TENSOR ? 3 : 1;
    int64_t ncells;
    partile_count_grid_cells(g, &ncells);
    const size_t nn = n ? n : 1;
    float *V = malloc(nn * m * sizeof *V), *F = calloc((size_t)L.points * m, sizeof *F);
    float *w = malloc(nn * 3 * sizeof *w);
    double *w64 = NULL;
    int64_t *cell = malloc(nn * sizeof *cell);
    int st = 0;
    if (!V || !F || !w || !cell) {
        st = partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "FP32 matrix-free scratch");
        goto out;
    }
    /* the checks of the FP64 path, in its order: positions, ω, cell list */
    if (n > 0 && (st = partile_bin_ref(g, n, pos, cell, bad)) != 0)
        goto out;
    if (m == 3 && n > 0) {
        if (omega) {
            for (size_t i = 0; i < n; i++)
                for (int a = 0; a < 3; a++)
                    w[3 * i + a] = ((const float *)omega->axis[a])[i];
        } else {
            if (!(w64 = malloc(n * 3 * sizeof *w64))) {
                st = partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "FP32 matrix-free omega");
                goto out;
            }
            if ((st = partile_mass_omega_ref(p, n, pos, NULL, w64, bad)) != 0)
                goto out;
            for (size_t e = 0; e < 3 * n; e++)
                w[e] = (float)w64[e];
        }
        for (size_t i = 0; i < n; i++)
            if (!(isfinite(w[3 * i]) && isfinite(w[3 * i + 1]) && isfinite(w[3 * i + 2]))) {
                *bad = (int64_t)i;
                st = PARTILE_ERROR_NOT_FINITE;
                goto out;
            }
    }
    if ((st = partile_check_cell_list_ref(ncells, n, off, cell, bad)) != 0)
        goto out;
    /* gather and scale, per particle; each weight (float) of its FP64 value */
    const partile_transfer_t t = { g, p->shape, PARTILE_CENTERING_NODE, m, NULL,
                                   PARTILE_ORDER_BY_POINT };
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < (int64_t)n; i++) {
        int64_t pt[27];
        double wt[27];
        float X[3] = { 0.0f, 0.0f, 0.0f };
        const int ne = partile_stencil_entries_ref(&t, pos, i, pt, wt);
        for (int e = 0; e < ne; e++)
            for (int j = 0; j < m; j++)
                X[j] = fmaf((float)wt[e], x[pt[e] * m + j], X[j]);
        if (m == 1) {
            V[i] = q[i] * X[0];
            continue;
        }
        partile_apply_scale_f32(q[i], w + 3 * i, X, V + 3 * i);
    }
    /* deposit in particle order (sorted: cells increasing) */
    for (size_t i = 0; i < n; i++) {
        int64_t pt[27];
        double wt[27];
        const int ne = partile_stencil_entries_ref(&t, pos, (int64_t)i, pt, wt);
        for (int e = 0; e < ne; e++)
            for (int j = 0; j < m; j++)
                F[pt[e] * m + j] = fmaf((float)wt[e], V[i * m + j], F[pt[e] * m + j]);
    }
    const float sigma = (float)p->sigma;
    for (int64_t e = 0; e < L.points * m; e++)
        y[e] = sigma * (0.0f + F[e]);
out:
    free(V), free(F), free(w), free(w64), free(cell);
    return st;
}
