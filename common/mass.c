/* Front end of the mass matrix: layout, argument checks, dispatch, and the
 * export of canonical storage to CSR / BSR (host arithmetic, no rounding). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partile/mass.h"
#include "common/bad_particle.h"
#include "common/checked.h"
#include "common/context_internal.h"
#include "common/grid_checks.h"
#include "common/mass_checks.h"
#include "common/mass_math.h"
#include "common/shape.h"

static int check_shape_grid(const partile_grid_t *grid, partile_shape_t shape)
{
    int64_t ncells;
    int st = partile_count_grid_cells(grid, &ncells);
    if (st < 0)
        return st;
    if (shape != PARTILE_SHAPE_CIC && shape != PARTILE_SHAPE_TSC)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT,
                            "the mass matrix takes CIC or TSC (shape %d)", (int)shape);
    const int n = partile_mass_order((int)shape);
    for (int a = 0; a < grid->dim; a++)
        if (grid->periodic[a] && grid->cells[a] < 2 * n + 1)
            return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT,
                                "periodic axis %d has %lld cells; %s needs at least %d", a,
                                (long long)grid->cells[a], n == 1 ? "CIC" : "TSC", 2 * n + 1);
    return 0;
}

int partile_mass_layout(const partile_grid_t *grid, partile_shape_t shape,
                        partile_mass_kind_t kind, partile_mass_layout_t *layout)
{
    partile_clear_error();
    if (!layout)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "layout is NULL");
    int st = check_shape_grid(grid, shape);
    if (st < 0)
        return st;
    if (kind != PARTILE_MASS_SCALAR && kind != PARTILE_MASS_TENSOR)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "kind %d", (int)kind);
    int64_t pts[3], total;
    if ((st = partile_count_field_points(grid, PARTILE_CENTERING_NODE, pts, &total)) < 0)
        return st;
    layout->points = total;
    layout->offsets = partile_mass_stored_offsets((int)shape, grid->dim);
    layout->components = kind == PARTILE_MASS_TENSOR ? 9 : 1;
    if (partile_mul3_size((size_t)total, (size_t)layout->offsets, (size_t)layout->components,
                          &layout->entries) ||
        layout->entries > SIZE_MAX / 8)
        return partile_fail(PARTILE_ERROR_SIZE_OVERFLOW, "mass matrix storage overflows");
    return 0;
}

int partile_mass_assemble(partile_context_t *ctx, const partile_mass_params_t *p, size_t n,
                          const partile_vectors_t *pos, const int64_t *cell_offsets,
                          const double *q, const partile_vectors_t *omega, double *storage,
                          int64_t *bad_particle)
{
    PARTILE_CHECK_CTX(ctx);
    if (!p || !pos)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "%s is NULL", p ? "pos" : "params");
    partile_mass_layout_t layout;
    int st = partile_mass_layout(p->grid, p->shape, p->kind, &layout);
    if (st < 0)
        return st;
    if (p->algorithm != PARTILE_MASS_TILES && p->algorithm != PARTILE_MASS_FMA_PER_CELL &&
        p->algorithm != PARTILE_MASS_ATOMIC_UNSORTED)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "algorithm %d is unknown",
                            (int)p->algorithm);
    if (p->precision != PARTILE_MASS_FP64 && p->precision != PARTILE_MASS_TF32)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "precision %d is neither FP64 nor TF32",
                            (int)p->precision);
    if (p->algorithm == PARTILE_MASS_ATOMIC_UNSORTED && p->mode != PARTILE_MASS_RELAXED)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT,
                            "the unsorted atomic kernel is relaxed only (set mode RELAXED)");
    const int offsets_optional = p->algorithm == PARTILE_MASS_ATOMIC_UNSORTED;
    if (!storage || (!cell_offsets && !offsets_optional) || (n > 0 && !q))
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "storage, cell_offsets or q is NULL");
    if ((st = partile_mass_check_particles(p, n, pos, omega)) < 0)
        return st;
    if (p->mode != PARTILE_MASS_BITWISE && p->mode != PARTILE_MASS_RELAXED)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "mode %d is neither bitwise nor relaxed",
                            (int)p->mode);
    if (!ctx->ops->mass_assemble)
        return partile_fail(PARTILE_ERROR_UNSUPPORTED,
                            "backend \"%s\" has no mass-matrix assembly yet", ctx->ops->name);
    int64_t bad = -1;
    st = ctx->ops->mass_assemble(ctx->state, p, n, pos, cell_offsets, q, omega, storage, &bad);
    return partile_mass_report(ctx, p, pos, omega, st, bad, bad_particle);
}

int partile_mass_check_particles(const partile_mass_params_t *p, size_t n,
                                 const partile_vectors_t *pos, const partile_vectors_t *omega)
{
    if (pos->type != PARTILE_DTYPE_FLOAT64 && pos->type != PARTILE_DTYPE_FLOAT32)
        return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "positions must be FLOAT64 or FLOAT32");
    for (int a = 0; a < p->grid->dim; a++)
        if (n > 0 && !pos->axis[a])
            return partile_fail(PARTILE_ERROR_NULL_POINTER, "position axis %d is NULL", a);
    if (p->kind == PARTILE_MASS_TENSOR && n > 0) {
        if (omega && (omega->type != PARTILE_DTYPE_FLOAT64 || !omega->axis[0] || !omega->axis[1] ||
                      !omega->axis[2]))
            return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT,
                                "omega must be three FLOAT64 arrays");
        if (!omega && !p->bfield)
            return partile_fail(PARTILE_ERROR_NULL_POINTER,
                                "the tensor kind needs omega or params->bfield");
        if (!omega && !isfinite(p->beta_over_c))
            return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "beta_over_c is not finite");
    }
    return 0;
}

int partile_mass_report(partile_context_t *ctx, const partile_mass_params_t *p,
                        const partile_vectors_t *pos, const partile_vectors_t *omega, int status,
                        int64_t bad, int64_t *bad_particle)
{
    char cause[200] = ""; /* NOT_FINITE for its ω, not its position */
    double w[3];
    if (status == PARTILE_ERROR_NOT_FINITE && bad >= 0 && p->kind == PARTILE_MASS_TENSOR &&
             omega && partile_read_value(ctx, omega->axis[0], omega->type, bad, &w[0]) == 0 &&
             partile_read_value(ctx, omega->axis[1], omega->type, bad, &w[1]) == 0 &&
             partile_read_value(ctx, omega->axis[2], omega->type, bad, &w[2]) == 0)
        snprintf(cause, sizeof cause, "its omega (%.17g, %.17g, %.17g) is not finite", w[0], w[1],
                 w[2]);
    else if (status == PARTILE_ERROR_NOT_FINITE && p->kind == PARTILE_MASS_TENSOR && !omega)
        snprintf(cause, sizeof cause, "its omega = beta_over_c * B(x), B gathered from "
                                      "params->bfield, is not finite (a non-finite B near it, or "
                                      "an overflow)");
    return partile_report_particle(ctx, status, bad, p->grid, pos, cause, bad_particle);
}

/* ---- export ---- */

/* Neighbour g + o of point index (i0, i1, i2) (stored indices), or -1. */
static int64_t neighbour(const partile_grid_t *g, const int64_t pts[3], const int64_t idx[3],
                         const int o[3])
{
    int64_t out = 0, stride = 1;
    for (int a = 0; a < g->dim; a++) {
        int64_t j = idx[a] + o[a];
        if (g->periodic[a])
            j = ((j % pts[a]) + pts[a]) % pts[a];
        else if (j < 0 || j >= pts[a])
            return -1;
        out += j * stride;
        stride *= pts[a];
    }
    return out;
}

/* Calls visit(row, col, source point, slot) for every coupling of a row, in
 * ascending column order. */
typedef struct export_ctx {
    int64_t *indptr, *indices;
    double *data;
    const double *storage;
    int comps, slots;
    int64_t count;
} export_ctx;

typedef struct col_entry {
    int64_t col, src;
    int slot;
} col_entry;

static int cmp_col(const void *x, const void *y)
{
    const col_entry *a = x, *b = y;
    return (a->col > b->col) - (a->col < b->col);
}

static int export_all(const partile_grid_t *g, partile_shape_t shape, export_ctx *e)
{
    int64_t pts[3], total;
    partile_count_field_points(g, PARTILE_CENTERING_NODE, pts, &total);
    const int n = partile_mass_order((int)shape);
    col_entry row[125];
    if (e->indptr)
        e->indptr[0] = 0;
    e->count = 0;
    for (int64_t r = 0; r < total; r++) {
        const int64_t idx[3] = { r % pts[0], r / pts[0] % pts[1], r / (pts[0] * pts[1]) };
        int m = 0;
        int o[3] = { 0, 0, 0 };
        for (o[2] = g->dim > 2 ? -n : 0; o[2] <= (g->dim > 2 ? n : 0); o[2]++)
            for (o[1] = g->dim > 1 ? -n : 0; o[1] <= (g->dim > 1 ? n : 0); o[1]++)
                for (o[0] = -n; o[0] <= n; o[0]++) {
                    int64_t c = neighbour(g, pts, idx, o);
                    if (c < 0)
                        continue;
                    int slot = partile_mass_slot((int)shape, g->dim, o);
                    if (slot >= 0) {
                        row[m++] = (col_entry){ c, r, slot };
                    } else { /* backward: stored at the neighbour, offset −o */
                        int neg[3] = { -o[0], -o[1], -o[2] };
                        row[m++] = (col_entry){ c, c, partile_mass_slot((int)shape, g->dim, neg) };
                    }
                }
        qsort(row, (size_t)m, sizeof row[0], cmp_col);
        for (int k = 0; k < m; k++, e->count++) {
            if (e->indices)
                e->indices[e->count] = row[k].col;
            if (e->data)
                memcpy(e->data + e->count * e->comps,
                       e->storage + (row[k].src * e->slots + row[k].slot) * e->comps,
                       (size_t)e->comps * sizeof(double));
        }
        if (e->indptr)
            e->indptr[r + 1] = e->count;
    }
    return 0;
}

/* The couplings export_all writes, counted without walking the points (a
 * walk took minutes at 1000^3 points, before the caller could learn that
 * the matrix would not fit). A row's columns are the product of its
 * neighbours along each axis, so the count is the product over the axes of
 * the neighbours summed along each: P·(2n + 1) on a periodic axis (at least
 * 2n + 1 points, check_shape_grid: all distinct); on a non-periodic one the
 * n points at each end lose n, n − 1, … 1 of them (P >= 4 >= 2n points, so
 * no point loses at both ends). */
static int export_count(const partile_grid_t *g, partile_shape_t shape, int64_t *nnz)
{
    int64_t pts[3];
    partile_grid_points(g, PARTILE_CENTERING_NODE, pts);
    const int64_t n = partile_mass_order((int)shape);
    int64_t count = 1;
    for (int a = 0; a < g->dim; a++) {
        const int64_t along = pts[a] * (2 * n + 1) - (g->periodic[a] ? 0 : n * (n + 1));
        if (count > INT64_MAX / along)
            return partile_fail(PARTILE_ERROR_SIZE_OVERFLOW,
                                "the exported matrix's entries overflow int64_t");
        count *= along;
    }
    *nnz = count;
    return 0;
}

int partile_mass_export_count(const partile_grid_t *grid, partile_shape_t shape, int64_t *nnz)
{
    partile_clear_error();
    if (!nnz)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "nnz is NULL");
    int st = check_shape_grid(grid, shape);
    if (st < 0)
        return st;
    return export_count(grid, shape, nnz);
}

int partile_mass_export(const partile_grid_t *grid, partile_shape_t shape, partile_mass_kind_t kind,
                        const double *storage, int64_t *indptr, int64_t *indices, double *data)
{
    partile_mass_layout_t layout;
    int st = partile_mass_layout(grid, shape, kind, &layout);
    if (st < 0)
        return st;
    if (!storage || !indptr || !indices || !data)
        return partile_fail(PARTILE_ERROR_NULL_POINTER, "an export array is NULL");
    export_ctx e = { indptr, indices, data, storage, layout.components, layout.offsets, 0 };
    return export_all(grid, shape, &e);
}
