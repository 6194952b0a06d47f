/* The operations table every backend fills (one `static const` table per
 * backend, DESIGN.md §6). The front end (common/context.c) checks arguments,
 * then dispatches here; a backend sees only validated input. An operation a
 * backend lacks is a NULL entry and reports PARTILE_ERROR_UNSUPPORTED. */
#ifndef PARTILE_COMMON_BACKEND_H
#define PARTILE_COMMON_BACKEND_H

#include <stddef.h>

#include "partile/mma.h"
#include "partile/sort.h"
#include "partile/deposit.h"
#include "partile/mass.h"
#include "partile/pairs.h"
#include "partile/apply.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct partile_backend_ops {
    const char *name;
    const char *targets; /* compiled targets, "" for the host */

    /* Usable devices; *note explains a count of 0 (static string). */
    int (*device_count)(int *count, const char **note);
    /* Open device `device`; describe it into desc. */
    int (*open)(int device, void **state, char *desc, size_t desc_len);
    int (*close)(void *state);
    int (*synchronize)(void *state);

    int (*alloc)(void *state, size_t bytes, void **ptr);
    int (*release)(void *state, void *ptr);
    int (*copy)(void *state, void *dst, const void *src, size_t bytes,
                partile_copy_kind_t kind);
    int (*fill)(void *state, void *dst, int value, size_t bytes);

    /* Interval timer: begin records a start mark, end a stop mark, waits,
     * and returns the seconds between them. */
    int (*timer_create)(void *state, void **timer);
    int (*timer_begin)(void *state, void *timer);
    int (*timer_end)(void *state, void *timer, double *seconds);
    int (*timer_destroy)(void *state, void *timer);

    /* Tile engine. shapes/shape_count: every shape the engine knows;
     * shape_available says whether the opened device runs shape i. */
    const partile_mma_shape_t *shapes;
    const int *shape_count;
    int (*shape_available)(void *state, int index);
    /* The front end has checked the arguments. shape_index is the tile's
     * position in `shapes`, or -1 for a tile outside the list (only engines
     * with any_shape set receive those). */
    int any_shape;
    int (*mma_batched)(void *state, const partile_tile_t *tile,
                       int shape_index, size_t batch, int rows, int cols,
                       int depth, const void *a, const void *b, const void *c,
                       void *d);
    int (*mma_peak)(void *state, int shape_index, double *flops_per_second);
    /* Plain (non-tile) FP64 FMA rate, the baseline for the tile peaks. */
    int (*fma_peak)(void *state, double *flops_per_second);

    /* Binning and sorting (include/partile/sort.h); arguments checked, n > 0,
     * ncells = the grid's cell count. On a bad position the backend returns
     * PARTILE_ERROR_OUT_OF_DOMAIN / _NOT_FINITE / _NOT_SORTED with *bad set to
     * the lowest offending particle, and writes no output. */
    int (*bin)(void *state, const partile_grid_t *grid, size_t n, const partile_vectors_t *pos,
               int64_t *cell, int64_t *bad);
    int (*sort)(void *state, const partile_grid_t *grid, int64_t ncells, size_t n,
                const partile_vectors_t *pos, int64_t *offsets, int64_t *perm,
                int64_t *sorted_cell, int64_t *bad);
    int (*resort)(void *state, const partile_grid_t *grid, int64_t ncells, size_t n,
                  const partile_vectors_t *pos, const int64_t *old_offsets,
                  const int64_t *old_cell, int64_t *offsets, int64_t *perm,
                  int64_t *sorted_cell, int64_t *bad);
    /* perm has been checked to be a permutation of 0..n-1 by check_permutation. */
    int (*check_permutation)(void *state, size_t n, const int64_t *perm, int64_t *bad);
    int (*permute)(void *state, size_t n, const int64_t *perm, int count,
                   const partile_array_t *arrays, void *scratch);

    /* Deposit and gather (include/partile/deposit.h); arguments checked,
     * n > 0. A bad particle: OUT_OF_DOMAIN / NOT_FINITE / NOT_SORTED, or
     * INVALID_ARGUMENT for an OVERLAP size, with *bad set; nothing written. */
    int (*deposit)(void *state, const partile_transfer_t *t, size_t n,
                   const partile_vectors_t *pos, const double *values,
                   const int64_t *cell_offsets, double *field, int64_t *bad);
    int (*gather)(void *state, const partile_transfer_t *t, size_t n,
                  const partile_vectors_t *pos, const double *field, double *values,
                  int64_t *bad);

    /* Mass matrix (include/partile/mass.h); arguments checked, n may be 0. */
    int (*mass_assemble)(void *state, const partile_mass_params_t *p, size_t n,
                         const partile_vectors_t *pos, const int64_t *cell_offsets,
                         const double *q, const partile_vectors_t *omega, double *storage,
                         int64_t *bad);

    /* Mass-matrix application (include/partile/apply.h); arguments checked. */
    int (*mass_apply_matfree)(void *state, const partile_mass_params_t *p, size_t n,
                              const partile_vectors_t *pos, const int64_t *cell_offsets,
                              const double *q, const partile_vectors_t *omega, const double *x,
                              double *y, int64_t *bad);
    int (*mass_apply_assembled)(void *state, const partile_mass_params_t *p,
                                const double *storage, const double *x, double *y);

    /* Pair interactions (include/partile/pairs.h); arguments checked, n > 0;
     * force and scalar may be NULL. */
    int (*pairs)(void *state, const partile_grid_t *grid, const partile_pair_params_t *params,
                 size_t n, const partile_vectors_t *pos, const int64_t *cell_offsets,
                 partile_vectors_t *force, void *scalar, int64_t *bad);

    /* FP32 matrix-free apply (include/partile/apply.h); arguments checked,
     * omega NULL or three FLOAT32 arrays. */
    int (*mass_apply_matfree_f32)(void *state, const partile_mass_params_t *p, size_t n,
                                  const partile_vectors_t *pos, const int64_t *cell_offsets,
                                  const float *q, const partile_vectors_t *omega, const float *x,
                                  float *y, int64_t *bad);

    /* The stream work is issued on (include/partile/context.h): set (NULL:
     * the context's own) once the work on the previous one has finished;
     * get the one in use. NULL entries: a host backend, without streams. */
    int (*set_stream)(void *state, void *stream);
    void *(*get_stream)(void *state);
} partile_backend_ops_t;

/* The backends, in "auto" preference order. Each is defined whether or not
 * it was compiled; one not compiled has only its name (see registry.c). */
extern const partile_backend_ops_t partile_backend_cuda;
extern const partile_backend_ops_t partile_backend_hip;
extern const partile_backend_ops_t partile_backend_reference;

/* Shape tables of the engines, shared by the reference engine (which
 * computes any of them) and `partile info` (common/mma_shapes.c). */
extern const partile_mma_shape_t partile_cuda_shapes[];
extern const int partile_cuda_shape_count;
extern const partile_mma_shape_t partile_hip_shapes[];
extern const int partile_hip_shape_count;
extern const partile_mma_shape_t partile_reference_shapes[];
extern const int partile_reference_shape_count;

/* Size in bytes of one element of a format in memory (8 for FP64, else 4). */
size_t partile_format_bytes(partile_format_t format);

#ifdef __cplusplus
}
#endif
#endif
