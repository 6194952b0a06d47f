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
 * The FP32 apply has the point order only (BY_CELL: PARTILE_ERROR_UNSUPPORTED;
 * an order that is neither, as in FP64: PARTILE_ERROR_INVALID_ARGUMENT).
 * Assembled: y_g,i = fma chain from 0 over the full stencil of g (offsets z
 * outermost, x innermost,
 * each from −n to n, neighbours outside a non-periodic grid skipped) and
 * j = 0 … (components − 1) of M^{ij}_{g,g+o} x_{g+o,j}. The two agree to
 * rounding, not bit for bit.
 *
 * Which is faster. The assembled apply costs the same at every density;
 * the matrix-free one grows with the particles. Measured on an H200 (64³
 * periodic grid, FP64, CUDA backend, 2026-12-03, bench/RESULTS.md):
 *  - assembled: 7.7–8.5 (CIC) and 2.0 (TSC) GDofs/s scalar, 5.1–5.2 and
 *    0.96 tensor;
 *  - matrix-free, point order, 1 / 4 / 16 particles per cell: CIC scalar
 *    3.8 / 1.9 / 0.74, TSC scalar 0.71 / 0.32 / 0.12, CIC tensor 10.2 /
 *    4.7 / 1.46, TSC tensor 1.85 / 0.77 / 0.23; CIC since 2026-12-04 (int
 *    indices, one division per axis): scalar 4.4 / 2.3 at 1 / 4, tensor
 *    10.9–11.1 / 4.9–5.0;
 *  - matrix-free by cell (params->order; node-centred CIC in 3-D;
 *    2026-12-04): scalar 3.9–4.4 / 3.0–3.2 / 1.67, tensor 8.4–9.0 /
 *    5.2–5.3 / 2.6 (with ω = β·B: 8.5 / 5.2 / 2.6), and 2.6× (tensor) to
 *    3.1× (scalar) the point order at 64 per cell. Below about 2 per cell
 *    (scalar) or 3 (tensor) the point order is the faster; TSC and 1-D/2-D
 *    grids by cell take a slow generic kernel.
 * So for scalars the assembled apply is the faster at every density, and
 * for tensors from about 4 particles per cell (CIC) or 3 (TSC). Assembling
 * costs time too (at 1 particle per cell 0.3 ms CIC scalar up to 265 ms
 * TSC tensor, more with more particles): it pays after t_assembly /
 * (t_matrix-free − t_assembled) applications of one matrix, e.g. 8 (CIC
 * scalar) and 114 (TSC scalar) at 1 particle per cell, 5 and 45 at 4, in
 * the point order. bench/bench_apply prints that count per shape, kind and
 * density for the device at hand. */
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
