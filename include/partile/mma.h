/* partile — the abstract matrix-multiply-accumulate (MMA) tile.
 *
 * A tile is D = A·B + C with A of Mt×Kt, B of Kt×Nt and C, D of Mt×Nt,
 * described by (Mt, Nt, Kt, Fin, Facc): the input format of A and B and the
 * accumulator format of C and D. Kernels are written once against this
 * interface; each backend has a tile engine that maps it onto hardware:
 *
 *   reference  any shape, computed as a forward chain of fma() over k
 *              starting from the accumulator — the order measured on the
 *              H200 for every FP64 mma.sync shape (DESIGN.md §3);
 *   cuda       mma.sync shapes (list with partile_mma_shape_get);
 *   hip        MFMA shapes (unverified on AMD hardware).
 *
 * Element types in memory: FP64 → double; FP32, TF32, FP16, BF16 → float.
 * Inputs in TF32/FP16/BF16 are given as float and rounded to their format
 * first (TF32: to nearest, ties away from zero, as cvt.rna; FP16 and BF16:
 * to nearest even); accumulation then happens in Facc. */
#ifndef PARTILE_MMA_H
#define PARTILE_MMA_H

#include <stddef.h>

#include "partile/context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum partile_format {
    PARTILE_FP64 = 0,
    PARTILE_FP32 = 1,
    PARTILE_TF32 = 2,
    PARTILE_FP16 = 3,
    PARTILE_BF16 = 4
} partile_format_t;

/* "fp64", "fp32", "tf32", "fp16", "bf16"; "?" for an unknown value. */
const char *partile_format_name(partile_format_t format);

typedef struct partile_tile {
    int m, n, k;           /* Mt, Nt, Kt */
    partile_format_t fin;  /* format of A and B */
    partile_format_t facc; /* format of C and D: FP64 or FP32 */
} partile_tile_t;

typedef struct partile_mma_shape {
    partile_tile_t tile;
    const char *name;        /* e.g. "f64.m16n8k16" */
    const char *instruction; /* e.g. "mma.sync.aligned.m16n8k16.row.col.f64" */
    const char *required_target; /* e.g. "sm_90", "gfx940", "" (not "requires": a C++20 keyword) */
    int available;           /* 1 if this context's device runs it */
    int bitwise;             /* 1 if results equal the reference bit for bit
                                (FP64 shapes; hip: claimed, unverified) */
} partile_mma_shape_t;

/* Tile shapes the context's engine knows, available or not. The reference
 * engine lists every shape of every engine (it computes any shape). */
int partile_mma_shape_count(const partile_context_t *ctx, int *count);
int partile_mma_shape_get(const partile_context_t *ctx, int index,
                          partile_mma_shape_t *shape);

/* The same list for a backend by name, without a device (every shape then
 * reports available = 0): what `partile info` shows on a machine with no
 * GPU. PARTILE_ERROR_NOT_COMPILED for a backend not built in. */
int partile_backend_shape_count(const char *backend, int *count);
int partile_backend_shape_get(const char *backend, int index, partile_mma_shape_t *shape);

/* Batched tile operation: for b in [0, batch),
 *   D_b = A_b · B_b + C_b,
 * A_b rows×depth, B_b depth×cols, C_b and D_b rows×cols, all row-major and
 * packed one after the other in the context's memory. The engine tiles the
 * problem with `tile` (which must be one of its available shapes, or any
 * valid tile on the reference engine); rows and cols need not be multiples of
 * Mt and Nt. The depth is walked in tile-sized steps from k = 0 upwards; a
 * last partial step is padded with zeros, i.e. each entry is the forward
 * fma chain over ceil(depth/Kt)·Kt terms whose padded terms are fma(0, 0,
 * acc) (this only changes acc = -0 into +0). C may equal D (in place).
 * Returns PARTILE_ERROR_UNSUPPORTED if the engine lacks the tile. */
int partile_mma_batched(partile_context_t *ctx, const partile_tile_t *tile,
                        size_t batch, int rows, int cols, int depth,
                        const void *a, const void *b, const void *c, void *d);

/* Peak rate of one tile shape with its operands held in registers (no
 * memory traffic), in floating-point operations per second (2·M·N·K per
 * tile). This is the compute ceiling the benchmarks divide by. */
int partile_mma_peak(partile_context_t *ctx, const partile_tile_t *tile,
                     double *flops_per_second);

/* Peak rate of plain FP64 fma() on the device (8 independent chains per
 * thread, no memory traffic), in flop/s (2 per fma): the baseline a tile
 * shape must beat to be worth using. */
int partile_fma_peak(partile_context_t *ctx, double *flops_per_second);

#ifdef __cplusplus
}
#endif
#endif
