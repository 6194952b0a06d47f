/* partile — particle → grid deposit (P2C) and grid → particle gather (C2P).
 *
 *   deposit:  field[g] += Σ_p W(x_p − x_g) · v_p      (1 to 16 components)
 *   gather:   v_p       = Σ_g W(x_p − x_g) · field[g]
 *
 * Grid points. With centering NODE the points sit at lower + i·h, with CELL
 * at cell centres lower + (i + ½)·h (a node grid shifted by half a cell).
 * Along a periodic axis there are `cells` points, i = 0 … cells−1, and
 * point indices wrap. Along a non-periodic axis there is one ghost layer on
 * each side: NODE points i = −1 … cells+1 (cells + 3 of them), CELL points
 * i = −1 … cells (cells + 2); point i is stored at i + 1. Every shape below
 * stays inside these for particles inside the domain. Points are numbered
 * x fastest: g = a + Px·(b + Py·c) with (a, b, c) the stored indices and Px,
 * Py the point counts per axis (partile_field_shape gives them).
 *
 * Shapes (per axis, s = position in point units: (x − lower)/h for NODE,
 * (x − lower)/h − ½ for CELL; W is the product over axes, formed x·y·z):
 *   NGP      weight 1 at floor(s + ½)
 *   CIC      j = floor(s), ξ = s − j: (1 − ξ, ξ) at (j, j+1)
 *   TSC      k = floor(s + ½), δ = s − k: (½(½−δ)², ¾−δ², ½(½+δ)²) at k−1, k, k+1
 *   OVERLAP  a cube of side d_p (per particle, 0 < d_p ≤ h): the fraction of
 *            its width inside each point's control interval [i − ½, i + ½)
 *            (for CELL: the cell itself); at most two points per axis, the
 *            weights sum to one.
 *
 * Values are row-major: particle values (n × m), field (points × m).
 *
 * Order (the bitwise specification). Deposit, PARTILE_ORDER_BY_POINT (the
 * default): for each grid point the contributions are summed from 0 as
 * acc = fma(W, v, acc), visiting the particles by cell in increasing cell
 * index and, inside a cell, in particle order; then field[g] = field[g] +
 * acc. PARTILE_ORDER_BY_CELL: for each cell c and point g, P(c, g) is that
 * chain from 0 over c's particles alone; the point's sum nests one sum per
 * axis, x innermost: acc = Σ_z (Σ_y (Σ_x P)), each Σ from 0 as s = s + t
 * over the cells along that axis in increasing (wrapped) index; then field[g]
 * = field[g] + acc. (Cells that do not reach g add an exact 0, so the sums
 * may run over any window that holds those that do.) A cell's particles are
 * independent of other cells' there, which lets a GPU read each particle
 * once; the two orders round differently. Gather: for each particle,
 * acc = fma(W, field[g], acc) from 0 over its stencil, z outermost, x
 * innermost, each axis from its lowest point up. Every backend computes the
 * weights with the same shared code, so in FP64 results are bitwise equal
 * to the reference wherever the path is marked bitwise below. */
#ifndef PARTILE_DEPOSIT_H
#define PARTILE_DEPOSIT_H

#include <stddef.h>
#include <stdint.h>

#include "partile/context.h"
#include "partile/sort.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum partile_shape {
    PARTILE_SHAPE_NGP = 0,
    PARTILE_SHAPE_CIC = 1,
    PARTILE_SHAPE_TSC = 2,
    PARTILE_SHAPE_OVERLAP = 3
} partile_shape_t;

typedef enum partile_centering {
    PARTILE_CENTERING_NODE = 0,
    PARTILE_CENTERING_CELL = 1
} partile_centering_t;

/* The deposit's summation order (above); both are bitwise in FP64 on the
 * sorted path. */
typedef enum partile_deposit_order {
    PARTILE_ORDER_BY_POINT = 0,
    PARTILE_ORDER_BY_CELL = 1
} partile_deposit_order_t;

#define PARTILE_MAX_COMPONENTS 16

/* Points per axis (points[dim..2] = 1) and in total for a grid. */
int partile_field_shape(const partile_grid_t *grid, partile_centering_t centering,
                        int64_t points[3], int64_t *total);

/* A particle–grid transfer: the grid, the shape and where values live. */
typedef struct partile_transfer {
    const partile_grid_t *grid;
    partile_shape_t shape;
    partile_centering_t centering;
    int components;        /* m, 1 … PARTILE_MAX_COMPONENTS */
    const double *sizes;   /* OVERLAP: d_p per particle (context memory); else NULL */
    partile_deposit_order_t order; /* deposit only; 0 (zero-initialised): BY_POINT */
} partile_transfer_t;

/* Deposit (adds into field: every point becomes field[g] + acc, so a −0
 * becomes +0 even where nothing lands). cell_offsets: the cell list of
 * partile_sort when the particles are sorted by cell (checked:
 * PARTILE_ERROR_NOT_SORTED otherwise) — the path with no global atomics,
 * bitwise in FP64 — or NULL for particles in any order: the reference then
 * visits them as a stable sort by cell would (same result as the sorted
 * path); GPU backends use atomics there, equal up to rounding only.
 * Positions outside the domain of a non-periodic axis, NaN or infinite: an
 * error naming the first one, field untouched. OVERLAP sizes must satisfy
 * 0 < d_p ≤ spacing on every axis (PARTILE_ERROR_INVALID_ARGUMENT).
 *
 * Which path is faster. Measured on an H200 (64³ periodic grid, node-
 * centred, FP64, CUDA backend, 2026-12-02, bench/RESULTS.md), ms for 1 / 3
 * components, sorted against unsorted: at 10 particles per cell CIC 0.18 /
 * 0.23 against 0.23 / 0.34, TSC 1.30 / 1.51 against 0.50 / 0.87; at 100
 * per cell CIC 1.57 / 2.44 against 1.91 / 3.08, TSC 14.7 / 19.5 against
 * 4.5 / 8.1. Sorting and permuting the positions took 1–9 ms there, so a
 * sort pays when several deposits and gathers reuse it, or when the bits
 * must not depend on the run. In the by-cell order (t->order), node-
 * centred CIC on 3-D grids with 1 or 3 components reads each particle
 * once: 2026-12-04, 0.60 / 0.76 ms at 64^3 × 100 per cell (by point 1.58 /
 * 2.45), 0.58 / 0.82 at 128^3 × 10 (1.09 / 1.56), 0.35 / 0.52 at 128^3 × 4
 * (0.59 / 0.73), but slower than by point at 1 per cell (its per-cell
 * buffer of 8 m doubles then dominates). Other
 * shapes, centrings and dimensions take a general kernel in that order,
 * many times slower than by point. */
int partile_deposit(partile_context_t *ctx, const partile_transfer_t *t, size_t n,
                    const partile_vectors_t *pos, const double *values,
                    const int64_t *cell_offsets, double *field, int64_t *bad_particle);

/* Gather (overwrites values). Bitwise in FP64 on every backend. */
int partile_gather(partile_context_t *ctx, const partile_transfer_t *t, size_t n,
                   const partile_vectors_t *pos, const double *field, double *values,
                   int64_t *bad_particle);

#ifdef __cplusplus
}
#endif
#endif
