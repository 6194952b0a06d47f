/* Reference mass-matrix assembly: the order of include/partile/mass.h,
 * written directly — per cell, per support group, a forward fma chain over
 * the group's particles for every pair of its points, then the groups'
 * entries summed per stored coupling in (cell, group) order. The chains of
 * a chunk of cells run in parallel (OpenMP; they are independent); the sums
 * stay one sequential loop, so the result does not depend on the threads. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "common/error.h"
#include "common/grid_checks.h"
#include "common/mass_math.h"
#include "common/shape.h"
#include "reference/mass_ref.h"
#include "reference/sort_ref.h"
#include "reference/deposit_ref.h"

enum { MAXPTS = 27 }; /* (n+1)^d points of a group: 8 (CIC), 27 (TSC) */

typedef struct particle_data {
    partile_stencil_1d st[3];
    int group;
} particle_data;

static int64_t stored_point(const partile_grid_t *g, const int64_t pts[3], const int64_t i[3])
{
    int64_t out = 0, stride = 1;
    for (int a = 0; a < g->dim; a++) {
        out += partile_point_index(i[a], g->cells[a], g->periodic[a]) * stride;
        stride *= pts[a];
    }
    return out;
}

/* Local entries of one (cell, group): the forward FMA chains over the
 * group's particles, [component][a][b] over the group's npts points; returns
 * the group's first particle, or -1 when it has none (local left zero). */
static int64_t local_chains(const partile_mass_params_t *p, const int64_t *off, const double *q,
                            const double *w_all, const particle_data *pd, int64_t c, int grp,
                            int npts, int np1, int comps, double *local)
{
    const partile_grid_t *g = p->grid;
    int64_t first = -1;
    for (int e = 0; e < comps * npts * npts; e++)
        local[e] = 0.0;
    for (int64_t i = off[c]; i < off[c + 1]; i++) {
        if (pd[i].group != grp)
            continue;
        if (first < 0)
            first = i;
        double coef[9] = { q[i] };
        if (p->kind == PARTILE_MASS_TENSOR) {
            double alpha[9];
            partile_alpha(w_all + 3 * i, alpha);
            for (int k = 0; k < 9; k++)
                coef[k] = q[i] * alpha[k];
        }
        double W[MAXPTS]; /* over the group's points, x fastest */
        partile_mass_point_weights(g->dim, np1, npts, pd[i].st, W);
        for (int k = 0; k < comps; k++)
            for (int a2 = 0; a2 < npts; a2++) {
                const double A = coef[k] * W[a2];
                double *row = local + (k * npts + a2) * npts;
                for (int b2 = 0; b2 < npts; b2++)
                    row[b2] = fma(A, W[b2], row[b2]);
            }
    }
    return first;
}

/* Scratch for local matrices: at most this many bytes per chunk of cells
 * (at least one cell). */
#ifndef LOCAL_CHUNK_BYTES
#define LOCAL_CHUNK_BYTES ((size_t)64 << 20)
#endif

int partile_mass_assemble_ref(const partile_mass_params_t *p, size_t n,
                              const partile_vectors_t *pos, const int64_t *off, const double *q,
                              const partile_vectors_t *omega, double *storage, int64_t *bad)
{
    const partile_grid_t *g = p->grid;
    partile_mass_layout_t L;
    partile_mass_layout(g, p->shape, p->kind, &L);
    int64_t ncells, pts[3], total;
    partile_count_grid_cells(g, &ncells);
    partile_count_field_points(g, PARTILE_CENTERING_NODE, pts, &total);
    const int order = partile_mass_order((int)p->shape), np1 = order + 1;
    const int comps = L.components;
    const int ngroups = p->shape == PARTILE_SHAPE_TSC ? 1 << g->dim : 1;
    int npts = 1;
    for (int a = 0; a < g->dim; a++)
        npts *= np1;
    const size_t cell_doubles = (size_t)ngroups * comps * npts * npts;
    int64_t chunk = (int64_t)(LOCAL_CHUNK_BYTES / (cell_doubles * sizeof(double)));
    chunk = chunk < 1 ? 1 : chunk > ncells ? ncells : chunk;
    double *sums = calloc(L.entries ? L.entries : 1, sizeof *sums), *w_all = NULL;
    particle_data *pd = malloc((n ? n : 1) * sizeof *pd);
    int64_t *cell = malloc((n ? n : 1) * sizeof *cell);
    signed char *code = malloc(n ? n : 1);
    double *local = malloc((size_t)chunk * cell_doubles * sizeof *local);
    int64_t *first = malloc((size_t)chunk * ngroups * sizeof *first);
    int st = 0;
    if (!sums || !pd || !cell || !code || !local || !first) {
        st = partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "mass scratch");
        goto done;
    }
    /* every particle inside and finite (the lowest bad one is reported),
     * then in its cell's range of the list */
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < (int64_t)n; i++) {
        double x[3];
        for (int a = 0; a < 3; a++)
            x[a] = a < g->dim ? partile_vector_at(pos, a, i) : 0.0;
        code[i] = (signed char)partile_particle_stencil(g, (int)p->shape, PARTILE_CENTERING_NODE, x,
                                                        0.0, pd[i].st, &cell[i]);
        if (code[i])
            continue;
        pd[i].group = partile_mass_group(g, (int)p->shape, pd[i].st, cell[i]);
    }
    for (size_t i = 0; i < n; i++)
        if (code[i]) {
            *bad = (int64_t)i;
            st = code[i] == PARTILE_BIN_NOT_FINITE ? PARTILE_ERROR_NOT_FINITE
                                                   : PARTILE_ERROR_OUT_OF_DOMAIN;
            goto done;
        }
    if ((st = partile_check_cell_list_ref(ncells, n, off, cell, bad)) != 0)
        goto done;
    if (p->kind == PARTILE_MASS_TENSOR && n > 0) {
        w_all = malloc(n * 3 * sizeof *w_all);
        if (!w_all) {
            st = partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "omega");
            goto done;
        }
        if ((st = partile_mass_omega_ref(p, n, pos, omega, w_all, bad)) != 0)
            goto done;
    }
    /* Chunks of cells: every (cell, group)'s local chains in parallel (they
     * are independent), then their entries added to the sums one cell after
     * the other, groups ascending — the order of mass.h. */
    for (int64_t c0 = 0; c0 < ncells; c0 += chunk) {
        const int64_t c1 = c0 + chunk < ncells ? c0 + chunk : ncells;
#pragma omp parallel for schedule(dynamic, 4)
        for (int64_t e = 0; e < (c1 - c0) * ngroups; e++) {
            const int64_t c = c0 + e / ngroups;
            const int grp = (int)(e % ngroups);
            first[e] = off[c] == off[c + 1]
                           ? -1
                           : local_chains(p, off, q, w_all, pd, c, grp, npts, np1, comps,
                                          local + (size_t)e * comps * npts * npts);
        }
        for (int64_t e = 0; e < (c1 - c0) * ngroups; e++) {
            if (first[e] < 0)
                continue;
            const double *loc = local + (size_t)e * comps * npts * npts;
            /* the group's points: first + (0..n) per axis */
            for (int a2 = 0; a2 < npts; a2++) {
                int ia[3] = { a2 % np1, a2 / np1 % np1, a2 / (np1 * np1) };
                int64_t ga[3] = { 0, 0, 0 };
                for (int ax = 0; ax < g->dim; ax++)
                    ga[ax] = pd[first[e]].st[ax].first + ia[ax];
                const int64_t row = stored_point(g, pts, ga);
                for (int b2 = 0; b2 < npts; b2++) {
                    int ib[3] = { b2 % np1, b2 / np1 % np1, b2 / (np1 * np1) };
                    int o[3] = { 0, 0, 0 };
                    for (int ax = 0; ax < g->dim; ax++)
                        o[ax] = ib[ax] - ia[ax];
                    const int slot = partile_mass_slot((int)p->shape, g->dim, o);
                    if (slot < 0)
                        continue; /* backward: the same coupling is stored at b */
                    double *dst = sums + (row * L.offsets + slot) * comps;
                    for (int k = 0; k < comps; k++)
                        dst[k] = dst[k] + loc[(k * npts + a2) * npts + b2];
                }
            }
        }
    }
    for (size_t e = 0; e < L.entries; e++)
        storage[e] = p->accumulate ? storage[e] + p->sigma * sums[e] : p->sigma * sums[e];
done:
    free(sums);
    free(pd);
    free(cell);
    free(code);
    free(local);
    free(first);
    free(w_all);
    return st;
}

/* ω of every particle as AoS (n × 3): copied, or (β/c)·B gathered. Checks it
 * is finite. */
int partile_mass_omega_ref(const partile_mass_params_t *p, size_t n,
                           const partile_vectors_t *pos, const partile_vectors_t *omega,
                           double *w, int64_t *bad)
{
    if (omega) {
        for (size_t i = 0; i < n; i++)
            for (int a = 0; a < 3; a++)
                w[3 * i + a] = ((const double *)omega->axis[a])[i];
    } else {
        partile_transfer_t t = { p->grid, p->shape, PARTILE_CENTERING_NODE, 3, NULL, PARTILE_ORDER_BY_POINT };
        int st = partile_gather_ref(&t, n, pos, p->bfield, w, bad);
        if (st)
            return st;
        for (size_t e = 0; e < 3 * n; e++)
            w[e] = p->beta_over_c * w[e];
    }
    for (size_t i = 0; i < n; i++)
        if (!(isfinite(w[3 * i]) && isfinite(w[3 * i + 1]) && isfinite(w[3 * i + 2]))) {
            *bad = (int64_t)i;
            return PARTILE_ERROR_NOT_FINITE;
        }
    return 0;
}

int partile_mass_apply_matfree_ref(const partile_mass_params_t *p, size_t n,
                                   const partile_vectors_t *pos, const int64_t *off,
                                   const double *q, const partile_vectors_t *omega,
                                   const double *x, double *y, int64_t *bad)
{
    partile_mass_layout_t L;
    partile_mass_layout(p->grid, p->shape, p->kind, &L);
    const int m = p->kind == PARTILE_MASS_TENSOR ? 3 : 1;
    partile_transfer_t t = { p->grid, p->shape, PARTILE_CENTERING_NODE, m, NULL, p->order };
    double *X = malloc((n ? n : 1) * m * sizeof *X), *V = malloc((n ? n : 1) * m * sizeof *V);
    double *F = calloc((size_t)L.points * m, sizeof *F), *w = NULL;
    int st = 0;
    if (!X || !V || !F) {
        st = partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "matrix-free scratch");
        goto out;
    }
    if (n > 0 && (st = partile_gather_ref(&t, n, pos, x, X, bad)) != 0)
        goto out;
    if (m == 3) {
        w = malloc((n ? n : 1) * 3 * sizeof *w);
        if (!w) {
            st = partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "matrix-free omega");
            goto out;
        }
        if (n > 0 && (st = partile_mass_omega_ref(p, n, pos, omega, w, bad)) != 0)
            goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (m == 1) {
            V[i] = q[i] * X[i];
            continue;
        }
        partile_apply_scale(q[i], w + 3 * i, X + 3 * i, V + 3 * i);
    }
    if ((st = partile_deposit_ref(&t, n, pos, V, off, F, bad)) != 0)
        goto out;
    for (int64_t e = 0; e < L.points * m; e++)
        y[e] = p->sigma * F[e];
out:
    free(X), free(V), free(F), free(w);
    return st;
}

int partile_mass_apply_assembled_ref(const partile_mass_params_t *p, const double *storage,
                                     const double *x, double *y)
{
    const partile_grid_t *g = p->grid;
    partile_mass_layout_t L;
    partile_mass_layout(g, p->shape, p->kind, &L);
    int64_t pts[3], total;
    partile_count_field_points(g, PARTILE_CENTERING_NODE, pts, &total);
    const int order = partile_mass_order((int)p->shape), m = p->kind == PARTILE_MASS_TENSOR ? 3 : 1;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < total; r++) {
        const int64_t idx[3] = { r % pts[0], r / pts[0] % pts[1], r / (pts[0] * pts[1]) };
        double acc[3] = { 0.0, 0.0, 0.0 };
        int o[3] = { 0, 0, 0 };
        const int rz = g->dim > 2 ? order : 0, ry = g->dim > 1 ? order : 0;
        for (o[2] = -rz; o[2] <= rz; o[2]++)
            for (o[1] = -ry; o[1] <= ry; o[1]++)
                for (o[0] = -order; o[0] <= order; o[0]++) {
                    int64_t col = 0, stride = 1, skip = 0;
                    for (int a = 0; a < g->dim; a++) {
                        int64_t j = idx[a] + o[a];
                        if (g->periodic[a])
                            j = ((j % pts[a]) + pts[a]) % pts[a];
                        else if (j < 0 || j >= pts[a])
                            skip = 1;
                        col += j * stride;
                        stride *= pts[a];
                    }
                    if (skip)
                        continue;
                    int slot = partile_mass_slot((int)p->shape, g->dim, o);
                    const double *blk;
                    if (slot >= 0) {
                        blk = storage + (r * L.offsets + slot) * L.components;
                    } else {
                        const int neg[3] = { -o[0], -o[1], -o[2] };
                        blk = storage + (col * L.offsets + partile_mass_slot((int)p->shape, g->dim, neg)) *
                                            L.components;
                    }
                    for (int i = 0; i < m; i++)
                        for (int j = 0; j < m; j++)
                            acc[i] = fma(blk[i * m + j], x[col * m + j], acc[i]);
                }
        for (int i = 0; i < m; i++)
            y[r * m + i] = acc[i];
    }
    return 0;
}
