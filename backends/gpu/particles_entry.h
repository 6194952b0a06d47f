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

#ifdef __cplusplus
extern "C" {
#endif

typedef struct partile_gpu_workspace {
    void *ptr;
    size_t bytes;
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

#ifdef __cplusplus
}
#endif
#endif
