/* partile — the particle mass matrix of implicit PIC (ECSIM) and MPM.
 *
 *   M^{ij}_{gg'} = σ Σ_p q_p W_gp W_g'p α_p^{ij},
 *   α_p = (I − C(ω_p) + ω_p ω_pᵀ) / (1 + ω_p·ω_p),  C(ω)u = ω × u,
 *
 * (tensor kind, 3×3 blocks; α_p u solves v − v × ω_p = u), or the scalar
 * kind σ Σ_p q_p W_gp W_g'p (MPM, α = 1). Shapes CIC and TSC on node-centred
 * points: the numbering of include/partile/deposit.h (x fastest; periodic
 * axes: `cells` points; non-periodic axes: one ghost layer, cells + 3
 * points, point i stored at i + 1). A periodic axis needs at least 2n + 1
 * cells (3 for CIC, 5 for TSC) so that stencil offsets do not alias.
 *
 * Canonical storage (per point, per stencil offset, per component). The
 * stencil offsets o = (ox, oy, oz) ∈ [−n, n]^d of a shape of order n are
 * numbered k = (ox + n) + S·((oy + n) + S·(oz + n)), S = 2n + 1, and only
 * the forward half k ≥ (S^d − 1)/2 is stored (the diagonal first): 14
 * offsets for CIC in 3-D, 63 for TSC; 2 and 3 for CIC and TSC in 1-D; 5 and
 * 13 in 2-D. Entry [g][k'][c] (k' = k − (S^d − 1)/2, c = 0 for scalar or
 * c = 3i + j for tensor) holds the coupling of point g with point g + o
 * (wrapped, or outside a non-periodic grid: then 0). Each component block
 * is symmetric in (g, g'), so the backward offsets are the same values:
 * M^{ij}_{g+o, g} = M^{ij}_{g, g+o}.
 *
 * Order (the bitwise specification, matching a tile engine: DESIGN.md §2).
 * Particles must be sorted by cell (the cell list of partile_sort). A cell's
 * particles form support groups: for CIC one group; for TSC, per axis the
 * particle's first stencil point is j − 1 or j (j its cell), giving a bit
 * b = first − (j − 1) per axis and the group index bx + 2·by + 4·bz; a group
 * keeps the particles' order. For each group and component, the local entry
 * of points (a, b) — both in the group's (n+1)^d points — is the forward
 * chain acc = fma(A_ap, W_bp, acc) from 0 over the group's particles, with
 * W the product of 1-D weights (x·y·z, as for deposit), A_ap = c_p·W_ap and
 * c_p = q_p (scalar) or q_p·α_p^{ij} (tensor; α formed as in
 * common/mass_math.h). The value stored for (g, offset o ≥ 0, c) is σ·s,
 * s the plain sum from 0 of the local entries (a = g, b = g + o) of every
 * group holding both points, in increasing cell index, then group index;
 * with accumulate, storage + σ·s. */
#ifndef PARTILE_MASS_H
#define PARTILE_MASS_H

#include <stddef.h>
#include <stdint.h>

#include "partile/context.h"
#include "partile/deposit.h"
#include "partile/sort.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum partile_mass_kind {
    PARTILE_MASS_SCALAR = 0, /* 1 component */
    PARTILE_MASS_TENSOR = 1  /* 9 components, row-major 3×3 */
} partile_mass_kind_t;

typedef struct partile_mass_layout {
    int64_t points;     /* grid points (rows of the matrix per component row) */
    int offsets;        /* stored stencil offsets per point */
    int components;     /* 1 or 9 */
    size_t entries;     /* points · offsets · components */
} partile_mass_layout_t;

/* Storage size for a grid, shape (CIC or TSC) and kind. */
int partile_mass_layout(const partile_grid_t *grid, partile_shape_t shape,
                        partile_mass_kind_t kind, partile_mass_layout_t *layout);

/* Bitwise (the default): the order above, equal to the reference bit for
 * bit on every backend. Relaxed: a GPU adds the groups' local entries into
 * the storage with atomics in whatever order they arrive — equal to the
 * bitwise result up to rounding (the reference backend, being sequential,
 * returns the bitwise result). */
typedef enum partile_mass_mode {
    PARTILE_MASS_BITWISE = 0,
    PARTILE_MASS_RELAXED = 1
} partile_mass_mode_t;

/* How a GPU assembles (the reference backend always runs its loops). The
 * tile engine is the library's method; the other two are the conventional
 * kernels it is measured against (the paper's kernels (ii) and (i)), kept
 * for benchmarks and tests:
 *   FMA_PER_CELL      sorted particles, plain FMAs per cell, no tensor cores
 *                     — the same chains, so bitwise like the tiles;
 *   ATOMIC_UNSORTED   one thread per particle, global atomics, particles in
 *                     any order (cell_offsets may be NULL); relaxed only. */
typedef enum partile_mass_algorithm {
    PARTILE_MASS_TILES = 0,
    PARTILE_MASS_FMA_PER_CELL = 1,
    PARTILE_MASS_ATOMIC_UNSORTED = 2
} partile_mass_algorithm_t;

/* Arithmetic of the tile kernel. FP64 (the default) is the order above.
 * TF32: the tile's inputs c_p·W_ap and W_bp are rounded to TF32 (10-bit
 * mantissa) and each group's chain accumulates in FP32; groups are summed
 * in FP64. Equal to the FP64 matrix within 2^-8 of its largest entry (the
 * GPU tests check this); never bitwise. Backends without a TF32 tile use
 * the closest they have (HIP: FP32 MFMA); the reference and the
 * conventional kernels compute FP64. Seldom faster on Hopper, whose FP64
 * tiles are fast: at 32^3 and 64^3 cells x 128 per cell TF32 took
 * 1.05-1.12x the FP64 time for CIC, 0.89x for the TSC scalar and
 * 1.22-1.27x for the TSC tensor (H100, bench/RESULTS.md 2026-12-07). */
typedef enum partile_mass_precision {
    PARTILE_MASS_FP64 = 0,
    PARTILE_MASS_TF32 = 1
} partile_mass_precision_t;

typedef struct partile_mass_params {
    const partile_grid_t *grid;
    partile_shape_t shape;     /* CIC or TSC */
    partile_mass_kind_t kind;
    double sigma;              /* σ */
    int accumulate;            /* 1: add into storage (several species) */
    /* Tensor kind without a per-particle ω: ω_p = beta_over_c · B(x_p), B a
     * node-centred field (points × 3, row-major, context memory) gathered at
     * the particle with the same shape exactly as partile_gather does. */
    const double *bfield;
    double beta_over_c;        /* β_s / c, β_s = q_s Δt / (2 m_s) */
    partile_mass_mode_t mode;  /* bitwise (0) or relaxed */
    partile_mass_algorithm_t algorithm; /* GPUs: tiles (0), or a conventional kernel */
    partile_mass_precision_t precision; /* FP64 (0) or TF32 */
    /* The FP64 matrix-free apply's deposit half (include/partile/apply.h):
     * 0 (zero-initialised) BY_POINT, or BY_CELL; assembly ignores it. */
    partile_deposit_order_t order;
} partile_mass_params_t;

/* Assemble into `storage` (layout.entries doubles). Particles sorted by cell
 * (cell_offsets from partile_sort, checked: PARTILE_ERROR_NOT_SORTED; NULL
 * only with ATOMIC_UNSORTED on a GPU);
 * charges q (n); omega: for tensor, ω per particle as SoA x/y/z arrays (FP64),
 * or NULL to compute it from params->bfield; ignored for scalar.
 * GPU backends keep a workspace on the context's device: in bitwise mode up
 * to 1 GiB for the groups' local entries (at least one plane of cells along
 * the last axis: 2^d groups (TSC; 1 for CIC) × the group's forward point
 * pairs (36 CIC, 378 TSC in 3-D) × components doubles per cell), a copy of
 * the storage with accumulate (relaxed mode, or when those local entries
 * take several chunks), 24 bytes per particle when ω comes from
 * the B field, and, except with ATOMIC_UNSORTED, 8 bytes per particle and
 * axis when the positions are FLOAT32 (the per-cell kernels read them
 * widened to FP64, as the reference does) and 1 byte per particle for TSC
 * (its support group); OUT_OF_MEMORY if that cannot be had.
 * Checks (every backend, the reference's order: positions, cell list, ω):
 * bad input returns its status with *bad_particle set and storage
 * untouched. GPU backends in bitwise mode, when the local entries fit the
 * workspace in one go and ω is given (or scalar), make these checks inside
 * the assembly's first pass instead of separate passes over the particles;
 * a flagged input makes them start over with the separate checks. Periodic
 * positions a whole period or more outside the box (valid) take that second
 * start too: the same result, with the first pass run twice. */
int partile_mass_assemble(partile_context_t *ctx, const partile_mass_params_t *params, size_t n,
                          const partile_vectors_t *pos, const int64_t *cell_offsets,
                          const double *q, const partile_vectors_t *omega, double *storage,
                          int64_t *bad_particle);

/* Host arrays: CSR (scalar; rows = points) or BSR with 3×3 blocks (tensor),
 * both triangles, column indices sorted in each row, zero couplings of a
 * non-periodic grid's missing neighbours left out. nnz counts entries
 * (scalar) or blocks (tensor). indptr: points + 1; indices, data: nnz (·9). */
int partile_mass_export_count(const partile_grid_t *grid, partile_shape_t shape, int64_t *nnz);
int partile_mass_export(const partile_grid_t *grid, partile_shape_t shape, partile_mass_kind_t kind,
                        const double *storage, int64_t *indptr, int64_t *indices, double *data);

#ifdef __cplusplus
}
#endif
#endif
