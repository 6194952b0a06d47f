/* Reference deposit and gather: the order of include/partile/deposit.h,
 * written as directly as possible. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/grid_checks.h"
#include "common/shape.h"
#include "reference/deposit_ref.h"
#include "reference/sort_ref.h"

static double size_of(const partile_transfer_t *t, int64_t p)
{
    return t->shape == PARTILE_SHAPE_OVERLAP ? t->sizes[p] : 0.0;
}

/* 0 < d_p <= spacing on every axis (and finite). */
static int check_sizes(const partile_transfer_t *t, size_t n, int64_t *bad)
{
    if (t->shape != PARTILE_SHAPE_OVERLAP)
        return 0;
    for (size_t p = 0; p < n; p++) {
        double d = t->sizes[p];
        int ok = d > 0.0 && isfinite(d);
        for (int a = 0; a < t->grid->dim; a++)
            ok &= d <= t->grid->spacing[a];
        if (!ok) {
            *bad = (int64_t)p;
            return PARTILE_ERROR_INVALID_ARGUMENT;
        }
    }
    return 0;
}

/* Stored point index of stencil entry (a, b, c). */
static int64_t point_of(const partile_grid_t *g, int centering, const partile_stencil_1d st[3],
                        int a, int b, int c)
{
    const int64_t i[3] = { st[0].first + a, st[1].first + b, st[2].first + c };
    int64_t index = 0, stride = 1;
    for (int ax = 0; ax < g->dim; ax++) {
        index += partile_point_index(i[ax], g->cells[ax], g->periodic[ax]) * stride;
        stride *= partile_axis_points(g->cells[ax], g->periodic[ax], centering);
    }
    return index;
}

static void load_x(const partile_vectors_t *pos, int dim, int64_t p, double x[3])
{
    for (int a = 0; a < 3; a++)
        x[a] = a < dim ? partile_vector_at(pos, a, p) : 0.0;
}

int partile_stencil_entries_ref(const partile_transfer_t *t, const partile_vectors_t *pos,
                                int64_t p, int64_t point[27], double weight[27])
{
    double x[3];
    int64_t c;
    partile_stencil_1d s[3] = { { 0, 0, { 0, 0, 0 } }, { 0, 0, { 0, 0, 0 } },
                                { 0, 0, { 0, 0, 0 } } };
    load_x(pos, t->grid->dim, p, x);
    partile_particle_stencil(t->grid, t->shape, t->centering, x, size_of(t, p), s, &c);
    int e = 0;
    for (int zc = 0; zc < s[2].count; zc++)
        for (int yc = 0; yc < s[1].count; yc++)
            for (int xc = 0; xc < s[0].count; xc++, e++) {
                weight[e] = (s[0].w[xc] * s[1].w[yc]) * s[2].w[zc];
                point[e] = point_of(t->grid, t->centering, s, xc, yc, zc);
            }
    return e;
}

/* PARTILE_ORDER_BY_CELL (include/partile/deposit.h): the particles visited
 * by cell in increasing index (order; cell[p] each one's cell). Per cell,
 * its own chain P into part for every point it reaches; then each such
 * point adds P to its x sum ax, and where the cell starts a new row (y, z)
 * or plane (z) for that point, first closes its x sum into its y sum ay and
 * its y sum into its z sum (acc). A point's cells come in increasing index,
 * so these are the nested sums, each axis in increasing index. */
static int sum_by_cell(const partile_transfer_t *t, size_t n, const partile_vectors_t *pos,
                       const double *values, const int64_t *order, const int64_t *cell,
                       int64_t total, double *acc)
{
    const partile_grid_t *g = t->grid;
    const int m = t->components;
    const size_t tm = (size_t)total * (size_t)m;
    double *part = malloc(tm * sizeof *part), *ax = calloc(tm, sizeof *ax),
           *ay = calloc(tm, sizeof *ay);
    int64_t *stamp = malloc((size_t)total * sizeof *stamp),
            *row_of = malloc((size_t)total * sizeof *row_of),
            *plane_of = malloc((size_t)total * sizeof *plane_of),
            *touched = malloc((size_t)total * sizeof *touched);
    int st = 0;
    if (!part || !ax || !ay || !stamp || !row_of || !plane_of || !touched) {
        st = partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "deposit scratch");
        goto done;
    }
    for (int64_t i = 0; i < total; i++)
        stamp[i] = row_of[i] = plane_of[i] = -1;
    const int64_t nx = g->cells[0], ny = g->dim > 1 ? g->cells[1] : 1;
    for (size_t k = 0; k < n;) {
        const int64_t c = cell[order[k]];
        int64_t nt = 0;
        for (; k < n && cell[order[k]] == c; k++) {
            const int64_t p = order[k];
            int64_t point[27];
            double w[27];
            const int ne = partile_stencil_entries_ref(t, pos, p, point, w);
            for (int e = 0; e < ne; e++) {
                const int64_t gi = point[e];
                if (stamp[gi] != c) { /* the cell's first entry on gi */
                    stamp[gi] = c;
                    touched[nt++] = gi;
                    for (int j = 0; j < m; j++)
                        part[gi * m + j] = 0.0;
                }
                for (int j = 0; j < m; j++)
                    part[gi * m + j] = fma(w[e], values[p * m + j], part[gi * m + j]);
            }
        }
        const int64_t row = c / nx, plane = row / ny;
        for (int64_t e = 0; e < nt; e++) {
            const int64_t gi = touched[e];
            if (row_of[gi] != row) {
                for (int j = 0; j < m; j++) {
                    ay[gi * m + j] = ay[gi * m + j] + ax[gi * m + j];
                    ax[gi * m + j] = 0.0;
                }
                if (plane_of[gi] != plane)
                    for (int j = 0; j < m; j++) {
                        acc[gi * m + j] = acc[gi * m + j] + ay[gi * m + j];
                        ay[gi * m + j] = 0.0;
                    }
                row_of[gi] = row;
                plane_of[gi] = plane;
            }
            for (int j = 0; j < m; j++)
                ax[gi * m + j] = ax[gi * m + j] + part[gi * m + j];
        }
    }
    for (size_t i = 0; i < tm; i++)
        acc[i] = acc[i] + (ay[i] + ax[i]);
done:
    free(part), free(ax), free(ay);
    free(stamp), free(row_of), free(plane_of), free(touched);
    return st;
}

int partile_deposit_ref(const partile_transfer_t *t, size_t n, const partile_vectors_t *pos,
                        const double *values, const int64_t *cell_offsets, double *field,
                        int64_t *bad)
{
    const partile_grid_t *g = t->grid;
    const int m = t->components;
    int64_t ncells, points[3], total;
    partile_count_grid_cells(g, &ncells);
    partile_count_field_points(g, t->centering, points, &total);
    int64_t *cell = malloc((n ? n : 1) * sizeof *cell);
    int64_t *order = malloc((n ? n : 1) * sizeof *order);
    int64_t *offsets = malloc((size_t)(ncells + 1) * sizeof *offsets);
    double *acc = calloc((size_t)total * (size_t)m, sizeof *acc);
    int st = 0;
    if (!cell || !order || !offsets || !acc) {
        st = partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "deposit scratch");
        goto done;
    }
    if (n > 0 && (st = partile_bin_ref(g, n, pos, cell, bad)) != 0)
        goto done;
    if ((st = check_sizes(t, n, bad)) != 0)
        goto done;
    if (cell_offsets) {
        if ((st = partile_check_cell_list_ref(ncells, n, cell_offsets, cell, bad)) != 0)
            goto done;
        for (size_t i = 0; i < n; i++)
            order[i] = (int64_t)i;
    } else {
        /* any order: visit the particles as the stable sort by their cells would */
        partile_counting_sort_ref(ncells, n, cell, offsets, order, NULL);
    }
    if (t->order == PARTILE_ORDER_BY_CELL) {
        st = sum_by_cell(t, n, pos, values, order, cell, total, acc);
        if (st)
            goto done;
    } else {
        /* particles by cell, in order; each point's sum in that order */
        for (size_t k = 0; k < n; k++) {
            const int64_t p = order[k];
            int64_t point[27];
            double w[27];
            const int ne = partile_stencil_entries_ref(t, pos, p, point, w);
            for (int e = 0; e < ne; e++)
                for (int j = 0; j < m; j++)
                    acc[point[e] * m + j] = fma(w[e], values[p * m + j], acc[point[e] * m + j]);
        }
    }
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < total * m; i++)
        field[i] = field[i] + acc[i];
done:
    free(cell);
    free(order);
    free(offsets);
    free(acc);
    return st;
}

int partile_gather_ref(const partile_transfer_t *t, size_t n, const partile_vectors_t *pos,
                       const double *field, double *values, int64_t *bad)
{
    const partile_grid_t *g = t->grid;
    const int m = t->components;
    int64_t *cell = malloc(n * sizeof *cell);
    if (!cell)
        return partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "gather scratch");
    int st = partile_bin_ref(g, n, pos, cell, bad);
    if (st == 0)
        st = check_sizes(t, n, bad);
    free(cell);
    if (st)
        return st;
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < (int64_t)n; p++) {
        double acc[PARTILE_MAX_COMPONENTS] = { 0 }, w[27];
        int64_t point[27];
        const int ne = partile_stencil_entries_ref(t, pos, p, point, w);
        for (int e = 0; e < ne; e++)
            for (int j = 0; j < m; j++)
                acc[j] = fma(w[e], field[point[e] * m + j], acc[j]);
        for (int j = 0; j < m; j++)
            values[p * m + j] = acc[j];
    }
    return 0;
}
