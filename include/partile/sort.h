/* partile — binning particles into cells and sorting them by cell.
 *
 * The grid is Cartesian with dim = 1, 2 or 3 axes; cell (i, j, k) has the
 * index c = i + nx·(j + ny·k) (x fastest). Along axis μ a position x maps
 * to s = (x − lower[μ]) / spacing[μ] (one IEEE division in FP64, the same on
 * every backend; FP32 positions are widened exactly first) and to cell
 * floor(s). A non-periodic axis covers the half-open range
 * [lower, lower + cells·spacing): a position outside it is an error. A
 * periodic axis wraps floor(s) into [0, cells) (|s| must stay below 2^52).
 *
 * The sort is a stable counting sort: sorted particle i is original particle
 * perm[i], particles of one cell keep their original order, cell c holds
 * sorted particles offsets[c] .. offsets[c+1]−1. Stability makes the result
 * unique, so every backend returns the identical perm and offsets.
 *
 * All arrays live in the context's memory. On any error nothing is written
 * to the caller's output arrays. */
#ifndef PARTILE_SORT_H
#define PARTILE_SORT_H

#include <stddef.h>
#include <stdint.h>

#include "partile/context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum partile_dtype {
    PARTILE_DTYPE_FLOAT64 = 0,
    PARTILE_DTYPE_FLOAT32 = 1,
    PARTILE_DTYPE_INT32 = 2,
    PARTILE_DTYPE_INT64 = 3
} partile_dtype_t;

/* Bytes of one element (8, 4, 4, 8), or 0 for an unknown type. */
size_t partile_dtype_size(partile_dtype_t type);

typedef struct partile_grid {
    int dim;            /* 1, 2 or 3 */
    int64_t cells[3];   /* cells per axis, >= 1 (axes beyond dim: ignored) */
    double lower[3];    /* lower corner */
    double spacing[3];  /* cell width, finite and > 0 */
    int periodic[3];    /* 1: the axis wraps; 0: outside is an error */
} partile_grid_t;

/* Total cells: product of cells[0..dim). */
int partile_grid_cell_count(const partile_grid_t *grid, int64_t *count);

/* A per-particle vector (positions, velocities) in SoA form: one array per
 * axis (grid->dim of them), n elements each, all of one type (FLOAT64 or
 * FLOAT32). */
typedef struct partile_vectors {
    partile_dtype_t type;
    const void *axis[3];
} partile_vectors_t;

/* cell[p] = cell index of particle p. On an out-of-domain or non-finite
 * position: PARTILE_ERROR_OUT_OF_DOMAIN / _NOT_FINITE, the detail names the
 * first offending particle (lowest index) and, if bad_particle is not NULL,
 * *bad_particle is set to it; cell is left untouched. */
int partile_bin(partile_context_t *ctx, const partile_grid_t *grid, size_t n,
                const partile_vectors_t *pos, int64_t *cell, int64_t *bad_particle);

/* Full stable counting sort by cell. Outputs: offsets (cell count + 1
 * entries), perm (n entries), sorted_cell (n entries: the cell of sorted
 * particle i; may be NULL). Same errors as partile_bin. */
int partile_sort(partile_context_t *ctx, const partile_grid_t *grid, size_t n,
                 const partile_vectors_t *pos, int64_t *offsets, int64_t *perm,
                 int64_t *sorted_cell, int64_t *bad_particle);

/* Re-sort after a small move. The particles (and so pos) are in the order of
 * an earlier sort whose cell list was old_offsets / old_cell (old_cell
 * non-decreasing and consistent with old_offsets, else
 * PARTILE_ERROR_NOT_SORTED, checked first). The result is identical to
 * partile_sort on the same positions. How the near-sortedness is used
 * differs by backend: the reference ranks and relocates only the movers
 * (the stayers of a cell keep their block); the GPU backends run their
 * bucketed sort, whose appends go one atomic per run of equal buckets and
 * coalesce on nearly sorted input — on the H200 that beat a movers-only pass
 * at every density measured (bench/RESULTS.md).
 * old_* and the outputs must not overlap. */
int partile_resort(partile_context_t *ctx, const partile_grid_t *grid, size_t n,
                   const partile_vectors_t *pos, const int64_t *old_offsets,
                   const int64_t *old_cell, int64_t *offsets, int64_t *perm,
                   int64_t *sorted_cell, int64_t *bad_particle);

/* One caller array to reorder. */
typedef struct partile_array {
    void *data;
    partile_dtype_t type;
} partile_array_t;

/* Apply a permutation in place to count SoA arrays of n elements each:
 * new data[i] = old data[perm[i]]. scratch: caller-provided context memory
 * of at least n · (largest element size) bytes, or NULL to let the library
 * allocate (and free) it. perm must be a permutation of 0..n−1: entries out
 * of range are an error (PARTILE_ERROR_INVALID_ARGUMENT, nothing changed). */
int partile_permute(partile_context_t *ctx, size_t n, const int64_t *perm, int count,
                    const partile_array_t *arrays, void *scratch, size_t scratch_bytes);

/* Sort-interval advisor (DESIGN.md §2, seed 2): from the initial velocities
 * (SoA, dim arrays of n), u_μ = 95th percentile of |v_μ| (nearest rank: the
 * ceil(0.95·n)-th smallest), and
 *   N_sort = floor(α · min_μ(spacing_μ / u_μ) / Δt),  α ∈ [0.25, 0.5].
 * Axes with u_μ = 0 impose no limit; if all are 0, N_sort = INT64_MAX.
 * N_sort is at least 1. */
typedef struct partile_sort_advice {
    int64_t n_sort;    /* steps between re-sorts */
    double u_char[3];  /* the percentile per axis that was used */
} partile_sort_advice_t;

int partile_sort_interval(partile_context_t *ctx, const partile_grid_t *grid, size_t n,
                          const partile_vectors_t *velocities, double alpha, double dt,
                          partile_sort_advice_t *advice);

#ifdef __cplusplus
}
#endif
#endif
