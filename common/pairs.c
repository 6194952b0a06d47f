/* Front end of pair interactions: checks, dispatch, and the FP64 total
 * (summed on the host in particle order, the same for every backend). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "partile/pairs.h"
#include "partile/timing.h"
#include "common/bad_particle.h"
#include "common/checked.h"
#include "common/context_internal.h"
#include "common/grid_checks.h"

static int check_params(const partile_grid_t *g, const partile_pair_params_t *p)
{
    if (!(p->cutoff > 0) || !isfinite(p->cutoff))
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "cutoff %g must be finite and > 0",
                            p->cutoff);
    for (int a = 0; a < g->dim; a++) {
        if (g->spacing[a] < p->cutoff)
            return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT,
                                "cells along axis %d are %g wide, narrower than the cutoff %g", a,
                                g->spacing[a], p->cutoff);
        if (g->periodic[a] && g->cells[a] < 3)
            return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT,
                                "periodic axis %d needs at least 3 cells (has %lld)", a,
                                (long long)g->cells[a]);
    }
    if (p->interaction == PARTILE_PAIRS_LJ) {
        if (!(p->sigma > 0) || !isfinite(p->sigma) || !isfinite(p->epsilon))
            return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "LJ needs finite epsilon and sigma > 0");
    } else if (p->interaction == PARTILE_PAIRS_SPH_DENSITY) {
        if (!(p->h > 0) || !(2 * p->h <= p->cutoff) || !isfinite(p->mass))
            return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT,
                                "SPH needs h > 0 with support 2h <= cutoff, and a finite mass");
    } else {
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "interaction %d", (int)p->interaction);
    }
    if (p->strategy < 0 || p->strategy >= PARTILE_PAIRS_STRATEGIES)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "strategy %d (0 auto to %d)",
                            p->strategy, PARTILE_PAIRS_STRATEGIES - 1);
    return 0;
}

int partile_pairs(partile_context_t *ctx, const partile_grid_t *grid,
                  const partile_pair_params_t *params, size_t n, const partile_vectors_t *pos,
                  const int64_t *cell_offsets, partile_vectors_t *force, void *scalar,
                  double *total, int64_t *bad_particle)
{
    PARTILE_CHECK_CTX(ctx);
    int64_t ncells;
    int st = partile_count_grid_cells(grid, &ncells);
    if (st < 0)
        return st;
    if (!params || !pos || !cell_offsets)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "params, pos or cell_offsets is NULL");
    if ((st = check_params(grid, params)) < 0)
        return st;
    if (pos->type != PARTILE_DTYPE_FLOAT64 && pos->type != PARTILE_DTYPE_FLOAT32)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "positions must be FLOAT64 or FLOAT32");
    for (int a = 0; a < grid->dim; a++)
        if (n > 0 && (!pos->axis[a] || (force && !force->axis[a])))
            return partile_fail(PARTILE_ERROR_NULL_POINTER, "a position or force axis is NULL");
    if (force && force->type != pos->type)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "force must have the positions' type");
    if (params->interaction == PARTILE_PAIRS_SPH_DENSITY && force)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "SPH density has no force output");
    if (n == 0) {
        if (total)
            *total = 0.0;
        return PARTILE_SUCCESS;
    }
    if (total && !scalar)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "total needs the scalar output");
    if (!ctx->ops->pairs)
        return partile_fail(PARTILE_ERROR_UNSUPPORTED,
                            "backend \"%s\" has no pair interactions yet", ctx->ops->name);
    /* the total's host copy before the outputs are written, so that running
     * out of host memory leaves them untouched */
    const size_t esz = pos->type == PARTILE_DTYPE_FLOAT32 ? 4 : 8;
    size_t bytes = 0;
    void *h = NULL;
    if (total && partile_mul_size(n, esz, &bytes))
        return partile_fail(PARTILE_ERROR_SIZE_OVERFLOW, "total: %zu particles", n);
    if (total && !(h = malloc(bytes)))
        return partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "total: %zu bytes of host memory",
                            bytes);
    int64_t bad = -1;
    st = ctx->ops->pairs(ctx->state, grid, params, n, pos, cell_offsets, force, scalar, &bad);
    if (st < 0) {
        free(h);
        return partile_report_particle(ctx, st, bad, grid, pos, NULL, bad_particle);
    }
    if (total) {
        st = partile_memcpy(ctx, h, scalar, bytes, PARTILE_COPY_DEVICE_TO_HOST);
        double s = 0.0;
        for (size_t i = 0; i < n && st >= 0; i++)
            s += esz == 4 ? (double)((float *)h)[i] : ((double *)h)[i];
        free(h);
        if (st >= 0)
            *total = s;
    }
    return st;
}

static const char *const strategy_names[PARTILE_PAIRS_STRATEGIES] = {
    "auto", "naive", "all-in-sm", "x-pencil", "x-pencil-reg"
};

const char *partile_pairs_strategy_name(int strategy)
{
    return strategy >= 0 && strategy < PARTILE_PAIRS_STRATEGIES ? strategy_names[strategy] : NULL;
}

int partile_pairs_strategy_from_name(const char *name, int *strategy)
{
    partile_clear_error();
    if (!name || !strategy)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "name or strategy is NULL");
    for (int s = 0; s < PARTILE_PAIRS_STRATEGIES; s++)
        if (!strcmp(name, strategy_names[s])) {
            *strategy = s;
            return PARTILE_SUCCESS;
        }
    return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "no pair strategy \"%s\"", name);
}

typedef struct select_call {
    const partile_grid_t *grid;
    partile_pair_params_t params;
    size_t n;
    const partile_vectors_t *pos;
    const int64_t *off;
    partile_vectors_t *force;
    void *scalar;
} select_call;

static int select_run(partile_context_t *ctx, void *arg)
{
    select_call *c = arg;
    return partile_pairs(ctx, c->grid, &c->params, c->n, c->pos, c->off, c->force, c->scalar,
                         NULL, NULL);
}

int partile_pairs_select(partile_context_t *ctx, const partile_grid_t *grid,
                         const partile_pair_params_t *params, size_t n,
                         const partile_vectors_t *pos, const int64_t *cell_offsets,
                         partile_vectors_t *force, void *scalar, int *strategy,
                         double times[PARTILE_PAIRS_STRATEGIES])
{
    PARTILE_CHECK_CTX(ctx);
    if (!params || !strategy)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "params or strategy is NULL");
    select_call c = { grid, *params, n, pos, cell_offsets, force, scalar };
    c.params.strategy = PARTILE_PAIRS_AUTO;
    /* the arguments, checked once (a bad input fails here, not in the timing) */
    int st = select_run(ctx, &c);
    if (st < 0)
        return st;
    /* Two runs of each strategy, and where the best takes less than a
     * millisecond a second pass of ten more, keeping each one's fastest:
     * two runs of 0.1 ms once picked a strategy 12 % slower than the best
     * (bench/RESULTS.md, 2026-12-03, twenty-third session). */
    double t_min[PARTILE_PAIRS_STRATEGIES] = { 0 };
    int best = PARTILE_PAIRS_NAIVE;
    for (int pass = 0, reps = 2; pass < 2; pass++, reps = 10) {
        for (int s = PARTILE_PAIRS_NAIVE; s < PARTILE_PAIRS_STRATEGIES; s++) {
            c.params.strategy = s;
            partile_timing_t t;
            if ((st = partile_time(ctx, select_run, &c, pass == 0, reps, &t)) < 0)
                return st;
            if (pass == 0 || t.min_s < t_min[s])
                t_min[s] = t.min_s;
        }
        best = PARTILE_PAIRS_NAIVE;
        for (int s = PARTILE_PAIRS_NAIVE + 1; s < PARTILE_PAIRS_STRATEGIES; s++)
            if (t_min[s] < t_min[best])
                best = s;
        if (t_min[best] >= 1e-3)
            break;
    }
    if (times)
        for (int s = 0; s < PARTILE_PAIRS_STRATEGIES; s++)
            times[s] = t_min[s];
    *strategy = best;
    return PARTILE_SUCCESS;
}
