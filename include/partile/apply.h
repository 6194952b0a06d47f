/* partile — applying the particle mass matrix: y = M x.
 *
 * Matrix-free: gather x at each particle with the shape (B), scale by
 * q_p α_p (D; q_p for scalar), deposit back (Bᵀ), times σ — the
 * factorization of a matrix-free finite-element operator. Assembled: from
 * the canonical storage of partile_mass_assemble, no CSR needed. x and y
 * hold `components` values per grid point (1 scalar, 3 tensor), row-major,
 * on the point numbering of partile/deposit.h.
 *
 * Order (bitwise specification). Matrix-free: X_p = gather of x exactly as
 * partile_gather; V_p,i = fma chain over j = 0, 1, 2 of (q_p·α_p^{ij}) X_p,j
 * from 0 (scalar: q_p·X_p); F = the sorted-path deposit of V into a zero
 * field (partile_deposit with the cell list, in params->order: BY_POINT,
 * the default, or BY_CELL — deposit.h; the two round differently); y = σ·F.
 * The FP32 apply has the point order only (BY_CELL: PARTILE_ERROR_UNSUPPORTED).
 * Assembled: y_g,i = fma
 * chain from 0 over the full stencil of g (offsets z outermost, x innermost,
 * each from −n to n, neighbours outside a non-periodic grid skipped) and
 * j = 0 … (components − 1) of M^{ij}_{g,g+o} x_{g+o,j}. The two agree to
 * rounding, not bit for bit.
 *
 * Which is faster. The assembled apply costs the same at every density;
 * the matrix-free one grows with the particles. Measured on an H200 (64³
 * periodic grid, FP64, CUDA backend, 2026-12-01, bench/RESULTS.md):
 *  - assembled: 7.9–8.9 (CIC) and 2.0 (TSC) GDofs/s scalar, 5.1–5.2 and
 *    0.95 tensor;
 *  - matrix-free, 1 / 2 / 4 particles per cell: CIC scalar 3.2 / 2.1 /
 *    1.25, TSC scalar 0.62 / 0.40 / 0.25, CIC tensor 7.5 / 4.7 / 2.65, TSC
 *    tensor 1.7 / 1.06 / 0.62.
 * So for scalars the assembled apply is the faster at every density, and
 * for tensors from about 2 particles per cell. Assembling costs time too
 * (at 1 particle per cell 0.5 ms CIC scalar up to 270 ms TSC tensor, more
 * with more particles): it pays after t_assembly / (t_matrix-free −
 * t_assembled) applications of one matrix, e.g. 9 (CIC scalar) and 117
 * (TSC scalar) at 1 particle per cell, 4 and 40 at 4. bench/bench_apply
 * prints that count per shape, kind and density for the device at hand.
 * The by-cell order (params->order) makes the CIC matrix-free apply on 3-D
 * grids faster on GPUs (the by-cell deposit's two passes; bench/RESULTS.md);
 * TSC and 1-D/2-D grids by cell take a slow generic kernel. */
#ifndef PARTILE_APPLY_H
#define PARTILE_APPLY_H

#include <stddef.h>
#include <stdint.h>

#include "partile/mass.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Matrix-free y = M x (y overwritten). params->accumulate is ignored;
 * params->bfield / beta_over_c work as for assembly. */
int partile_mass_apply_matfree(partile_context_t *ctx, const partile_mass_params_t *params,
                               size_t n, const partile_vectors_t *pos, const int64_t *cell_offsets,
                               const double *q, const partile_vectors_t *omega, const double *x,
                               double *y, int64_t *bad_particle);

/* Assembled y = M x from canonical storage (y overwritten). Only the grid,
 * shape and kind of params are used. */
int partile_mass_apply_assembled(partile_context_t *ctx, const partile_mass_params_t *params,
                                 const double *storage, const double *x, double *y);

/* FP32 matrix-free y = M x: q, x and y are float; positions FLOAT64 or
 * FLOAT32; ω (tensor) three FLOAT32 arrays, or NULL for ω = (float) of the
 * FP64 (β/c)·B of partile_mass_apply_matfree. Order: that of the FP64 path
 * in float arithmetic (fmaf), each weight W_gp = (float) of its FP64 value;
 * α_p from partile_alpha_f32 (common/apply_math.h); y = (float)σ·F. Every
 * backend gives the same bits; against the FP64 result, relative error of
 * order 1e-6 (tests: below 1e-5 in the 2-norm). */
int partile_mass_apply_matfree_f32(partile_context_t *ctx, const partile_mass_params_t *params,
                                   size_t n, const partile_vectors_t *pos,
                                   const int64_t *cell_offsets, const float *q,
                                   const partile_vectors_t *omega, const float *x, float *y,
                                   int64_t *bad_particle);

#ifdef __cplusplus
}
#endif
#endif
