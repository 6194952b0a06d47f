/* partile — short-range pair interactions with a cutoff radius.
 *
 *   out_i = Σ_{j ≠ i, |x_i − x_j| < r_c} φ(x_i, x_j)
 *
 * over particles sorted by cell (the cell list of partile_sort) on a grid
 * whose cells are at least r_c wide, so that the neighbours of a particle
 * lie in the 3^d cells around its own. Built-in interactions (C callers
 * cannot pass device functions):
 *   LJ           force F_i = Σ 24ε (2(σ/r)^12 − (σ/r)^6) / r² · d_ij and
 *                potential energy e_i = ½ Σ 4ε((σ/r)^12 − (σ/r)^6) − shift
 *                (shift: the same at r_c when `shifted`, else 0), so that
 *                Σ_i e_i is the total energy; two particles at one
 *                position (r = 0), or ε and σ large enough to overflow
 *                the powers, give infinite or NaN results, which are
 *                returned as computed, not checked (`partile pairs`
 *                refuses to write them and names the particles);
 *   SPH density  ρ_i = m W(0) + Σ m W(r_ij), W the cubic spline of
 *                smoothing length h (support 2h ≤ r_c), normalised for d.
 * d_ij = x_i − x_j, per periodic axis reduced to the minimum image
 * d − L·rint(d/L) (L = cells·spacing); r² = (d_x² + d_y²) + d_z².
 *
 * Order (the bitwise specification, the same for every strategy of every
 * backend): for particle i in cell c, the neighbour cells c + (dx, dy, dz)
 * are visited with dz outermost and dx innermost, each from −1 to 1 (wrapped
 * on periodic axes, skipped outside a non-periodic grid), their particles in
 * order; each accepted pair adds its term with a plain addition, starting
 * from 0 (SPH: from m W(0)). FP32 positions are computed in FP32, FP64 in
 * FP64, with the formulas of common/pairs_math.h. Periodic axes need at
 * least 3 cells. */
#ifndef PARTILE_PAIRS_H
#define PARTILE_PAIRS_H

#include <stddef.h>
#include <stdint.h>

#include "partile/context.h"
#include "partile/sort.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum partile_interaction {
    PARTILE_PAIRS_LJ = 0,
    PARTILE_PAIRS_SPH_DENSITY = 1
} partile_interaction_t;

/* How a backend walks the cells (issue #7); every strategy computes the
 * same order, so the results do not depend on it. 0 (a zero-initialised
 * struct) is AUTO: the backend's choice from the mean particles per cell,
 * the particle count and the precision.
 *   NAIVE         one thread per particle over its 3^d neighbour cells;
 *   ALL_IN_SM     a sub-box of cells and its halo in shared memory per
 *                 block (on CUDA sized so that four blocks share a
 *                 multiprocessor, with room for the mean count plus six
 *                 standard deviations of a uniform one, or more where
 *                 that fits; a denser sub-box reads its sources from
 *                 global memory, correct but slower, so strongly
 *                 clustered particles may run faster with X_PENCIL;
 *                 below 3 per cell a target's neighbour rows are walked
 *                 as one sequence, which keeps a warp's lanes busier);
 *   X_PENCIL      pencils of cells along x, the neighbour rows staged
 *                 through shared memory, targets in shared memory;
 *   X_PENCIL_REG  the same with each thread's target in registers.
 * The reference backend accepts every strategy (it defines the order). */
typedef enum partile_pair_strategy {
    PARTILE_PAIRS_AUTO = 0,
    PARTILE_PAIRS_NAIVE = 1,
    PARTILE_PAIRS_ALL_IN_SM = 2,
    PARTILE_PAIRS_X_PENCIL = 3,
    PARTILE_PAIRS_X_PENCIL_REG = 4
} partile_pair_strategy_t;
#define PARTILE_PAIRS_STRATEGIES 5

typedef struct partile_pair_params {
    partile_interaction_t interaction;
    double cutoff;          /* r_c > 0, ≤ every cell width */
    double epsilon, sigma;  /* LJ */
    int shifted;            /* LJ: 1 = energy shifted to 0 at r_c */
    double h, mass;         /* SPH: smoothing length (2h ≤ r_c), particle mass */
    int strategy;           /* a partile_pair_strategy_t; 0 = AUTO */
} partile_pair_params_t;

/* Per-particle results, in the positions' type (FLOAT64 or FLOAT32):
 * force (LJ: grid->dim arrays; NULL to skip) and scalar (LJ: energy, SPH:
 * density; NULL to skip). *total (host, may be NULL) = Σ_i scalar_i,
 * summed in FP64 in particle order; a total needs the scalar output it sums
 * (total without scalar: PARTILE_ERROR_NULL_POINTER). Bad positions, an unsorted list, cells
 * narrower than the cutoff: a negative status, outputs untouched. */
int partile_pairs(partile_context_t *ctx, const partile_grid_t *grid,
                  const partile_pair_params_t *params, size_t n, const partile_vectors_t *pos,
                  const int64_t *cell_offsets, partile_vectors_t *force, void *scalar,
                  double *total, int64_t *bad_particle);

/* The fastest strategy for these inputs on ctx's device: runs every
 * strategy but AUTO on the caller's data (once to warm up, then timed
 * twice, and ten times more if the quickest took under a millisecond,
 * keeping each one's fastest run) and sets *strategy to the quickest; times
 * (may be NULL) gets the seconds per evaluation, indexed by strategy
 * (times[0] = 0). Arguments as partile_pairs, whose outputs it overwrites
 * with the (same) results; params->strategy is ignored. A caller can keep
 * the answer for data of similar density and pass it in params->strategy. */
int partile_pairs_select(partile_context_t *ctx, const partile_grid_t *grid,
                         const partile_pair_params_t *params, size_t n,
                         const partile_vectors_t *pos, const int64_t *cell_offsets,
                         partile_vectors_t *force, void *scalar, int *strategy,
                         double times[PARTILE_PAIRS_STRATEGIES]);

/* "auto", "naive", "all-in-sm", "x-pencil", "x-pencil-reg"; NULL if out of range. */
const char *partile_pairs_strategy_name(int strategy);
/* The strategy of that name, or PARTILE_ERROR_INVALID_ARGUMENT. */
int partile_pairs_strategy_from_name(const char *name, int *strategy);

#ifdef __cplusplus
}
#endif
#endif
