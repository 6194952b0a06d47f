/* Front end of binning and sorting: argument checks, dispatch, and the
 * sort-interval advisor (host arithmetic, identical for every backend). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partile/sort.h"
#include "common/bad_particle.h"
#include "common/checked.h"
#include "common/context_internal.h"
#include "common/grid_checks.h"

size_t partile_dtype_size(partile_dtype_t type)
{
    switch (type) {
    case PARTILE_DTYPE_FLOAT64:
    case PARTILE_DTYPE_INT64: return 8;
    case PARTILE_DTYPE_FLOAT32:
    case PARTILE_DTYPE_INT32: return 4;
    default: return 0;
    }
}

static const char *axis_name(int a) { return a == 0 ? "x" : a == 1 ? "y" : "z"; }

int partile_count_grid_cells(const partile_grid_t *g, int64_t *count)
{
    if (!g || !count)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "%s is NULL", g ? "count" : "grid");
    if (g->dim < 1 || g->dim > 3)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "grid dim %d not in 1..3", g->dim);
    int64_t total = 1;
    for (int a = 0; a < g->dim; a++) {
        if (g->cells[a] < 1)
            return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "grid cells along %s = %lld < 1",
                                axis_name(a), (long long)g->cells[a]);
        if (!(g->spacing[a] > 0.0) || !isfinite(g->spacing[a]) || !isfinite(g->lower[a]))
            return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT,
                                "grid along %s: spacing %g must be finite and > 0, lower %g finite",
                                axis_name(a), g->spacing[a], g->lower[a]);
        if (g->periodic[a] != 0 && g->periodic[a] != 1)
            return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "grid periodic[%d] = %d not 0/1",
                                a, g->periodic[a]);
        /* cell indices must be exact in double and leave room for +1 */
        if (total > (INT64_C(1) << 52) / g->cells[a])
            return partile_fail(PARTILE_ERROR_SIZE_OVERFLOW, "grid has more than 2^52 cells");
        total *= g->cells[a];
    }
    *count = total;
    return PARTILE_SUCCESS;
}

int partile_grid_cell_count(const partile_grid_t *g, int64_t *count)
{
    partile_clear_error();
    return partile_count_grid_cells(g, count);
}

static int check_vectors(const partile_grid_t *g, size_t n, const partile_vectors_t *v,
                         const char *what)
{
    if (!v)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "%s is NULL", what);
    if (v->type != PARTILE_DTYPE_FLOAT64 && v->type != PARTILE_DTYPE_FLOAT32)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT,
                            "%s must be FLOAT64 or FLOAT32 (type %d)", what, (int)v->type);
    for (int a = 0; a < g->dim; a++)
        if (n > 0 && !v->axis[a])
            return partile_fail(PARTILE_ERROR_NULL_POINTER, "%s axis %s is NULL", what,
                                axis_name(a));
    size_t bytes;
    if (partile_mul_size(n, 8, &bytes) || n > (size_t)INT64_MAX / 8)
        return partile_fail(PARTILE_ERROR_SIZE_OVERFLOW, "%zu particles overflow", n);
    return PARTILE_SUCCESS;
}

/* Names the first bad particle in the detail (where it is and what is
 * wrong with it) and in *bad_particle. */
static int finish(partile_context_t *ctx, const partile_grid_t *grid, const partile_vectors_t *pos,
                  int status, int64_t bad, int64_t *bad_particle)
{
    if (status == PARTILE_ERROR_NOT_SORTED && bad >= 0) { /* the old lists disagree: not */
        if (bad_particle)                                  /* about its position */
            *bad_particle = bad;
        return partile_fail(status, "particle %lld is not where old_cell/old_offsets place it "
                                    "(input not sorted by that cell list)", (long long)bad);
    }
    return partile_report_particle(ctx, status, bad, grid, pos, NULL, bad_particle);
}

#define NEED_OP(ctx, op)                                                        \
    do {                                                                        \
        if (!(ctx)->ops->op)                                                    \
            return partile_fail(PARTILE_ERROR_UNSUPPORTED, "backend \"%s\" has no %s", \
                                (ctx)->ops->name, #op);                         \
    } while (0)

int partile_bin(partile_context_t *ctx, const partile_grid_t *grid, size_t n,
                const partile_vectors_t *pos, int64_t *cell, int64_t *bad_particle)
{
    PARTILE_CHECK_CTX(ctx);
    int64_t ncells;
    int st = partile_count_grid_cells(grid, &ncells);
    if (st < 0 || (st = check_vectors(grid, n, pos, "pos")) < 0)
        return st;
    if (n == 0)
        return PARTILE_SUCCESS;
    if (!cell)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "cell is NULL");
    NEED_OP(ctx, bin);
    int64_t bad = -1;
    st = ctx->ops->bin(ctx->state, grid, n, pos, cell, &bad);
    return finish(ctx, grid, pos, st, bad, bad_particle);
}

int partile_sort(partile_context_t *ctx, const partile_grid_t *grid, size_t n,
                 const partile_vectors_t *pos, int64_t *offsets, int64_t *perm,
                 int64_t *sorted_cell, int64_t *bad_particle)
{
    PARTILE_CHECK_CTX(ctx);
    int64_t ncells;
    int st = partile_count_grid_cells(grid, &ncells);
    if (st < 0 || (st = check_vectors(grid, n, pos, "pos")) < 0)
        return st;
    if (!offsets || (n > 0 && !perm))
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "%s is NULL", offsets ? "perm" : "offsets");
    NEED_OP(ctx, sort);
    if (n == 0) /* every cell empty */
        return partile_memset(ctx, offsets, 0, (size_t)(ncells + 1) * sizeof *offsets);
    int64_t bad = -1;
    st = ctx->ops->sort(ctx->state, grid, ncells, n, pos, offsets, perm, sorted_cell, &bad);
    return finish(ctx, grid, pos, st, bad, bad_particle);
}

int partile_resort(partile_context_t *ctx, const partile_grid_t *grid, size_t n,
                   const partile_vectors_t *pos, const int64_t *old_offsets,
                   const int64_t *old_cell, int64_t *offsets, int64_t *perm,
                   int64_t *sorted_cell, int64_t *bad_particle)
{
    PARTILE_CHECK_CTX(ctx);
    int64_t ncells;
    int st = partile_count_grid_cells(grid, &ncells);
    if (st < 0 || (st = check_vectors(grid, n, pos, "pos")) < 0)
        return st;
    if (!offsets || !old_offsets || (n > 0 && (!perm || !old_cell)))
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "an offsets, cell or perm array is NULL");
    if ((const int64_t *)offsets == old_offsets || (const int64_t *)sorted_cell == old_cell ||
        (const int64_t *)perm == old_cell)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT,
                            "outputs must not overlap old_offsets / old_cell");
    NEED_OP(ctx, resort);
    if (n == 0)
        return partile_memset(ctx, offsets, 0, (size_t)(ncells + 1) * sizeof *offsets);
    int64_t bad = -1;
    st = ctx->ops->resort(ctx->state, grid, ncells, n, pos, old_offsets, old_cell, offsets, perm,
                          sorted_cell, &bad);
    return finish(ctx, grid, pos, st, bad, bad_particle);
}

int partile_permute(partile_context_t *ctx, size_t n, const int64_t *perm, int count,
                    const partile_array_t *arrays, void *scratch, size_t scratch_bytes)
{
    PARTILE_CHECK_CTX(ctx);
    if (count < 0)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "count %d < 0", count);
    if (n == 0 || count == 0)
        return PARTILE_SUCCESS;
    if (!perm || !arrays)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "%s is NULL", perm ? "arrays" : "perm");
    size_t largest = 0;
    for (int i = 0; i < count; i++) {
        size_t sz = partile_dtype_size(arrays[i].type);
        if (sz == 0)
            return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "array %d: unknown type %d", i,
                                (int)arrays[i].type);
        if (!arrays[i].data)
            return partile_fail(PARTILE_ERROR_NULL_POINTER, "array %d data is NULL", i);
        largest = sz > largest ? sz : largest;
    }
    size_t need;
    if (partile_mul_size(n, largest, &need) || n > (size_t)INT64_MAX)
        return partile_fail(PARTILE_ERROR_SIZE_OVERFLOW, "%zu elements overflow", n);
    if (scratch && scratch_bytes < need)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT,
                            "scratch holds %zu bytes, needs %zu", scratch_bytes, need);
    NEED_OP(ctx, permute);
    int64_t bad = -1;
    int st = ctx->ops->check_permutation(ctx->state, n, perm, &bad);
    if (st == PARTILE_ERROR_INVALID_ARGUMENT)
        return partile_fail(st, "perm is not a permutation of 0..%zu: entry %lld is out of "
                                "range or repeats an earlier one", n - 1, (long long)bad);
    if (st < 0)
        return st;
    void *own = NULL;
    if (!scratch) {
        if ((st = partile_malloc(ctx, need, &own)) < 0)
            return st;
        scratch = own;
    }
    st = ctx->ops->permute(ctx->state, n, perm, count, arrays, scratch);
    if (own) { /* the failure's detail kept: not partile_free, which clears it,
                * and a release that fails after it (a sticky device error)
                * does not replace it */
        char detail[512];
        snprintf(detail, sizeof detail, "%s", partile_last_error_detail());
        (void)ctx->ops->release(ctx->state, own);
        if (st < 0)
            partile_fail(st, "%s", detail);
    }
    return st;
}

/* ---- sort-interval advisor ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int partile_sort_interval(partile_context_t *ctx, const partile_grid_t *grid, size_t n,
                          const partile_vectors_t *vel, double alpha, double dt,
                          partile_sort_advice_t *advice)
{
    PARTILE_CHECK_CTX(ctx);
    int64_t ncells;
    int st = partile_count_grid_cells(grid, &ncells);
    if (st < 0 || (st = check_vectors(grid, n, vel, "velocities")) < 0)
        return st;
    if (!advice)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "advice is NULL");
    if (!(alpha >= 0.25 && alpha <= 0.5))
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "alpha %g not in [0.25, 0.5]", alpha);
    if (!(dt > 0.0) || !isfinite(dt))
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "dt %g must be finite and > 0", dt);
    if (n == 0)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "no particles: no velocity percentile");
    const size_t esz = vel->type == PARTILE_DTYPE_FLOAT32 ? 4 : 8;
    double *mag = malloc(n * sizeof *mag);
    void *raw = malloc(n * esz);
    if (!mag || !raw) {
        free(mag);
        free(raw);
        return partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "advisor buffers (%zu particles)", n);
    }
    partile_sort_advice_t out = { INT64_MAX, { 0, 0, 0 } };
    double limit = INFINITY;
    const size_t rank = (size_t)ceil(0.95 * (double)n); /* 1-based nearest rank */
    for (int a = 0; a < grid->dim && st >= 0; a++) {
        st = partile_memcpy(ctx, raw, vel->axis[a], n * esz, PARTILE_COPY_DEVICE_TO_HOST);
        if (st < 0)
            break;
        for (size_t i = 0; i < n; i++) {
            double v = esz == 4 ? (double)((float *)raw)[i] : ((double *)raw)[i];
            if (!isfinite(v)) {
                st = partile_fail(PARTILE_ERROR_NOT_FINITE,
                                  "velocity of particle %zu along %s is NaN or infinite", i,
                                  axis_name(a));
                break;
            }
            mag[i] = fabs(v);
        }
        if (st < 0)
            break;
        qsort(mag, n, sizeof *mag, cmp_double);
        out.u_char[a] = mag[(rank ? rank : 1) - 1];
        if (out.u_char[a] > 0.0) {
            double t = grid->spacing[a] / out.u_char[a];
            limit = t < limit ? t : limit;
        }
    }
    free(mag);
    free(raw);
    if (st < 0)
        return st;
    if (isfinite(limit)) {
        double steps = floor(alpha * limit / dt);
        out.n_sort = steps < 1.0 ? 1 : steps >= 0x1p62 ? INT64_MAX : (int64_t)steps;
    }
    *advice = out;
    return PARTILE_SUCCESS;
}
