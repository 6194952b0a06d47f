/* Math of the mass-matrix application shared by every backend (DESIGN.md
 * §4): the FP32 rotation tensor, and a CIC/TSC particle's 1-D stencil kept
 * as one number (its fraction) from which each weight is recomputed by
 * partile_stencil_weight (common/shape.h), the formula partile_stencil_at
 * writes its weights by, so the same bits (tests/test_apply.c checks this).
 * A fused GPU apply stores the fraction instead of all weights. */
#ifndef PARTILE_COMMON_APPLY_MATH_H
#define PARTILE_COMMON_APPLY_MATH_H

#include <math.h>
#include <stdint.h>

#include "common/binning.h"
#include "common/portable.h"
#include "common/shape.h" /* partile_stencil_weight */
#include "partile/deposit.h"

/* partile_alpha in FP32, the same formula in float arithmetic. */
static inline PARTILE_HD void partile_alpha_f32(const float w[3], float alpha[9])
{
    const float w2 = (w[0] * w[0] + w[1] * w[1]) + w[2] * w[2];
    const float d = 1.0f + w2;
    const float C[9] = { 0.0f, -w[2], w[1], w[2], 0.0f, -w[0], -w[1], w[0], 0.0f };
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            alpha[3 * i + j] = ((i == j ? 1.0f : 0.0f) + w[i] * w[j] - C[3 * i + j]) / d;
}

/* partile_apply_scale (common/mass_math.h) in FP32: fmaf, partile_alpha_f32. */
static inline PARTILE_HD void partile_apply_scale_f32(float q, const float w[3], const float X[3],
                                                      float V[3])
{
    float alpha[9];
    partile_alpha_f32(w, alpha);
    for (int i = 0; i < 3; i++) {
        float acc = 0.0f;
        for (int j = 0; j < 3; j++)
            acc = fmaf(q * alpha[3 * i + j], X[j], acc);
        V[i] = acc;
    }
}

/* Node-centred CIC or TSC at s = (x − lower)/h: the unwrapped first point
 * and the fraction (CIC: ξ = s − floor(s); TSC: δ = s − floor(s + ½)). */
static inline PARTILE_HD double partile_stencil_frac(int shape, double s, int64_t *first)
{
    if (shape == PARTILE_SHAPE_CIC) {
        const double j = floor(s);
        *first = (int64_t)j;
        return s - j;
    }
    const double k = floor(s + 0.5);
    *first = (int64_t)k - 1;
    return s - k;
}

/* The first point relative to the cell floor(s) (the binning's cell on
 * that axis), from the fraction alone: CIC 0; TSC 0 if δ < 0 (s rounded
 * up), else −1. */
static inline PARTILE_HD int partile_stencil_first_offset(int shape, double f)
{
    return shape == PARTILE_SHAPE_CIC ? 0 : f < 0.0 ? 0 : -1;
}

/* The offset of a CIC/TSC stencil's first point (partile_stencil_frac's
 * `first`, at s = q or, cell-centred, q − ½) from the binning's cell
 * floor(q), q = (x − lower)/h: −1 or 0. Node-centred the fraction tells it
 * (partile_stencil_first_offset); cell-centred it takes both floors, since
 * s = q − ½ may round (e.g. TSC with q just below 0). q must be a valid
 * position's (|floor(q)| < 2^52). */
static inline PARTILE_HD int partile_first_cell_offset(int64_t first, double q)
{
    return (int)(first - (int64_t)floor(q));
}

/* CIC/TSC on axis a of grid g at coordinate x, node- or cell-centred (s =
 * q − ½ for cells, q = (x − lower)/h, as partile_stencil_at): the fraction
 * and the stored index of the first stencil point — on a periodic axis
 * from the binning's wrapped cell, so positions boxes away land as in
 * partile_point_index; else + 1 for the ghost layer. The GPU gather uses
 * it instead of partile_particle_stencil (no re-binning per point, no
 * 64-bit modulo); x must be valid (finite, inside a non-periodic axis). */
static inline PARTILE_HD double partile_grid_stencil_axis(const partile_grid_t *g, int a, int shape,
                                                          int centering, double x, int64_t *base)
{
    int64_t first, cell = 0;
    const double q = (x - g->lower[a]) / g->spacing[a];
    const double f =
        partile_stencil_frac(shape, centering == PARTILE_CENTERING_CELL ? q - 0.5 : q, &first);
    if (!g->periodic[a]) {
        *base = first + 1;
        return f;
    }
    partile_axis_cell(x, g->lower[a], g->spacing[a], g->cells[a], 1, &cell);
    *base = cell + (centering == PARTILE_CENTERING_CELL ? partile_first_cell_offset(first, q)
                                                        : partile_stencil_first_offset(shape, f));
    return f;
}

/* Stored index of stencil point k (0 … n) from that base: one wrap on a
 * periodic axis (base + k in [−1, cells + 1], cells >= 2). */
static inline PARTILE_HD int64_t partile_node_stencil_point(int64_t base, int k, int64_t cells,
                                                            int periodic)
{
    const int64_t i = base + k;
    return periodic ? (i < 0 ? i + cells : i >= cells ? i - cells : i) : i;
}

#endif
