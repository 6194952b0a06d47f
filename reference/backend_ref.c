/* The reference backend: host memory, OpenMP, scalar fma(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/backend.h"
#include "common/error.h"
#include "reference/mma_ref.h"
#include "reference/sort_ref.h"
#include "reference/deposit_ref.h"
#include "reference/mass_ref.h"
#include "reference/apply_ref.h"
#include "reference/pairs_ref.h"

static int ref_device_count(int *count, const char **note)
{
    *count = 1;
    *note = "";
    return 0;
}

static int ref_open(int device, void **state, char *desc, size_t desc_len)
{
    (void)device;
    *state = NULL;
#ifdef _OPENMP
    snprintf(desc, desc_len, "host CPU (OpenMP)");
#else
    snprintf(desc, desc_len, "host CPU (serial)");
#endif
    return 0;
}

static int ref_close(void *state) { (void)state; return 0; }
static int ref_synchronize(void *state) { (void)state; return 0; }

static int ref_alloc(void *state, size_t bytes, void **ptr)
{
    (void)state;
    *ptr = malloc(bytes);
    return *ptr ? 0 : partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "malloc(%zu) failed", bytes);
}

static int ref_release(void *state, void *ptr) { (void)state; free(ptr); return 0; }

static int ref_copy(void *state, void *dst, const void *src, size_t bytes,
                    partile_copy_kind_t kind)
{
    (void)state;
    (void)kind;
    memmove(dst, src, bytes);
    return 0;
}

static int ref_fill(void *state, void *dst, int value, size_t bytes)
{
    (void)state;
    memset(dst, value, bytes);
    return 0;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int ref_timer_create(void *state, void **timer)
{
    (void)state;
    *timer = malloc(sizeof(double));
    return *timer ? 0 : partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "timer");
}

static int ref_timer_begin(void *state, void *timer)
{
    (void)state;
    *(double *)timer = now_seconds();
    return 0;
}

static int ref_timer_end(void *state, void *timer, double *seconds)
{
    (void)state;
    *seconds = now_seconds() - *(double *)timer;
    return 0;
}

static int ref_timer_destroy(void *state, void *timer) { (void)state; free(timer); return 0; }

static int ref_shape_available(void *state, int index) { (void)state; (void)index; return 1; }

static int ref_mma_batched(void *state, const partile_tile_t *tile, int shape_index,
                           size_t batch, int rows, int cols, int depth, const void *a,
                           const void *b, const void *c, void *d)
{
    (void)state;
    (void)shape_index;
    return partile_mma_batched_ref(tile, batch, rows, cols, depth, a, b, c, d);
}

static int ref_bin(void *state, const partile_grid_t *grid, size_t n,
                   const partile_vectors_t *pos, int64_t *cell, int64_t *bad)
{
    (void)state;
    return partile_bin_ref(grid, n, pos, cell, bad);
}

static int ref_sort(void *state, const partile_grid_t *grid, int64_t ncells, size_t n,
                    const partile_vectors_t *pos, int64_t *offsets, int64_t *perm,
                    int64_t *sorted_cell, int64_t *bad)
{
    (void)state;
    return partile_sort_ref(grid, ncells, n, pos, offsets, perm, sorted_cell, bad);
}

static int ref_resort(void *state, const partile_grid_t *grid, int64_t ncells, size_t n,
                      const partile_vectors_t *pos, const int64_t *old_offsets,
                      const int64_t *old_cell, int64_t *offsets, int64_t *perm,
                      int64_t *sorted_cell, int64_t *bad)
{
    (void)state;
    return partile_resort_ref(grid, ncells, n, pos, old_offsets, old_cell, offsets, perm,
                              sorted_cell, bad);
}

static int ref_check_permutation(void *state, size_t n, const int64_t *perm, int64_t *bad)
{
    (void)state;
    return partile_check_permutation_ref(n, perm, bad);
}

static int ref_permute(void *state, size_t n, const int64_t *perm, int count,
                       const partile_array_t *arrays, void *scratch)
{
    (void)state;
    return partile_permute_ref(n, perm, count, arrays, scratch);
}

static int ref_deposit(void *state, const partile_transfer_t *t, size_t n,
                       const partile_vectors_t *pos, const double *values,
                       const int64_t *cell_offsets, double *field, int64_t *bad)
{
    (void)state;
    return partile_deposit_ref(t, n, pos, values, cell_offsets, field, bad);
}

static int ref_gather(void *state, const partile_transfer_t *t, size_t n,
                      const partile_vectors_t *pos, const double *field, double *values,
                      int64_t *bad)
{
    (void)state;
    return partile_gather_ref(t, n, pos, field, values, bad);
}

static int ref_mass_assemble(void *state, const partile_mass_params_t *p, size_t n,
                             const partile_vectors_t *pos, const int64_t *cell_offsets,
                             const double *q, const partile_vectors_t *omega, double *storage,
                             int64_t *bad)
{
    (void)state;
    if (!cell_offsets) /* the unsorted atomic kernel is a GPU kernel */
        return partile_fail(PARTILE_ERROR_UNSUPPORTED,
                            "the reference backend assembles sorted particles only: pass the "
                            "cell list (cell_offsets)");
    return partile_mass_assemble_ref(p, n, pos, cell_offsets, q, omega, storage, bad);
}

static int ref_pairs(void *state, const partile_grid_t *grid, const partile_pair_params_t *params,
                     size_t n, const partile_vectors_t *pos, const int64_t *cell_offsets,
                     partile_vectors_t *force, void *scalar, int64_t *bad)
{
    (void)state;
    return partile_pairs_ref(grid, params, n, pos, cell_offsets, force, scalar, bad);
}

static int ref_apply_matfree(void *state, const partile_mass_params_t *p, size_t n,
                             const partile_vectors_t *pos, const int64_t *off, const double *q,
                             const partile_vectors_t *omega, const double *x, double *y,
                             int64_t *bad)
{
    (void)state;
    return partile_mass_apply_matfree_ref(p, n, pos, off, q, omega, x, y, bad);
}

static int ref_apply_matfree_f32(void *state, const partile_mass_params_t *p, size_t n,
                                 const partile_vectors_t *pos, const int64_t *off, const float *q,
                                 const partile_vectors_t *omega, const float *x, float *y,
                                 int64_t *bad)
{
    (void)state;
    return partile_mass_apply_matfree_f32_ref(p, n, pos, off, q, omega, x, y, bad);
}

static int ref_apply_assembled(void *state, const partile_mass_params_t *p, const double *storage,
                               const double *x, double *y)
{
    (void)state;
    return partile_mass_apply_assembled_ref(p, storage, x, y);
}

const partile_backend_ops_t partile_backend_reference = {
    .name = "reference",
    .targets = "host",
    .device_count = ref_device_count,
    .open = ref_open,
    .close = ref_close,
    .synchronize = ref_synchronize,
    .alloc = ref_alloc,
    .release = ref_release,
    .copy = ref_copy,
    .fill = ref_fill,
    .timer_create = ref_timer_create,
    .timer_begin = ref_timer_begin,
    .timer_end = ref_timer_end,
    .timer_destroy = ref_timer_destroy,
    .shapes = partile_reference_shapes,
    .shape_count = &partile_reference_shape_count,
    .shape_available = ref_shape_available,
    .any_shape = 1,
    .mma_batched = ref_mma_batched,
    .mma_peak = NULL,
    .bin = ref_bin,
    .sort = ref_sort,
    .resort = ref_resort,
    .check_permutation = ref_check_permutation,
    .permute = ref_permute,
    .deposit = ref_deposit,
    .gather = ref_gather,
    .mass_assemble = ref_mass_assemble,
    .mass_apply_matfree = ref_apply_matfree,
    .mass_apply_assembled = ref_apply_assembled,
    .mass_apply_matfree_f32 = ref_apply_matfree_f32,
    .pairs = ref_pairs,
};
