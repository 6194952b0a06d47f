/* The ECSIM rotation tensor α, the mass-matrix stencil offsets, a
 * particle's support group and its point weights, shared by every backend
 * (DESIGN.md §4). */
#ifndef PARTILE_COMMON_MASS_MATH_H
#define PARTILE_COMMON_MASS_MATH_H

#include <math.h>

#include "common/division.h"
#include "common/portable.h"
#include "common/shape.h"

/* α = (I − C(ω) + ω ωᵀ) / (1 + ω·ω), C(ω)u = ω × u, row-major:
 * numerator_ij = (δ_ij + ω_i·ω_j) − C_ij, each divided by 1 + |ω|².
 * The divisor and the numerators in the reference's order of operations,
 * for both ways of dividing below. */
static inline PARTILE_HD double partile_alpha_divisor(const double w[3])
{
    return 1.0 + ((w[0] * w[0] + w[1] * w[1]) + w[2] * w[2]);
}

static inline PARTILE_HD double partile_alpha_numerator(const double w[3], int i, int j)
{
    /* C(ω) = [[0, −ω3, ω2], [ω3, 0, −ω1], [−ω2, ω1, 0]] */
    const double C[9] = { 0.0, -w[2], w[1], w[2], 0.0, -w[0], -w[1], w[0], 0.0 };
    return (i == j ? 1.0 : 0.0) + w[i] * w[j] - C[3 * i + j];
}

static inline PARTILE_HD void partile_alpha(const double w[3], double alpha[9])
{
    const double d = partile_alpha_divisor(w);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            alpha[3 * i + j] = partile_alpha_numerator(w, i, j) / d;
}

/* Whether ω component w keeps partile_alpha_by_reciprocal's quotients in
 * the range of partile_div_by_reciprocal_in_range: 0, or |w| in [2^-400,
 * 2^49]. Then 1 ≤ 1 + |ω|² < 2^100, every numerator is below 2^99 in
 * magnitude, and one that is not 0 is at least 2^-852 (a difference of
 * doubles of magnitude ≥ 2^-800, so multiples of 2^-852, or ±ω_k alone);
 * and no numerator is −0 (with contraction off, (δ + ω_i·ω_j) is +0 where
 * it is zero, and +0 − (±0) and x − x are +0). NaN and ±inf are out. */
static inline PARTILE_HD int partile_alpha_component_in_range(double w)
{
    const double m = fabs(w);
    return (m >= 0x1p-400 && m <= 0x1p49) | (m == 0.0);
}

/* partile_alpha's bits with one division: the nine quotients by the
 * reciprocal of 1 + |ω|² (common/division.h), behind one range test for the
 * whole particle rather than a branch per quotient; outside the range, the
 * divisions. For the GPU kernels, where each IEEE division is ~17
 * instructions around its own reciprocal and a branch to its slow path
 * (Nsight Compute, the CIC tensor tile kernel, bench/RESULTS.md
 * 2026-12-05). tests/test_division.c compares it with partile_alpha. */
static inline PARTILE_HD void partile_alpha_by_reciprocal(const double w[3], double alpha[9])
{
    if (!(partile_alpha_component_in_range(w[0]) & partile_alpha_component_in_range(w[1]) &
          partile_alpha_component_in_range(w[2]))) {
        partile_alpha(w, alpha);
        return;
    }
    const double d = partile_alpha_divisor(w), y = 1.0 / d;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            alpha[3 * i + j] =
                partile_div_by_reciprocal_in_range(partile_alpha_numerator(w, i, j), d, y);
}

/* The matrix-free apply's scale (include/partile/apply.h): V_i = fma chain
 * from 0 over j = 0, 1, 2 of (q·α_ij) X_j, α = partile_alpha(ω). */
static inline PARTILE_HD void partile_apply_scale(double q, const double w[3], const double X[3],
                                                  double V[3])
{
    double alpha[9];
    partile_alpha(w, alpha);
    for (int i = 0; i < 3; i++) {
        double acc = 0.0;
        for (int j = 0; j < 3; j++)
            acc = fma(q * alpha[3 * i + j], X[j], acc);
        V[i] = acc;
    }
}

/* Stencil side S = 2n + 1 (n = 1 CIC, 2 TSC), offsets per point stored:
 * (S^d + 1) / 2 (the diagonal and the forward half). */
static inline PARTILE_HD int partile_mass_order(int shape) { return shape == 2 ? 2 : 1; }

static inline PARTILE_HD int partile_mass_stored_offsets(int shape, int dim)
{
    const int S = 2 * partile_mass_order(shape) + 1;
    int t = 1;
    for (int a = 0; a < dim; a++)
        t *= S;
    return (t + 1) / 2;
}

/* Linear index k of offset o (each |o_a| <= n) minus the half: >= 0 means
 * forward (stored at point g, slot k'), < 0 backward. */
static inline PARTILE_HD int partile_mass_slot(int shape, int dim, const int o[3])
{
    const int n = partile_mass_order(shape), S = 2 * n + 1;
    int k = 0, stride = 1, total = 1;
    for (int a = 0; a < dim; a++) {
        k += (o[a] + n) * stride;
        stride *= S;
        total *= S;
    }
    return k - (total - 1) / 2;
}

/* The support group of a particle of cell `cell` with stencils st
 * (mass.h): for TSC, per axis the bit first − (j − 1), j the cell's index
 * on that axis (mod cells on a periodic axis: positions may lie boxes
 * away), bits x, y, z from the lowest; 0 for CIC. */
static inline PARTILE_HD int partile_mass_group(const partile_grid_t *g, int shape,
                                                const partile_stencil_1d st[3], int64_t cell)
{
    if (shape != PARTILE_SHAPE_TSC)
        return 0;
    int grp = 0;
    int64_t rest = cell;
    for (int a = 0; a < 3; a++) {
        if (a >= g->dim)
            break;
        const int64_t cells = g->cells[a], j = rest % cells;
        rest /= cells;
        int64_t b = st[a].first - (j - 1);
        if (g->periodic[a])
            b = ((b % cells) + cells) % cells;
        grp |= (int)b << a;
    }
    return grp;
}

/* The same TSC group bit on one axis from q = (x − lower)/h alone, for a
 * particle binned to its own cell: floor(q + 1/2) − floor(q) (the stencil
 * starts one point higher when q rounds up). Equal to partile_mass_group's
 * bit whenever a periodic axis has at least 2 cells (the layout asks 5);
 * the GPU staging uses it to skip the cell index (tests/test_mass.c). */
static inline PARTILE_HD int partile_mass_group_bit(double q)
{
    return (int)(floor(q + 0.5) - floor(q));
}

/* A particle's weights W on its group's npts = np1^dim points, x fastest:
 * the products (w_x·w_y)·w_z of its 1-D weights (unused axes: 1). */
static inline PARTILE_HD void partile_mass_point_weights(int dim, int np1, int npts,
                                                         const partile_stencil_1d st[3], double *W)
{
    PARTILE_UNROLL
    for (int a2 = 0; a2 < npts; a2++) {
        const int ia[3] = { a2 % np1, a2 / np1 % np1, a2 / (np1 * np1) };
        double wa[3] = { 1.0, 1.0, 1.0 };
        PARTILE_UNROLL
        for (int ax = 0; ax < 3; ax++)
            if (ax < dim)
                wa[ax] = st[ax].w[ia[ax]];
        W[a2] = (wa[0] * wa[1]) * wa[2];
    }
}

#endif
