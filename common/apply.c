/* Front end of the mass-matrix application: checks and dispatch. */
#include <stdint.h>

#include "partile/apply.h"
#include "common/context_internal.h"
#include "common/mass_checks.h"

/* The checks both matrix-free applies (FP64, FP32) start with: the
 * pointers, the grid's layout for the shape and kind, and the order. */
static int check_matfree_args(const partile_mass_params_t *p, size_t n,
                              const partile_vectors_t *pos, const int64_t *cell_offsets,
                              const void *q, const void *x, const void *y)
{
    if (!p || !pos || !x || !y || !cell_offsets || (n > 0 && !q))
        return partile_fail(PARTILE_ERROR_NULL_POINTER,
                            "params, pos, x, y, cell_offsets or q is NULL");
    partile_mass_layout_t L;
    int st = partile_mass_layout(p->grid, p->shape, p->kind, &L);
    if (st < 0)
        return st;
    if (p->order != PARTILE_ORDER_BY_POINT && p->order != PARTILE_ORDER_BY_CELL)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "matrix-free apply order %d",
                            (int)p->order);
    return PARTILE_SUCCESS;
}

int partile_mass_apply_matfree(partile_context_t *ctx, const partile_mass_params_t *p, size_t n,
                               const partile_vectors_t *pos, const int64_t *cell_offsets,
                               const double *q, const partile_vectors_t *omega, const double *x,
                               double *y, int64_t *bad_particle)
{
    PARTILE_CHECK_CTX(ctx);
    int st = check_matfree_args(p, n, pos, cell_offsets, q, x, y);
    if (st < 0)
        return st;
    if ((st = partile_mass_check_particles(p, n, pos, omega)) < 0)
        return st;
    if (!ctx->ops->mass_apply_matfree)
        return partile_fail(PARTILE_ERROR_UNSUPPORTED,
                            "backend \"%s\" has no matrix-free apply yet", ctx->ops->name);
    int64_t bad = -1;
    st = ctx->ops->mass_apply_matfree(ctx->state, p, n, pos, cell_offsets, q, omega, x, y, &bad);
    return partile_mass_report(ctx, p, pos, p->kind == PARTILE_MASS_TENSOR ? omega : NULL, st, bad,
                               bad_particle);
}

int partile_mass_apply_assembled(partile_context_t *ctx, const partile_mass_params_t *p,
                                 const double *storage, const double *x, double *y)
{
    PARTILE_CHECK_CTX(ctx);
    if (!p || !storage || !x || !y)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "params, storage, x or y is NULL");
    partile_mass_layout_t L;
    int st = partile_mass_layout(p->grid, p->shape, p->kind, &L);
    if (st < 0)
        return st;
    if (!ctx->ops->mass_apply_assembled)
        return partile_fail(PARTILE_ERROR_UNSUPPORTED,
                            "backend \"%s\" has no assembled apply yet", ctx->ops->name);
    return ctx->ops->mass_apply_assembled(ctx->state, p, storage, x, y);
}

int partile_mass_apply_matfree_f32(partile_context_t *ctx, const partile_mass_params_t *p,
                                   size_t n, const partile_vectors_t *pos,
                                   const int64_t *cell_offsets, const float *q,
                                   const partile_vectors_t *omega, const float *x, float *y,
                                   int64_t *bad_particle)
{
    PARTILE_CHECK_CTX(ctx);
    int st = check_matfree_args(p, n, pos, cell_offsets, q, x, y);
    if (st < 0)
        return st;
    if (p->order != PARTILE_ORDER_BY_POINT)
        return partile_fail(PARTILE_ERROR_UNSUPPORTED,
                            "the FP32 matrix-free apply has the point order only (order %d)",
                            (int)p->order);
    /* the FP64 checks, with ω as FLOAT32 arrays */
    partile_vectors_t om64 = { PARTILE_DTYPE_FLOAT64, { NULL, NULL, NULL } };
    if (omega && p->kind == PARTILE_MASS_TENSOR && n > 0 &&
        (omega->type != PARTILE_DTYPE_FLOAT32 || !omega->axis[0] || !omega->axis[1] ||
         !omega->axis[2]))
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT,
                            "omega must be three FLOAT32 arrays for the FP32 apply");
    if (omega)
        for (int a = 0; a < 3; a++)
            om64.axis[a] = omega->axis[a];
    if ((st = partile_mass_check_particles(p, n, pos, omega ? &om64 : NULL)) < 0)
        return st;
    if (!ctx->ops->mass_apply_matfree_f32)
        return partile_fail(PARTILE_ERROR_UNSUPPORTED,
                            "backend \"%s\" has no FP32 matrix-free apply yet", ctx->ops->name);
    int64_t bad = -1;
    st = ctx->ops->mass_apply_matfree_f32(ctx->state, p, n, pos, cell_offsets, q,
                                          p->kind == PARTILE_MASS_TENSOR ? omega : NULL, x, y, &bad);
    return partile_mass_report(ctx, p, pos, p->kind == PARTILE_MASS_TENSOR ? omega : NULL, st, bad,
                               bad_particle);
}
