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

static inline PARTILE_HD int partile_axis_cell(double x, double lower, double spacing,
                                               int64_t cells, int periodic, int64_t *cell)
{
    if (!(x - x == 0.0)) /* NaN or ±inf */
        return PARTILE_BIN_NOT_FINITE;
    const double f = floor((x - lower) / spacing);
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

/* Component a of particle p, widened exactly to double. */
static inline PARTILE_HD double partile_vector_at(const partile_vectors_t *v, int a, int64_t p)
{
    return v->type == PARTILE_DTYPE_FLOAT32 ? (double)((const float *)v->axis[a])[p]
                                            : ((const double *)v->axis[a])[p];
}

#endif
