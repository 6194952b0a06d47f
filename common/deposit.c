/* Front end of deposit and gather: argument checks and dispatch. */
#include <stdint.h>
#include <stdio.h>

#include "partile/deposit.h"
#include "common/bad_particle.h"
#include "common/checked.h"
#include "common/context_internal.h"
#include "common/grid_checks.h"
#include "common/shape.h"

int partile_count_field_points(const partile_grid_t *grid, partile_centering_t centering,
                               int64_t points[3], int64_t *total)
{
    int64_t ncells;
    int st = partile_count_grid_cells(grid, &ncells);
    if (st < 0)
        return st;
    if (!points || !total)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "%s is NULL", points ? "total" : "points");
    if (centering != PARTILE_CENTERING_NODE && centering != PARTILE_CENTERING_CELL)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "centering %d", (int)centering);
    *total = partile_grid_points(grid, centering, points);
    return PARTILE_SUCCESS;
}

int partile_field_shape(const partile_grid_t *grid, partile_centering_t centering,
                        int64_t points[3], int64_t *total)
{
    partile_clear_error();
    return partile_count_field_points(grid, centering, points, total);
}

static int check_transfer(const partile_transfer_t *t, size_t n, const partile_vectors_t *pos)
{
    if (!t || !pos)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "%s is NULL", t ? "pos" : "transfer");
    int64_t points[3], total;
    int st = partile_count_field_points(t->grid, t->centering, points, &total);
    if (st < 0)
        return st;
    if (t->shape < PARTILE_SHAPE_NGP || t->shape > PARTILE_SHAPE_OVERLAP)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "shape %d", (int)t->shape);
    if (t->components < 1 || t->components > PARTILE_MAX_COMPONENTS)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "components %d not in 1..%d",
                            t->components, PARTILE_MAX_COMPONENTS);
    if (t->shape == PARTILE_SHAPE_OVERLAP && n > 0 && !t->sizes)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "OVERLAP needs particle sizes");
    if (pos->type != PARTILE_DTYPE_FLOAT64 && pos->type != PARTILE_DTYPE_FLOAT32)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "positions must be FLOAT64 or FLOAT32");
    for (int a = 0; a < t->grid->dim; a++)
        if (n > 0 && !pos->axis[a])
            return partile_fail(PARTILE_ERROR_NULL_POINTER, "position axis %d is NULL", a);
    size_t bytes;
    if (partile_mul3_size(n, (size_t)t->components, 8, &bytes) ||
        partile_mul3_size((size_t)total, (size_t)t->components, 8, &bytes) ||
        n > (size_t)INT64_MAX / 64)
        return partile_fail(PARTILE_ERROR_SIZE_OVERFLOW, "%zu particles × %d components overflow",
                            n, t->components);
    return PARTILE_SUCCESS;
}

/* Names the first bad particle in the detail (where it is and what is
 * wrong with it) and in *bad_particle. */
static int report(partile_context_t *ctx, const partile_transfer_t *t, const partile_vectors_t *pos,
                  int st, int64_t bad, int64_t *bad_particle)
{
    char cause[240] = ""; /* INVALID_ARGUMENT names a particle for its OVERLAP size */
    double size;
    if (st == PARTILE_ERROR_INVALID_ARGUMENT && bad >= 0 && t->shape == PARTILE_SHAPE_OVERLAP &&
        partile_read_value(ctx, t->sizes, PARTILE_DTYPE_FLOAT64, bad, &size) == 0) {
        int a = 0, len; /* the axis it exceeds (or the first), as the spacing is stored */
        while (a + 1 < t->grid->dim && !(size > t->grid->spacing[a]))
            a++;
        len = snprintf(cause, sizeof cause, "its OVERLAP size %.17g must be > 0 and <= the "
                       "spacing on every axis (%.17g along %c", size, t->grid->spacing[a],
                       "xyz"[a]);
        if (len > 0 && (size_t)len < sizeof cause)
            snprintf(cause + len, sizeof cause - (size_t)len, "%s)",
                     size > t->grid->spacing[a] && size <= (t->grid->spacing[a] * (1 + 1e-12))
                         ? ", a rounding of the spacing below the size" : "");
    }
    else if (st == PARTILE_ERROR_INVALID_ARGUMENT)
        snprintf(cause, sizeof cause, "OVERLAP size must be > 0 and <= the spacing on every axis");
    return partile_report_particle(ctx, st, bad, t->grid, pos, cause, bad_particle);
}

int partile_deposit(partile_context_t *ctx, const partile_transfer_t *t, size_t n,
                    const partile_vectors_t *pos, const double *values,
                    const int64_t *cell_offsets, double *field, int64_t *bad_particle)
{
    PARTILE_CHECK_CTX(ctx);
    int st = check_transfer(t, n, pos);
    if (st < 0)
        return st;
    if (!field || (n > 0 && !values))
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "%s is NULL", field ? "values" : "field");
    if (t->order != PARTILE_ORDER_BY_POINT && t->order != PARTILE_ORDER_BY_CELL)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "deposit order %d", (int)t->order);
    if (!ctx->ops->deposit)
        return partile_fail(PARTILE_ERROR_UNSUPPORTED, "backend \"%s\" has no deposit",
                            ctx->ops->name);
    int64_t bad = -1;
    st = ctx->ops->deposit(ctx->state, t, n, pos, values, cell_offsets, field, &bad);
    return report(ctx, t, pos, st, bad, bad_particle);
}

int partile_gather(partile_context_t *ctx, const partile_transfer_t *t, size_t n,
                   const partile_vectors_t *pos, const double *field, double *values,
                   int64_t *bad_particle)
{
    PARTILE_CHECK_CTX(ctx);
    int st = check_transfer(t, n, pos);
    if (st < 0)
        return st;
    if (n == 0)
        return PARTILE_SUCCESS;
    if (!field || !values)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "%s is NULL", field ? "values" : "field");
    if (!ctx->ops->gather)
        return partile_fail(PARTILE_ERROR_UNSUPPORTED, "backend \"%s\" has no gather",
                            ctx->ops->name);
    int64_t bad = -1;
    st = ctx->ops->gather(ctx->state, t, n, pos, field, values, &bad);
    return report(ctx, t, pos, st, bad, bad_particle);
}
