/* Front end of the mass-matrix application: checks and dispatch. */
#include <math.h>
#include <stdint.h>

#include "partile/apply.h"
#include "common/context_internal.h"

int partile_mass_apply_matfree(partile_context_t *ctx, const partile_mass_params_t *p, size_t n,
                               const partile_vectors_t *pos, const int64_t *cell_offsets,
                               const double *q, const partile_vectors_t *omega, const double *x,
                               double *y, int64_t *bad_particle)
{
    PARTILE_CHECK_CTX(ctx);
    if (!p || !pos || !x || !y || !cell_offsets || (n > 0 && !q))
        return partile_fail(PARTILE_ERROR_NULL_POINTER,
                            "params, pos, x, y, cell_offsets or q is NULL");
    partile_mass_layout_t L;
    int st = partile_mass_layout(p->grid, p->shape, p->kind, &L);
    if (st < 0)
        return st;
    if (pos->type != PARTILE_DTYPE_FLOAT64 && pos->type != PARTILE_DTYPE_FLOAT32)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "positions must be FLOAT64 or FLOAT32");
    for (int a = 0; a < p->grid->dim; a++)
        if (n > 0 && !pos->axis[a])
            return partile_fail(PARTILE_ERROR_NULL_POINTER, "position axis %d is NULL", a);
    if (p->kind == PARTILE_MASS_TENSOR && n > 0) {
        if (omega && (omega->type != PARTILE_DTYPE_FLOAT64 || !omega->axis[0] || !omega->axis[1] ||
                      !omega->axis[2]))
            return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "omega must be three FLOAT64 arrays");
        if (!omega && !p->bfield)
            return partile_fail(PARTILE_ERROR_NULL_POINTER,
                                "the tensor kind needs omega or params->bfield");
    }
    if (!ctx->ops->mass_apply_matfree)
        return partile_fail(PARTILE_ERROR_UNSUPPORTED,
                            "backend \"%s\" has no matrix-free apply yet", ctx->ops->name);
    int64_t bad = -1;
    st = ctx->ops->mass_apply_matfree(ctx->state, p, n, pos, cell_offsets, q, omega, x, y, &bad);
    if (st < 0 && bad >= 0) {
        if (bad_particle)
            *bad_particle = bad;
        return partile_fail(st, "particle %lld: %s", (long long)bad, partile_status_string(st));
    }
    return st;
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
