/* The host-side choices of the GPU pair kernels (backends/gpu/pairs_gpu.inc),
 * plain C++ without CUDA, so that the CPU emulation test
 * (tests/emulate_pairs.cc) launches exactly what the library launches:
 * the constants in the positions' type as the reference computes them, and
 * the launch geometry of all-in-sm and the x-pencils. Include after the
 * device part of pairs_gpu.inc (its PAIRS_* limits, pairs_lj, pairs_spline
 * and pairs_aism_packed, the staged layout both sides must agree on). */
#ifndef PARTILE_GPU_PAIRS_GEOMETRY_H
#define PARTILE_GPU_PAIRS_GEOMETRY_H

#include <limits.h>
#include <math.h>
#include <stddef.h>

#include "common/pairs_math.h"
#include "partile/pairs.h"

#if !defined(PAIRS_THREADS) || !defined(PAIRS_AISM_MAX_INNER) || !defined(PAIRS_AISM_MAX_LOCAL) || \
    !defined(PAIRS_PENCIL_MAX_W) || !defined(PAIRS_PENCIL_TARGETS)
#error "include backends/gpu/pairs_geometry.h after the device part of pairs_gpu.inc"
#endif

/* Static shared memory of the kernels, left out of the dynamic budget. */
#define PAIRS_STATIC_SHARED (16 * 1024)
/* k_pairs_aism's static arrays (s_off, t_off, t_own, s_outside, t_hist,
 * s_g and block_exclusive_scan<int>'s warp sums; ptxas: 15 472 bytes on sm_90) */
static_assert(4 * ((PAIRS_AISM_MAX_LOCAL + 1) + (PAIRS_AISM_MAX_INNER + 1) + 1 + PAIRS_AISM_ORDER_BINS + 1024 / 32) +
                      2 * PAIRS_AISM_MAX_INNER + 8 * PAIRS_AISM_MAX_LOCAL + 64 <=
                  PAIRS_STATIC_SHARED,
              "all-in-sm's static shared arrays within PAIRS_STATIC_SHARED");

/* What a launch sets in pairs_dev (side, width, nb, cap) and how it
 * launches: blocks (before pairs_blocks' clamp) and dynamic shared bytes. */
typedef struct pairs_geometry {
    int side[3], width;
    long long nb[3];
    int cap;
    size_t smem;
    long long blocks;
} pairs_geometry;

static inline void pairs_geometry_plain(pairs_geometry *G)
{
    for (int a = 0; a < 3; a++) {
        G->side[a] = 1;
        G->nb[a] = 1;
    }
    G->width = 0;
    G->cap = 0;
    G->smem = 0;
    G->blocks = 0;
}

/* Blocks of all-in-sm (PAIRS_BOUNDS) that one multiprocessor should hold. */
#define PAIRS_AISM_BLOCKS_PER_SM 4

/* The dynamic shared memory an all-in-sm block may take so that
 * PAIRS_AISM_BLOCKS_PER_SM of them fit a multiprocessor with `per_sm`
 * bytes (each block also holds the static arrays and 1 KiB the runtime
 * keeps); 0 if they do not fit at all or per_sm is unknown (0). */
static inline long long pairs_aism_block_budget(long long per_sm)
{
    const long long b = per_sm / PAIRS_AISM_BLOCKS_PER_SM - PAIRS_STATIC_SHARED - 1024;
    return b > 0 ? b : 0;
}

/* Staged room for a sub-box of nl local cells: the mean count, six
 * standard deviations of a Poisson count and 64 more. */
static inline long long pairs_aism_room(double ppc, long long nl)
{
    const double mean = ppc * (double)nl;
    return (long long)(mean + 6.0 * sqrt(mean)) + 64;
}

/* Bytes of all-in-sm's staged particle for coordinates of esz bytes and
 * the walk the launch takes (flat: pairs_aism_flat): three coordinates,
 * or (x, y, z, 0) where pairs_aism_packed. */
static inline long long pairs_aism_slot(size_t esz, int flat)
{
    return pairs_aism_packed(esz, flat) ? 16 : 3 * (long long)esz;
}

/* Inner and local (halo box) cells of a sub-box of side³ cells (side ≥ 1),
 * and the blocks over the grid, in dim dimensions. */
static inline void pairs_aism_box(int dim, const long long cells[3], int side, long long *ni,
                                  long long *nl, long long *blocks)
{
    *ni = *nl = *blocks = 1;
    for (int a = 0; a < dim; a++) {
        long long s = side < cells[a] ? side : cells[a];
        s = s < 1 ? 1 : s;
        *ni *= s;
        *nl *= s + 2;
        *blocks *= (cells[a] + s - 1) / s;
    }
}

/* all-in-sm's sub-box: about 512 targets per sub-box of side³ cells (fewer
 * if the inner or halo box would not fit the kernel's static arrays). With
 * a block budget (pairs_aism_block_budget, > 0), the side then shrinks
 * until the staged room (pairs_aism_room) fits it, so that four blocks
 * share a multiprocessor (but not below PAIRS_THREADS / 2 targets), and
 * grows (up to 2048 targets) while the larger room still fits and the grid
 * still has 4 `wave`s of blocks: a larger box stages fewer halo particles
 * per target. Measured on the H200 (bench/RESULTS.md, 2026-12-03,
 * twenty-third session): FP64 at 4 and 8 per cell 10–33 % faster, FP32 at
 * 2–8 per cell with 10⁷ particles 6–8 %. The staged room is then the whole
 * budget; without one (HIP, whose 64 KiB never hold four blocks), 1.5
 * times the mean. At most the dynamic limit `dynamic_max` bytes. ppc: mean
 * particles per cell, slot: bytes of a staged particle (pairs_aism_slot). */
static inline pairs_geometry pairs_aism_geometry(int dim, const long long cells[3], double ppc,
                                                 long long slot, long long dynamic_max, long long budget,
                                                 long long wave)
{
    pairs_geometry G;
    pairs_geometry_plain(&G);
    const double want = 512.0 / (ppc > 1.0 ? ppc : 1.0);
    int side = dim == 3 ? (int)cbrt(want) : dim == 2 ? (int)sqrt(want) : (int)want;
    side = side < 1 ? 1 : side; /* above 512 per cell */
    long long ni, nl, blocks;
    for (;; side--) {
        pairs_aism_box(dim, cells, side, &ni, &nl, &blocks);
        if (side <= 1 || (ni <= PAIRS_AISM_MAX_INNER && nl <= PAIRS_AISM_MAX_LOCAL))
            break;
    }
    if (budget > 0) {
        for (; side > 1; side--) {
            pairs_aism_box(dim, cells, side, &ni, &nl, &blocks);
            if (pairs_aism_room(ppc, nl) * slot <= budget)
                break;
            long long ni0, nl0, blocks0; /* not below half a block of targets */
            pairs_aism_box(dim, cells, side - 1, &ni0, &nl0, &blocks0);
            if (ppc * (double)ni0 < PAIRS_THREADS / 2)
                break;
        }
        for (;;) {
            long long ni1, nl1, blocks1;
            pairs_aism_box(dim, cells, side + 1, &ni1, &nl1, &blocks1);
            if (ni1 > PAIRS_AISM_MAX_INNER || nl1 > PAIRS_AISM_MAX_LOCAL || ppc * (double)ni1 > 2048.0 ||
                pairs_aism_room(ppc, nl1) * slot > budget || blocks1 < 4 * wave)
                break;
            side++;
        }
    }
    pairs_aism_box(dim, cells, side, &ni, &nl, &blocks);
    for (int a = 0; a < 3; a++) {
        G.side[a] = a < dim ? (int)(side < cells[a] ? side : cells[a]) : 1;
        G.nb[a] = (cells[a] + G.side[a] - 1) / G.side[a];
    }
    const long long most = dynamic_max / slot;
    long long cap = (long long)(1.5 * ppc * (double)nl) + 64;
    if (budget > 0) {
        const long long room = pairs_aism_room(ppc, nl), all = budget / slot;
        cap = room > all ? room : all;
    }
    G.cap = (int)(cap < most ? cap : most);
    G.smem = (size_t)G.cap * (size_t)slot;
    G.blocks = G.nb[0] * G.nb[1] * G.nb[2];
    return G;
}

/* Whether all-in-sm walks a target's staged rows as one sequence
 * (k_pairs_aism<…, true>) rather than row by row: below 3 particles per
 * cell. Measured on the H200 (bench/RESULTS.md, 2026-12-03), LJ at 10⁶ and
 * 10⁷ particles: one sequence 7–14 % faster at 1 per cell, 0–6 % at 2, and
 * 5–21 % slower at 4 and 8 (3 was not measured); with its rows entered by a
 * bit mask (the twenty-second session) 2–7 % faster again at 1–2 per cell
 * and still 2–4 % slower than the row walk at 4. */
static inline int pairs_aism_flat(double ppc)
{
    return ppc < 3.0;
}

/* x-pencil (reg = 0) and x-pencil-reg: pencils of about 0.75 batches of
 * targets (PAIRS_PENCIL_TARGETS, or PAIRS_THREADS in registers); the
 * rows' chunks sized for 1.5 times the mean; x-pencil's targets and sums
 * (7 per target) in dynamic shared memory too. */
static inline pairs_geometry pairs_pencil_geometry(int reg, const long long cells[3], double ppc,
                                                   size_t esz, long long dynamic_max)
{
    pairs_geometry G;
    pairs_geometry_plain(&G);
    const int tb = reg ? PAIRS_THREADS : PAIRS_PENCIL_TARGETS;
    long long w = (long long)(0.75 * tb / (ppc > 1e-3 ? ppc : 1e-3));
    w = w < 1 ? 1 : w > PAIRS_PENCIL_MAX_W ? PAIRS_PENCIL_MAX_W : w;
    w = w > cells[0] ? cells[0] : w;
    G.width = (int)w;
    G.nb[0] = (cells[0] + w - 1) / w;
    const size_t targets = reg ? 0 : (size_t)7 * PAIRS_PENCIL_TARGETS * esz;
    const long long most = (long long)((dynamic_max - targets) / (3 * esz));
    long long cap = (long long)(1.5 * ppc * (double)(w + 2)) + 64;
    G.cap = (int)(cap < most ? cap : most);
    G.smem = (size_t)G.cap * 3 * esz + targets;
    G.blocks = G.nb[0] * cells[1] * cells[2];
    return G;
}

static inline unsigned pairs_blocks(long long nblocks)
{
    return (unsigned)(nblocks < 1 ? 1 : nblocks > INT_MAX ? INT_MAX : nblocks);
}

/* The launch fields of a pairs_dev (or any struct with them). */
template <typename D> static inline void pairs_set_geometry(D *P, const pairs_geometry &G)
{
    for (int a = 0; a < 3; a++) {
        P->side[a] = G.side[a];
        P->nb[a] = G.nb[a];
    }
    P->width = G.width;
    P->cap = G.cap;
}

/* The reference's constants (reference/pairs_ref.c), in T, into a pairs_dev
 * (or any struct with its constant fields), carried as double. */
template <typename T, typename D>
static void pairs_constants(D *P, const partile_grid_t *g, const partile_pair_params_t *pp)
{
    for (int a = 0; a < g->dim; a++) {
        const T L = (T)((double)g->cells[a] * g->spacing[a]);
        P->L[a] = (double)L;
        P->halfL[a] = (double)(L / (T)2);
    }
    const T rc = (T)pp->cutoff, rc2 = rc * rc, eps = (T)pp->epsilon, sig = (T)pp->sigma;
    const T sig2 = sig * sig, h = (T)pp->h, m = (T)pp->mass;
    const T norm = (T)partile_spline_norm(g->dim, pp->h);
    T shift = 0, unused;
    if (pp->interaction == PARTILE_PAIRS_LJ && pp->shifted)
        pairs_lj(rc2, eps, sig2, (T)0, &unused, &shift);
    P->rc2 = (double)rc2;
    P->eps = (double)eps;
    P->sig2 = (double)sig2;
    P->shift = (double)shift;
    P->h = (double)h;
    P->m = (double)m;
    P->norm = (double)norm;
    P->self = (double)(m * pairs_spline((T)0, h, norm));
}

#endif
