/* The front end: backend registry, contexts, argument checks, dispatch.
 * Every public entry point validates its arguments here, so backends see
 * only well-formed requests and bad input never reaches a device. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "partile/partile.h"
#include "common/backend.h"
#include "common/checked.h"
#include "common/context_internal.h"
#include "common/error.h"


/* "auto" preference order. */
static const partile_backend_ops_t *const backends[] = {
    &partile_backend_cuda,
    &partile_backend_hip,
    &partile_backend_reference,
};
enum { BACKEND_COUNT = (int)(sizeof backends / sizeof backends[0]) };

static int compiled(const partile_backend_ops_t *ops) { return ops->open != NULL; }

int partile_backend_count(void) { return BACKEND_COUNT; }

int partile_backend_query(int index, partile_backend_info_t *info)
{
    partile_clear_error();
    if (!info)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "info is NULL");
    if (index < 0 || index >= BACKEND_COUNT)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT,
                            "backend index %d not in [0, %d)", index, BACKEND_COUNT);
    const partile_backend_ops_t *ops = backends[index];
    info->name = ops->name;
    info->compiled = compiled(ops);
    info->targets = ops->targets ? ops->targets : "";
    info->device_count = 0;
    info->note = "not compiled";
    if (info->compiled) {
        info->note = "";
        int status = ops->device_count(&info->device_count, &info->note);
        if (status < 0)
            info->device_count = 0;
    }
    return PARTILE_SUCCESS;
}

static const partile_backend_ops_t *find_backend(const char *name)
{
    for (int i = 0; i < BACKEND_COUNT; i++)
        if (strcmp(backends[i]->name, name) == 0)
            return backends[i];
    return NULL;
}

static int open_backend(const partile_backend_ops_t *ops, int device,
                        partile_context_t **ctx)
{
    if (!compiled(ops))
        return partile_fail(PARTILE_ERROR_NOT_COMPILED,
                            "backend \"%s\" was not compiled into this build "
                            "(reconfigure with -D%s=enabled)", ops->name, ops->name);
    int count = 0;
    const char *note = "";
    int status = ops->device_count(&count, &note);
    if (status < 0)
        return status;
    if (count == 0)
        return partile_fail(PARTILE_ERROR_NO_DEVICE, "backend \"%s\": %s",
                            ops->name, note);
    if (device < 0 || device >= count)
        return partile_fail(PARTILE_ERROR_BAD_DEVICE_INDEX,
                            "backend \"%s\" has %d device(s); asked for %d",
                            ops->name, count, device);
    partile_context_t *c = calloc(1, sizeof *c);
    if (!c)
        return partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "context allocation");
    c->ops = ops;
    status = ops->open(device, &c->state, c->device, sizeof c->device);
    if (status < 0) {
        free(c);
        return status;
    }
    *ctx = c;
    return PARTILE_SUCCESS;
}

int partile_context_create(const char *backend_name, int device,
                           partile_context_t **ctx)
{
    partile_clear_error();
    if (!ctx)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "ctx is NULL");
    *ctx = NULL;
    if (!backend_name)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "backend_name is NULL");
    if (strcmp(backend_name, "auto") == 0) {
        for (int i = 0; i < BACKEND_COUNT; i++) {
            int count = 0;
            const char *note;
            if (!compiled(backends[i]) || backends[i]->device_count(&count, &note) < 0 ||
                count == 0)
                continue;
            partile_clear_error();
            return open_backend(backends[i], backends[i] == &partile_backend_reference ? 0 : device, ctx);
        }
    }
    const partile_backend_ops_t *ops = find_backend(backend_name);
    if (!ops)
        return partile_fail(PARTILE_ERROR_UNKNOWN_BACKEND, "unknown backend \"%.64s\"",
                            backend_name);
    return open_backend(ops, device, ctx);
}

int partile_context_destroy(partile_context_t *ctx)
{
    partile_clear_error();
    if (!ctx)
        return PARTILE_SUCCESS;
    int status = ctx->ops->close(ctx->state);
    free(ctx);
    return status;
}

const char *partile_context_backend(const partile_context_t *ctx)
{
    return ctx ? ctx->ops->name : "(null)";
}

const char *partile_context_device(const partile_context_t *ctx)
{
    return ctx ? ctx->device : "(null)";
}

#define CHECK_CTX PARTILE_CHECK_CTX

int partile_context_synchronize(partile_context_t *ctx)
{
    CHECK_CTX(ctx);
    return ctx->ops->synchronize(ctx->state);
}

int partile_context_set_stream(partile_context_t *ctx, void *stream)
{
    CHECK_CTX(ctx);
    if (ctx->ops->set_stream)
        return ctx->ops->set_stream(ctx->state, stream);
    if (!stream)
        return PARTILE_SUCCESS;
    return partile_fail(PARTILE_ERROR_UNSUPPORTED,
                        "the %s backend runs on the host and has no stream; only NULL can be set",
                        ctx->ops->name);
}

int partile_context_get_stream(const partile_context_t *ctx, void **stream)
{
    CHECK_CTX(ctx);
    if (!stream)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "stream is NULL");
    *stream = ctx->ops->get_stream ? ctx->ops->get_stream(ctx->state) : NULL;
    return PARTILE_SUCCESS;
}

int partile_malloc(partile_context_t *ctx, size_t bytes, void **ptr)
{
    CHECK_CTX(ctx);
    if (!ptr)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "ptr is NULL");
    *ptr = NULL;
    if (bytes == 0)
        return PARTILE_SUCCESS;
    if (bytes > (SIZE_MAX >> 1))
        return partile_fail(PARTILE_ERROR_SIZE_OVERFLOW,
                            "allocation of %zu bytes is beyond any address space", bytes);
    return ctx->ops->alloc(ctx->state, bytes, ptr);
}

int partile_free(partile_context_t *ctx, void *ptr)
{
    CHECK_CTX(ctx);
    if (!ptr)
        return PARTILE_SUCCESS;
    return ctx->ops->release(ctx->state, ptr);
}

int partile_memcpy(partile_context_t *ctx, void *dst, const void *src,
                   size_t bytes, partile_copy_kind_t kind)
{
    CHECK_CTX(ctx);
    if (bytes == 0)
        return PARTILE_SUCCESS;
    if (!dst || !src)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "%s is NULL", dst ? "src" : "dst");
    if (kind != PARTILE_COPY_HOST_TO_DEVICE && kind != PARTILE_COPY_DEVICE_TO_HOST &&
        kind != PARTILE_COPY_DEVICE_TO_DEVICE)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "copy kind %d", (int)kind);
    return ctx->ops->copy(ctx->state, dst, src, bytes, kind);
}

int partile_memset(partile_context_t *ctx, void *dst, int value, size_t bytes)
{
    CHECK_CTX(ctx);
    if (bytes == 0)
        return PARTILE_SUCCESS;
    if (!dst)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "dst is NULL");
    return ctx->ops->fill(ctx->state, dst, value, bytes);
}

/* ---- tile engine ---- */

int partile_mma_shape_count(const partile_context_t *ctx, int *count)
{
    CHECK_CTX(ctx);
    if (!count)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "count is NULL");
    *count = ctx->ops->shape_count ? *ctx->ops->shape_count : 0;
    return PARTILE_SUCCESS;
}

int partile_mma_shape_get(const partile_context_t *ctx, int index,
                          partile_mma_shape_t *shape)
{
    CHECK_CTX(ctx);
    if (!shape)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "shape is NULL");
    int count = ctx->ops->shape_count ? *ctx->ops->shape_count : 0;
    if (index < 0 || index >= count)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT,
                            "shape index %d not in [0, %d)", index, count);
    *shape = ctx->ops->shapes[index];
    shape->available = ctx->ops->shape_available(ctx->state, index);
    return PARTILE_SUCCESS;
}

static int backend_for_shapes(const char *backend, const partile_backend_ops_t **ops)
{
    if (!backend)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "backend is NULL");
    *ops = find_backend(backend);
    if (!*ops)
        return partile_fail(PARTILE_ERROR_UNKNOWN_BACKEND, "unknown backend \"%.64s\"", backend);
    if (!compiled(*ops))
        return partile_fail(PARTILE_ERROR_NOT_COMPILED, "backend \"%s\" was not compiled",
                            backend);
    return PARTILE_SUCCESS;
}

int partile_backend_shape_count(const char *backend, int *count)
{
    partile_clear_error();
    const partile_backend_ops_t *ops = NULL;
    if (!count)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "count is NULL");
    int st = backend_for_shapes(backend, &ops);
    if (st < 0)
        return st;
    *count = ops->shape_count ? *ops->shape_count : 0;
    return PARTILE_SUCCESS;
}

int partile_backend_shape_get(const char *backend, int index, partile_mma_shape_t *shape)
{
    partile_clear_error();
    const partile_backend_ops_t *ops = NULL;
    if (!shape)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "shape is NULL");
    int st = backend_for_shapes(backend, &ops);
    if (st < 0)
        return st;
    int count = ops->shape_count ? *ops->shape_count : 0;
    if (index < 0 || index >= count)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "shape index %d not in [0, %d)",
                            index, count);
    *shape = ops->shapes[index];
    shape->available = 0;
    return PARTILE_SUCCESS;
}

static int tile_equal(const partile_tile_t *a, const partile_tile_t *b)
{
    return a->m == b->m && a->n == b->n && a->k == b->k && a->fin == b->fin &&
           a->facc == b->facc;
}

static int tile_valid(const partile_tile_t *t)
{
    if (t->m < 1 || t->n < 1 || t->k < 1 || t->m > 64 || t->n > 64 || t->k > 64)
        return 0;
    if (t->facc == PARTILE_FP64)
        return t->fin == PARTILE_FP64;
    if (t->facc == PARTILE_FP32)
        return t->fin == PARTILE_FP32 || t->fin == PARTILE_TF32 ||
               t->fin == PARTILE_FP16 || t->fin == PARTILE_BF16;
    return 0;
}

/* Finds the tile among the engine's shapes; checks it is usable here. */
static int resolve_tile(const partile_context_t *ctx, const partile_tile_t *tile,
                        int *shape_index)
{
    if (!tile_valid(tile))
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT,
                            "invalid tile m%dn%dk%d %s->%s (sizes 1..64; FP64 "
                            "accumulates FP64 input, FP32 the other formats)",
                            tile->m, tile->n, tile->k, partile_format_name(tile->fin),
                            partile_format_name(tile->facc));
    int count = ctx->ops->shape_count ? *ctx->ops->shape_count : 0;
    for (int i = 0; i < count; i++) {
        if (!tile_equal(&ctx->ops->shapes[i].tile, tile))
            continue;
        if (!ctx->ops->shape_available(ctx->state, i))
            return partile_fail(PARTILE_ERROR_UNSUPPORTED,
                                "tile %s needs %s; device is %s", ctx->ops->shapes[i].name,
                                ctx->ops->shapes[i].required_target, ctx->device);
        *shape_index = i;
        return PARTILE_SUCCESS;
    }
    if (ctx->ops->any_shape) {
        *shape_index = -1;
        return PARTILE_SUCCESS;
    }
    return partile_fail(PARTILE_ERROR_UNSUPPORTED,
                        "backend \"%s\" has no tile m%dn%dk%d %s->%s", ctx->ops->name,
                        tile->m, tile->n, tile->k, partile_format_name(tile->fin),
                        partile_format_name(tile->facc));
}

int partile_mma_batched(partile_context_t *ctx, const partile_tile_t *tile,
                        size_t batch, int rows, int cols, int depth,
                        const void *a, const void *b, const void *c, void *d)
{
    CHECK_CTX(ctx);
    if (!tile)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "tile is NULL");
    if (rows < 0 || cols < 0 || depth < 0)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT,
                            "negative size rows=%d cols=%d depth=%d", rows, cols, depth);
    int shape_index;
    int status = resolve_tile(ctx, tile, &shape_index);
    if (status < 0)
        return status;
    if (batch == 0 || rows == 0 || cols == 0)
        return PARTILE_SUCCESS;
    if (!c || !d || (depth > 0 && (!a || !b)))
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "an operand pointer is NULL");
    /* Every element count must fit in size_t and the kernels' 64-bit
     * indexing; a batch count must fit in the grid (2^31 - 1 warps/dim). */
    size_t na, nb, nc;
    size_t ein = partile_format_bytes(tile->fin), eacc = partile_format_bytes(tile->facc);
    if (partile_mul3_size(batch, (size_t)rows, (size_t)depth, &na) ||
        partile_mul3_size(batch, (size_t)depth, (size_t)cols, &nb) ||
        partile_mul3_size(batch, (size_t)rows, (size_t)cols, &nc) ||
        partile_mul_size(na, ein, &na) || partile_mul_size(nb, ein, &nb) ||
        partile_mul_size(nc, eacc, &nc) || batch > (size_t)INT32_MAX)
        return partile_fail(PARTILE_ERROR_SIZE_OVERFLOW,
                            "batch %zu of %dx%dx%d overflows", batch, rows, cols, depth);
    return ctx->ops->mma_batched(ctx->state, tile, shape_index, batch, rows, cols, depth,
                                 a, b, c, d);
}

int partile_mma_peak(partile_context_t *ctx, const partile_tile_t *tile,
                     double *flops_per_second)
{
    CHECK_CTX(ctx);
    if (!tile || !flops_per_second)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "%s is NULL",
                            tile ? "flops_per_second" : "tile");
    int shape_index;
    int status = resolve_tile(ctx, tile, &shape_index);
    if (status < 0)
        return status;
    if (!ctx->ops->mma_peak || shape_index < 0)
        return partile_fail(PARTILE_ERROR_UNSUPPORTED,
                            "backend \"%s\" has no peak-rate microbenchmark", ctx->ops->name);
    return ctx->ops->mma_peak(ctx->state, shape_index, flops_per_second);
}

int partile_fma_peak(partile_context_t *ctx, double *flops_per_second)
{
    CHECK_CTX(ctx);
    if (!flops_per_second)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "flops_per_second is NULL");
    if (!ctx->ops->fma_peak)
        return partile_fail(PARTILE_ERROR_UNSUPPORTED,
                            "backend \"%s\" has no FMA peak microbenchmark", ctx->ops->name);
    return ctx->ops->fma_peak(ctx->state, flops_per_second);
}

/* ---- timing ---- */

static int compare_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int partile_time(partile_context_t *ctx, partile_timed_fn fn, void *arg,
                 int warmup, int repeats, partile_timing_t *timing)
{
    CHECK_CTX(ctx);
    if (!fn || !timing)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "%s is NULL", fn ? "timing" : "fn");
    if (warmup < 0 || repeats < 1 || repeats > 100000)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT,
                            "warmup %d must be >= 0 and repeats %d in [1, 100000]",
                            warmup, repeats);
    for (int i = 0; i < warmup; i++) {
        int status = fn(ctx, arg);
        if (status < 0)
            return status;
    }
    double *t = malloc((size_t)repeats * sizeof *t);
    void *timer = NULL;
    if (!t)
        return partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "timing buffer");
    int status = ctx->ops->timer_create(ctx->state, &timer);
    for (int i = 0; i < repeats && status >= 0; i++) {
        status = ctx->ops->timer_begin(ctx->state, timer);
        if (status >= 0)
            status = fn(ctx, arg);
        if (status >= 0)
            status = ctx->ops->timer_end(ctx->state, timer, &t[i]);
    }
    if (timer)
        ctx->ops->timer_destroy(ctx->state, timer);
    if (status >= 0) {
        qsort(t, (size_t)repeats, sizeof *t, compare_double);
        timing->repeats = repeats;
        timing->min_s = t[0];
        timing->median_s = repeats % 2 ? t[repeats / 2]
                                       : 0.5 * (t[repeats / 2 - 1] + t[repeats / 2]);
    }
    free(t);
    return status;
}
