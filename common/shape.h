/* Shape-function weights shared by every backend (DESIGN.md §4): the 1-D
 * stencil of a particle along one axis, and the cell window a grid point
 * receives contributions from. See include/partile/deposit.h. */
#ifndef PARTILE_COMMON_SHAPE_H
#define PARTILE_COMMON_SHAPE_H

#include <math.h>
#include <stdint.h>

#include "common/binning.h"
#include "common/portable.h"
#include "partile/deposit.h"

typedef struct partile_stencil_1d {
    int64_t first; /* unwrapped index of the first point */
    int count;     /* 1 … 3 */
    double w[3];
} partile_stencil_1d;

/* Weight k (0 … n) of a node-centred CIC or TSC stencil from its fraction f
 * (CIC: ξ = s − floor(s); TSC: δ = s − floor(s + ½)): the one statement of
 * these weights. partile_stencil_at writes every w[k] by it; a fused GPU
 * apply or gather keeps f alone and recomputes each weight by it, so the
 * bits agree. */
static inline PARTILE_HD double partile_stencil_weight(int shape, double f, int k)
{
    if (shape == PARTILE_SHAPE_CIC)
        return k == 0 ? 1.0 - f : f;
    if (k == 1)
        return 0.75 - f * f;
    const double a = k == 0 ? 0.5 - f : 0.5 + f;
    return 0.5 * (a * a);
}

/* The CIC weights at s (q, or q − ½ cell-centred) from its floor j, for
 * partile_stencil_at and the mass kernels, which take j from their cell
 * check and need no point index. */
static inline PARTILE_HD void partile_cic_weights(double s, double j, double w[2])
{
    const double xi = s - j;
    w[0] = partile_stencil_weight(PARTILE_SHAPE_CIC, xi, 0);
    w[1] = partile_stencil_weight(PARTILE_SHAPE_CIC, xi, 1);
}

/* q = (x − lower)/h; dd = d_p/h (OVERLAP only, 0 < dd ≤ 1). */
static inline PARTILE_HD void partile_stencil_at(int shape, int centering, double q, double dd,
                                                 partile_stencil_1d *st)
{
    const double s = centering == PARTILE_CENTERING_CELL ? q - 0.5 : q;
    if (shape == PARTILE_SHAPE_NGP) {
        st->first = (int64_t)floor(s + 0.5);
        st->count = 1;
        st->w[0] = 1.0;
    } else if (shape == PARTILE_SHAPE_CIC) {
        const double j = floor(s);
        st->first = (int64_t)j;
        st->count = 2;
        partile_cic_weights(s, j, st->w);
    } else if (shape == PARTILE_SHAPE_TSC) {
        const double k = floor(s + 0.5), d = s - k;
        st->first = (int64_t)k - 1;
        st->count = 3;
        for (int i = 0; i < 3; i++)
            st->w[i] = partile_stencil_weight(PARTILE_SHAPE_TSC, d, i);
    } else { /* OVERLAP: the cube's width split at the control-interval face */
        const double half = 0.5 * dd, lo = s - half, hi = s + half;
        const double k = floor(lo + 0.5), face = k + 0.5;
        st->first = (int64_t)k;
        if (hi <= face) {
            st->count = 1;
            st->w[0] = 1.0;
        } else {
            st->count = 2;
            st->w[0] = (face - lo) / dd;
            st->w[1] = 1.0 - st->w[0];
        }
    }
}

/* The cells c (along one axis) whose particles can reach point i lie in
 * [i + *lo, i + *hi]. */
static inline PARTILE_HD void partile_cell_window(int shape, int centering, int *lo, int *hi)
{
    if (centering == PARTILE_CENTERING_NODE) {
        *lo = shape == PARTILE_SHAPE_NGP || shape == PARTILE_SHAPE_CIC ? -1 : -2;
        *hi = shape == PARTILE_SHAPE_TSC ? 1 : 0;
    } else {
        /* s = q − ½ rounds to −½ for q just below 0 (a cell face, on a
         * periodic axis): the particle's cell is −1, wrapped, but NGP's point
         * is 0 and TSC's first point −1 (a weight-0 term; 0 · inf is NaN).
         * Hence NGP from u − 1 and TSC from u − 2. */
        *lo = shape == PARTILE_SHAPE_TSC ? -2 : -1;
        *hi = shape == PARTILE_SHAPE_NGP ? 0 : 1;
    }
}

/* Stored index of unwrapped point i along an axis with `cells` cells. */
static inline PARTILE_HD int64_t partile_point_index(int64_t i, int64_t cells, int periodic)
{
    if (!periodic)
        return i + 1; /* one ghost layer */
    int64_t r = i % cells;
    return r < 0 ? r + cells : r;
}

/* Points per axis. */
static inline PARTILE_HD int64_t partile_axis_points(int64_t cells, int periodic, int centering)
{
    return periodic ? cells : centering == PARTILE_CENTERING_NODE ? cells + 3 : cells + 2;
}

/* Points per axis of a checked grid (unused axes: 1), and their product
 * (cells < 2^52 in total, points at most 27 times that). */
static inline PARTILE_HD int64_t partile_grid_points(const partile_grid_t *g, int centering,
                                                     int64_t points[3])
{
    int64_t total = 1;
    for (int a = 0; a < 3; a++) {
        points[a] = a < g->dim ? partile_axis_points(g->cells[a], g->periodic[a], centering) : 1;
        total *= points[a];
    }
    return total;
}

/* A particle's stencils along all axes (unused axes: one point, weight 1),
 * and its cell; 0 or a PARTILE_BIN_* code. */
static inline PARTILE_HD int partile_particle_stencil(const partile_grid_t *g, int shape,
                                                      int centering, const double *x, double dp,
                                                      partile_stencil_1d st[3], int64_t *cell)
{
    int code = partile_cell_of(g, x, cell);
    if (code)
        return code;
    for (int a = 0; a < 3; a++) {
        if (a >= g->dim) {
            st[a].first = 0;
            st[a].count = 1;
            st[a].w[0] = 1.0;
            continue;
        }
        const double q = (x[a] - g->lower[a]) / g->spacing[a];
        partile_stencil_at(shape, centering, q, dp / g->spacing[a], &st[a]);
    }
    return 0;
}

#endif
