/* Position → cell, shared by every backend (DESIGN.md §4: one formula,
 * compiled by gcc, nvcc and hipcc alike). See include/partile/sort.h for the
 * rules: s = (x − lower) / spacing in FP64, cell = floor(s), a non-periodic
 * axis covers [0, cells), a periodic one wraps (|s| < 2^52). */
#ifndef PARTILE_COMMON_BINNING_H
#define PARTILE_COMMON_BINNING_H

#include <math.h>
#include <stdint.h>

#include "common/portable.h"
#include "partile/sort.h"

enum {
    PARTILE_BIN_OK = 0,
    PARTILE_BIN_OUT_OF_DOMAIN = 1,
    PARTILE_BIN_NOT_FINITE = 2,
    PARTILE_BIN_NOT_SORTED = 3 /* used by the re-sort's input check */
};

/* partile_axis_cell with s = (x − lower) / spacing given (a caller that
 * also needs s divides once). */
static inline PARTILE_HD int partile_axis_cell_at(double x, double s, int64_t cells,
                                                  int periodic, int64_t *cell)
{
    if (!(x - x == 0.0)) /* NaN or ±inf */
        return PARTILE_BIN_NOT_FINITE;
    const double f = floor(s);
    if (periodic) {
        if (f >= 0.0 && f < (double)cells) { /* inside: no 64-bit modulo */
            *cell = (int64_t)f;
            return PARTILE_BIN_OK;
        }
        if (!(fabs(f) < 0x1p52))
            return PARTILE_BIN_OUT_OF_DOMAIN;
        int64_t i = (int64_t)f % cells;
        *cell = i < 0 ? i + cells : i;
        return PARTILE_BIN_OK;
    }
    if (!(f >= 0.0 && f < (double)cells))
        return PARTILE_BIN_OUT_OF_DOMAIN;
    *cell = (int64_t)f;
    return PARTILE_BIN_OK;
}

static inline PARTILE_HD int partile_axis_cell(double x, double lower, double spacing,
                                               int64_t cells, int periodic, int64_t *cell)
{
    return partile_axis_cell_at(x, (x - lower) / spacing, cells, periodic, cell);
}

/* Cell index c = i + nx·(j + ny·k) of the position x[0..dim). */
static inline PARTILE_HD int partile_cell_of(const partile_grid_t *g, const double *x,
                                             int64_t *cell)
{
    int64_t c = 0, stride = 1;
    for (int a = 0; a < 3; a++) { /* constant trip count: x stays in registers */
        if (a >= g->dim)
            break;
        int64_t i;
        int st = partile_axis_cell(x[a], g->lower[a], g->spacing[a], g->cells[a],
                                   g->periodic[a], &i);
        if (st)
            return st;
        c += i * stride;
        stride *= g->cells[a];
    }
    *cell = c;
    return PARTILE_BIN_OK;
}

/* Whether partile_axis_cell surely answers OK, decided without its
 * division: s' = (x − lower)·inv, inv = 1/spacing rounded, is within 4
 * units of the last place (relative) of s = (x − lower)/spacing rounded,
 * so s' in [2^-20, cells·(1 − 2^-20)] (non-periodic) or |s'| ≤ 2^50
 * (periodic) puts s, and so floor(s), inside too. 0 near an edge, for NaN
 * or ±inf, or where inv is not finite: ask partile_axis_cell. */
static inline PARTILE_HD int partile_axis_surely_inside(double x, double lower, double inv,
                                                        int64_t cells, int periodic)
{
    const double s = (x - lower) * inv;
    return periodic ? s >= -0x1p50 && s <= 0x1p50
                    : s >= 0x1p-20 && s <= (double)cells * (1.0 - 0x1p-20);
}

/* partile_cell_of's status alone, inv[a] = 1 / spacing[a]: OK where every
 * axis is surely inside, else partile_cell_of's answer. For checks that need
 * no cell (the GPU check pass without a cell list): a division costs about
 * ten FP64 instructions. */
static inline PARTILE_HD int partile_position_status(const partile_grid_t *g, const double *x,
                                                     const double inv[3])
{
    int sure = 1;
    for (int a = 0; a < 3; a++)
        if (a < g->dim)
            sure &= partile_axis_surely_inside(x[a], g->lower[a], inv[a], g->cells[a],
                                               g->periodic[a]);
    if (sure)
        return PARTILE_BIN_OK;
    int64_t cell;
    return partile_cell_of(g, x, &cell);
}

/* Component a of particle p, widened exactly to double. */
static inline PARTILE_HD double partile_vector_at(const partile_vectors_t *v, int a, int64_t p)
{
    return v->type == PARTILE_DTYPE_FLOAT32 ? (double)((const float *)v->axis[a])[p]
                                            : ((const double *)v->axis[a])[p];
}

#endif
