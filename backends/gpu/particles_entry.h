/* Entry points of the particle kernels (backends/gpu/sort_gpu.inc and
 * deposit_gpu.inc) for one vendor: define PARTILE_GPU_ENTRY(name) (e.g.
 * partile_cuda_##name) before including.
 * Plain C declarations: the backend's operations table calls them with its
 * stream, multiprocessor count and workspace. */
#ifndef PARTILE_GPU_PARTICLES_ENTRY_H
#define PARTILE_GPU_PARTICLES_ENTRY_H

#include <stddef.h>
#include <stdint.h>

#include "partile/sort.h"
#include "partile/deposit.h"
#include "partile/pairs.h"
#include "partile/mass.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct partile_gpu_workspace {
    void *ptr;
    size_t bytes;
    void *host; /* pinned host memory for the words a call reads back (read_words) */
} partile_gpu_workspace;

int PARTILE_GPU_ENTRY(bin)(void *stream, int sms, partile_gpu_workspace *ws,
                           const partile_grid_t *grid, size_t n, const partile_vectors_t *pos,
                           int64_t *cell, int64_t *bad);
int PARTILE_GPU_ENTRY(sort)(void *stream, int sms, partile_gpu_workspace *ws,
                            const partile_grid_t *grid, int64_t ncells, size_t n,
                            const partile_vectors_t *pos, int64_t *offsets, int64_t *perm,
                            int64_t *sorted_cell, int64_t *bad);
int PARTILE_GPU_ENTRY(resort)(void *stream, int sms, partile_gpu_workspace *ws,
                              const partile_grid_t *grid, int64_t ncells, size_t n,
                              const partile_vectors_t *pos, const int64_t *old_offsets,
                              const int64_t *old_cell, int64_t *offsets, int64_t *perm,
                              int64_t *sorted_cell, int64_t *bad);
int PARTILE_GPU_ENTRY(check_permutation)(void *stream, int sms, partile_gpu_workspace *ws,
                                         size_t n, const int64_t *perm, int64_t *bad);
int PARTILE_GPU_ENTRY(permute)(void *stream, int sms, partile_gpu_workspace *ws, size_t n,
                               const int64_t *perm, int count, const partile_array_t *arrays,
                               void *scratch);

int PARTILE_GPU_ENTRY(deposit)(void *stream, int sms, partile_gpu_workspace *ws,
                               const partile_transfer_t *t, size_t n,
                               const partile_vectors_t *pos, const double *values,
                               const int64_t *cell_offsets, double *field, int64_t *bad);
int PARTILE_GPU_ENTRY(gather)(void *stream, int sms, partile_gpu_workspace *ws,
                              const partile_transfer_t *t, size_t n,
                              const partile_vectors_t *pos, const double *field, double *values,
                              int64_t *bad);

/* y = M x (backends/gpu/apply_gpu.inc). variant: which matrix-free path
 * (both give the same bits); the operations table passes DEFAULT. */
enum {
    PARTILE_GPU_APPLY_DEFAULT = 0,
    PARTILE_GPU_APPLY_COMPOSED = 1, /* gather, scale, sorted deposit, σ */
    PARTILE_GPU_APPLY_FUSED = 2     /* per-particle prepare, per-point deposit;
                                     * by cell: the corner passes where they serve */
};
/* Mass-matrix assembly (backends/gpu/mass_*.inc); engine: the vendor's tile
 * engine index (CUDA: 0 f64 m8n8k4, 1 f64 m16n8k16 on sm_90, 2 tf32 m16n8k8;
 * HIP: 0 f64 16x16x4, 1 f32 16x16x4). */
int PARTILE_GPU_ENTRY(mass_assemble)(void *stream, int sms, partile_gpu_workspace *ws, int engine,
                                     const partile_mass_params_t *p, size_t n,
                                     const partile_vectors_t *pos, const int64_t *cell_offsets,
                                     const double *q, const partile_vectors_t *omega,
                                     double *storage, int64_t *bad);

int PARTILE_GPU_ENTRY(mass_apply_matfree)(void *stream, int sms, partile_gpu_workspace *ws,
                                          const partile_mass_params_t *p, size_t n,
                                          const partile_vectors_t *pos, const int64_t *off,
                                          const double *q, const partile_vectors_t *omega,
                                          const double *x, double *y, int64_t *bad, int variant);
int PARTILE_GPU_ENTRY(mass_apply_matfree_f32)(void *stream, int sms, partile_gpu_workspace *ws,
                                              const partile_mass_params_t *p, size_t n,
                                              const partile_vectors_t *pos, const int64_t *off,
                                              const float *q, const partile_vectors_t *omega,
                                              const float *x, float *y, int64_t *bad);
int PARTILE_GPU_ENTRY(mass_apply_assembled)(void *stream, int sms, partile_gpu_workspace *ws,
                                            const partile_mass_params_t *p, const double *storage,
                                            const double *x, double *y);
/* Frees a workspace the caller made for direct calls (tests, benchmarks). */
void PARTILE_GPU_ENTRY(workspace_free)(partile_gpu_workspace *ws);

/* backends/gpu/pairs_gpu.inc */
int PARTILE_GPU_ENTRY(pairs)(void *stream, int sms, partile_gpu_workspace *ws,
                             const partile_grid_t *grid, const partile_pair_params_t *params,
                             size_t n, const partile_vectors_t *pos, const int64_t *cell_offsets,
                             partile_vectors_t *force, void *scalar, int64_t *bad);

#ifdef __cplusplus
}
#endif
#endif
