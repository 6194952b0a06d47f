/* Deposit and gather scenarios run on one backend and checked against an
 * independent direct loop, conservation, polynomial reproduction and — for
 * a GPU backend — the reference bit for bit. Included by test_deposit.c and
 * test_deposit_gpu.c. */
#ifndef PARTILE_TESTS_DEPOSIT_SCENARIOS_H
#define PARTILE_TESTS_DEPOSIT_SCENARIOS_H

#include "tests/domain_faces.h"
#include "tests/sort_scenarios.h"

/* 1-D weight of point i for a particle at s (point units), independent of
 * the library's stencil code: the textbook kernels. */
static double direct_weight(int shape, double s, double dd, double i)
{
    double r = s - i, a = fabs(r);
    switch (shape) {
    case PARTILE_SHAPE_NGP: return floor(s + 0.5) == i ? 1.0 : 0.0;
    case PARTILE_SHAPE_CIC: return a < 1 ? 1 - a : 0.0;
    case PARTILE_SHAPE_TSC: return a <= 0.5 ? 0.75 - a * a : a < 1.5 ? 0.5 * (1.5 - a) * (1.5 - a) : 0.0;
    default: { /* overlap of [s − dd/2, s + dd/2] with [i − ½, i + ½) */
        double lo = fmax(s - dd / 2, i - 0.5), hi = fmin(s + dd / 2, i + 0.5);
        return hi > lo ? (hi - lo) / dd : 0.0;
    }
    }
}

/* Weight of stored point (i0, i1, i2) for particle p, summing periodic images. */
static double direct_w(const partile_grid_t *g, int shape, int centering, const double *x, size_t n,
                       size_t p, double dp, const int64_t *idx)
{
    double w = 1.0;
    for (int a = 0; a < g->dim; a++) {
        double q = (x[a * n + p] - g->lower[a]) / g->spacing[a];
        double s = centering == PARTILE_CENTERING_CELL ? q - 0.5 : q;
        double dd = dp / g->spacing[a], wa = 0.0;
        if (g->periodic[a]) {
            double base = floor(s / (double)g->cells[a]) * (double)g->cells[a];
            for (int k = -2; k <= 2; k++)
                wa += direct_weight(shape, s, dd, base + (double)idx[a] + k * (double)g->cells[a]);
        } else {
            wa = direct_weight(shape, s, dd, (double)idx[a] - 1);
        }
        w *= wa;
    }
    return w;
}

typedef struct dep_case {
    int dim, periodic, shape, centering, m, f32;
    int nx;    /* cells along x (0: 6) */
    int large; /* skip the O(points × particles) direct checks */
    /* lower 0, every 9th periodic coordinate just below it: cell-centred s =
     * q − ½ rounds to −½ there, so NGP's point and TSC's first point are the
     * particle's own cell −1, wrapped (partile_cell_window) */
    int just_below;
} dep_case;

/* Stages a case, runs deposit (unsorted and sorted) and gather on ctx, and
 * checks everything it can. */
static void run_deposit_case(partile_context_t *ctx, const dep_case *k, size_t n, uint64_t *rng)
{
    partile_grid_t g = su_grid(k->dim, k->nx ? k->nx : 6, 5, 4, k->periodic);
    if (k->just_below)
        for (int a = 0; a < 3; a++)
            g.lower[a] = 0.0;
    int64_t pts[3], total, ncells;
    assert_int_equal(partile_field_shape(&g, k->centering, pts, &total), 0);
    partile_grid_cell_count(&g, &ncells);
    const int m = k->m;
    double *x = su_positions(&g, n, rng);
    if (k->periodic) /* some positions a few boxes away */
        for (size_t p = 0; p < n; p += 7)
            x[p] += (double)((int64_t)(su_next(rng) % 5) - 2) * (double)g.cells[0] * g.spacing[0];
    if (k->periodic && k->just_below)
        for (int a = 0; a < g.dim; a++)
            for (size_t p = 0; p < n; p += 9)
                x[a * n + p] = -(double)(1 + su_next(rng) % 1000) * 1e-20;
    double *v = malloc((n ? n : 1) * m * sizeof *v), *sizes = malloc((n ? n : 1) * sizeof *sizes);
    double *f0 = malloc((size_t)total * m * sizeof *f0);
    for (size_t i = 0; i < n * m; i++)
        v[i] = 2 * su_uniform(rng) - 1;
    for (size_t p = 0; p < n; p++)
        sizes[p] = g.spacing[0] * (0.05 + 0.95 * su_uniform(rng)); /* <= every spacing */
    for (int64_t i = 0; i < total * m; i++)
        f0[i] = su_uniform(rng);
    /* stage */
    partile_vectors_t pos = { k->f32 ? PARTILE_DTYPE_FLOAT32 : PARTILE_DTYPE_FLOAT64, { 0 } };
    double *xs = malloc(3 * (n ? n : 1) * sizeof *xs); /* positions as the library sees them */
    for (int a = 0; a < g.dim; a++) {
        if (k->f32) {
            float *tmp = malloc((n ? n : 1) * sizeof *tmp);
            for (size_t p = 0; p < n; p++) {
                tmp[p] = (float)x[a * n + p];
                xs[a * n + p] = tmp[p];
            }
            pos.axis[a] = stage(ctx, tmp, n * 4);
            free(tmp);
        } else {
            memcpy(xs + a * n, x + a * n, n * 8);
            pos.axis[a] = stage(ctx, x + a * n, n * 8);
        }
    }
    double *dv = stage(ctx, v, n * m * 8), *dsz = stage(ctx, sizes, n * 8);
    double *dfield = stage(ctx, f0, (size_t)total * m * 8);
    partile_transfer_t t = { &g, (partile_shape_t)k->shape, (partile_centering_t)k->centering, m,
                             k->shape == PARTILE_SHAPE_OVERLAP ? dsz : NULL, PARTILE_ORDER_BY_POINT };
    int64_t bad = -1;
    /* unsorted deposit: against the direct loop */
    assert_int_equal(partile_deposit(ctx, &t, n, &pos, dv, NULL, dfield, &bad), 0);
    double *f1 = malloc((size_t)total * m * sizeof *f1);
    fetch(ctx, f1, dfield, (size_t)total * m * 8);
    double sum_v[PARTILE_MAX_COMPONENTS] = { 0 }, sum_f[PARTILE_MAX_COMPONENTS] = { 0 };
    for (int64_t gi = 0; gi < (k->large ? 0 : total); gi++) {
        int64_t idx[3] = { gi % pts[0], gi / pts[0] % pts[1], gi / (pts[0] * pts[1]) };
        for (int j = 0; j < m; j++) {
            double want = f0[gi * m + j], scale = fabs(f0[gi * m + j]);
            for (size_t p = 0; p < n; p++) {
                double w = direct_w(&g, k->shape, k->centering, xs, n, p, sizes[p], idx);
                want += w * v[p * m + j];
                scale += fabs(w * v[p * m + j]);
            }
            if (!(fabs(f1[gi * m + j] - want) <= 1e-12 * (scale + 1)))
                fail_msg("deposit point %lld comp %d: got %.17g want %.17g (case dim %d per %d "
                         "shape %d cent %d)", (long long)gi, j, f1[gi * m + j], want, k->dim,
                         k->periodic, k->shape, k->centering);
            sum_f[j] += f1[gi * m + j] - f0[gi * m + j];
        }
    }
    for (size_t p = 0; p < n; p++)
        for (int j = 0; j < m; j++)
            sum_v[j] += v[p * m + j];
    for (int j = 0; j < (k->large ? 0 : m); j++) /* conservation: every weight lands on a stored point */
        assert_true(fabs(sum_f[j] - sum_v[j]) <= 1e-11 * (double)(n + 1));

    /* the same, unsorted, in the by-cell order (GPUs: atomics, any order) */
    partile_memcpy(ctx, dfield, f0, (size_t)total * m * 8, PARTILE_COPY_HOST_TO_DEVICE);
    {
        partile_transfer_t tc = t;
        tc.order = PARTILE_ORDER_BY_CELL;
        assert_int_equal(partile_deposit(ctx, &tc, n, &pos, dv, NULL, dfield, &bad), 0);
    }
    double *f1c = malloc((size_t)total * m * sizeof *f1c);
    fetch(ctx, f1c, dfield, (size_t)total * m * 8);

    /* sorted path: sort, permute positions/values/sizes, deposit with the cell
     * list; must equal the unsorted path bit for bit (same specified order) */
    int64_t *doff = stage(ctx, NULL, (size_t)(ncells + 1) * 8), *dperm = stage(ctx, NULL, n * 8);
    assert_int_equal(partile_sort(ctx, &g, n, &pos, doff, dperm, NULL, NULL), 0);
    double *dv_sorted = stage(ctx, v, n * m * 8);
    if (n) {
        /* permute a (n × m) array: m strided copies through a host round trip */
        int64_t *perm = malloc(n * 8);
        fetch(ctx, perm, dperm, n * 8);
        double *vs = malloc(n * m * 8);
        for (size_t i = 0; i < n; i++)
            for (int j = 0; j < m; j++)
                vs[i * m + j] = v[perm[i] * m + j];
        partile_memcpy(ctx, dv_sorted, vs, n * m * 8, PARTILE_COPY_HOST_TO_DEVICE);
        free(vs);
        free(perm);
    }
    partile_array_t arrays[4] = { { (void *)pos.axis[0], pos.type }, { (void *)pos.axis[1], pos.type },
                                  { (void *)pos.axis[2], pos.type }, { dsz, PARTILE_DTYPE_FLOAT64 } };
    int na = 0;
    partile_array_t list[4];
    for (int a = 0; a < g.dim; a++)
        list[na++] = arrays[a];
    list[na++] = arrays[3];
    assert_int_equal(partile_permute(ctx, n, dperm, na, list, NULL, 0), 0);
    partile_memcpy(ctx, dfield, f0, (size_t)total * m * 8, PARTILE_COPY_HOST_TO_DEVICE);
    assert_int_equal(partile_deposit(ctx, &t, n, &pos, dv_sorted, doff, dfield, &bad), 0);
    double *f2 = malloc((size_t)total * m * sizeof *f2);
    fetch(ctx, f2, dfield, (size_t)total * m * 8);
    if (strcmp(partile_context_backend(ctx), "reference") == 0)
        assert_memory_equal(f1, f2, (size_t)total * m * 8);
    /* the by-cell order on the sorted particles; on the reference also
     * unsorted (the same bits) */
    partile_transfer_t tc = t;
    tc.order = PARTILE_ORDER_BY_CELL;
    double *f3 = malloc((size_t)total * m * sizeof *f3);
    partile_memcpy(ctx, dfield, f0, (size_t)total * m * 8, PARTILE_COPY_HOST_TO_DEVICE);
    assert_int_equal(partile_deposit(ctx, &tc, n, &pos, dv_sorted, doff, dfield, &bad), 0);
    fetch(ctx, f3, dfield, (size_t)total * m * 8);
    partile_memcpy(ctx, dfield, f2, (size_t)total * m * 8, PARTILE_COPY_HOST_TO_DEVICE);
    if (strcmp(partile_context_backend(ctx), "reference") == 0)
        assert_memory_equal(f1c, f3, (size_t)total * m * 8);
    /* the same sums as the point order, up to rounding */
    {
        double sv[PARTILE_MAX_COMPONENTS] = { 0 };
        for (size_t p = 0; p < n; p++)
            for (int j = 0; j < m; j++)
                sv[j] += fabs(v[p * m + j]);
        for (int64_t i = 0; i < total * m; i++)
            if (!(fabs(f3[i] - f2[i]) <= 1e-13 * (sv[i % m] + fabs(f0[i]) + 1)))
                fail_msg("by-cell deposit entry %lld: %.17g, by point %.17g", (long long)i, f3[i],
                         f2[i]);
    }

    /* bitwise against the reference: sorted deposit and gather */
    double *gv = malloc((n ? n : 1) * m * sizeof *gv);
    double *dgv = stage(ctx, NULL, n * m * 8);
    assert_int_equal(partile_gather(ctx, &t, n, &pos, dfield, dgv, &bad), 0);
    fetch(ctx, gv, dgv, n * m * 8);
    if (strcmp(partile_context_backend(ctx), "reference") != 0) {
        partile_context_t *ref = NULL;
        assert_int_equal(partile_context_create("reference", 0, &ref), 0);
        /* the same sorted particles on the reference */
        partile_vectors_t rpos = pos;
        void *host_axis[3] = { 0 };
        size_t esz = k->f32 ? 4 : 8;
        for (int a = 0; a < g.dim; a++) {
            host_axis[a] = malloc(n * esz + 8);
            fetch(ctx, host_axis[a], pos.axis[a], n * esz);
            rpos.axis[a] = host_axis[a];
        }
        double *rsz = malloc(n * 8 + 8), *rv = malloc(n * m * 8 + 8), *rf = malloc((size_t)total * m * 8);
        int64_t *roff = malloc((size_t)(ncells + 1) * 8);
        fetch(ctx, rsz, dsz, n * 8);
        fetch(ctx, rv, dv_sorted, n * m * 8);
        fetch(ctx, roff, doff, (size_t)(ncells + 1) * 8);
        memcpy(rf, f0, (size_t)total * m * 8);
        partile_transfer_t rt = t;
        rt.sizes = k->shape == PARTILE_SHAPE_OVERLAP ? rsz : NULL;
        assert_int_equal(partile_deposit(ref, &rt, n, &rpos, rv, roff, rf, &bad), 0);
        assert_memory_equal(rf, f2, (size_t)total * m * 8);
        double *rfc = malloc((size_t)total * m * 8);
        memcpy(rfc, f0, (size_t)total * m * 8);
        partile_transfer_t rtc = rt;
        rtc.order = PARTILE_ORDER_BY_CELL;
        assert_int_equal(partile_deposit(ref, &rtc, n, &rpos, rv, roff, rfc, &bad), 0);
        assert_memory_equal(rfc, f3, (size_t)total * m * 8);
        free(rfc);
        double *rg = malloc(n * m * 8 + 8);
        assert_int_equal(partile_gather(ref, &rt, n, &rpos, rf, rg, &bad), 0);
        assert_memory_equal(rg, gv, n * m * 8);
        /* unsorted GPU deposit (atomics): equal up to rounding */
        for (int64_t i = 0; i < (k->large ? 0 : total * m); i++) {
            double s = 0;
            for (size_t p = 0; p < n; p++)
                s += fabs(v[p * m + i % m]);
            assert_true(fabs(f1[i] - rf[i]) <= 1e-13 * (s + 1));
        }
        free(rg), free(rsz), free(rv), free(rf), free(roff);
        for (int a = 0; a < g.dim; a++)
            free(host_axis[a]);
        partile_context_destroy(ref);
    }
    for (int a = 0; a < g.dim; a++)
        partile_free(ctx, (void *)pos.axis[a]);
    partile_free(ctx, dv), partile_free(ctx, dsz), partile_free(ctx, dfield);
    partile_free(ctx, doff), partile_free(ctx, dperm), partile_free(ctx, dv_sorted), partile_free(ctx, dgv);
    free(x), free(xs), free(v), free(sizes), free(f0), free(f1), free(f2), free(gv);
    free(f1c), free(f3);
}

static void scenario_deposit_all(partile_context_t *ctx, uint64_t seed)
{
    uint64_t rng = seed;
    const int ms[] = { 1, 3, 16 };
    for (int dim = 1; dim <= 3; dim++)
        for (int periodic = 0; periodic < 2; periodic++)
            for (int shape = 0; shape < 4; shape++)
                for (int cent = 0; cent < 2; cent++) {
                    dep_case k = { dim, periodic, shape, cent, ms[(dim + shape + cent) % 3],
                                   (shape + cent + periodic) % 2, 0, 0, 0 };
                    run_deposit_case(ctx, &k, dim == 3 ? 300 : 700, &rng);
                }
    dep_case zero = { 2, 0, PARTILE_SHAPE_TSC, PARTILE_CENTERING_NODE, 2, 0, 0, 0, 0 };
    run_deposit_case(ctx, &zero, 0, &rng); /* no particles: field + 0 */
    /* the GPU's fraction kernels (CIC/TSC, 1 or 3 components, node- and
     * cell-centred): every dimension, and lines of points longer than one
     * block (260 cells: windows that wrap) with more particles per cell row
     * than one staged chunk; bitwise against the reference only */
    for (int dim = 1; dim <= 3; dim++)
        for (int periodic = 0; periodic < 2; periodic++)
            for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++)
                for (int m = 1; m <= 3; m += 2)
                    for (int cent = 0; cent < 2; cent++) {
                        dep_case k = { dim, periodic, shape, cent, m, 0, 0, 0, 0 };
                        run_deposit_case(ctx, &k, 200, &rng);
                        dep_case line = { dim, periodic, shape, cent, m, m == 1, 260, 1, 0 };
                        run_deposit_case(ctx, &line, dim == 1 ? 2000 : dim == 2 ? 4000 : 16000,
                                         &rng);
                    }
    /* one cell along x, no periodic axis: the GPU's by-cell first pass steps
     * a group's cells by a carry per cell (cic_cell_coords_after), in
     * rounds (4 and 20 per cell), and with a thread per cell (1.5 per cell:
     * no x pair formed in a warp, every cell its row's last) */
    for (int m = 1; m <= 3; m += 2)
        for (int dense = 0; dense < 3; dense++) {
            dep_case thin = { 3, 0, PARTILE_SHAPE_CIC, PARTILE_CENTERING_NODE, m, 0, 1, 0, 0 };
            run_deposit_case(ctx, &thin, dense == 2 ? 400 : dense ? 80 : 30, &rng);
        }
    /* the node-centred CIC line kernel's dense chunks (two batches, from 10
     * per cell; LINE_DENSE_PPC) and the TSC tile kernel's rows of several
     * chunks (bricks on 3-D grids), at 40 per cell, lines longer than one
     * block */
    for (int dim = 2; dim <= 3; dim++)
        for (int periodic = 0; periodic < 2; periodic++)
            for (int m = 1; m <= 3; m += 2)
                for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++) {
                    dep_case dense = { dim, periodic, shape, PARTILE_CENTERING_NODE, m, 0,
                                       260, 1, 0 };
                    run_deposit_case(ctx, &dense, dim == 2 ? 260 * 5 * 40 : 260 * 5 * 4 * 40,
                                     &rng);
                }
    /* the TSC tile kernel's planes on a 3-D grid (from TSC_TILE_PPC to
     * TSC_BRICK_PPC: 10 per cell) */
    for (int periodic = 0; periodic < 2; periodic++)
        for (int m = 1; m <= 3; m += 2) {
            dep_case planes = { 3, periodic, PARTILE_SHAPE_TSC, PARTILE_CENTERING_NODE, m, 0,
                                260, 1, 0 };
            run_deposit_case(ctx, &planes, 260 * 5 * 4 * 10, &rng);
        }
    /* particles just below the lower bound of a periodic grid, every shape
     * and centering */
    for (int dim = 1; dim <= 3; dim += 2)
        for (int shape = 0; shape < 4; shape++)
            for (int cent = 0; cent < 2; cent++) {
                dep_case k = { dim, 1, shape, cent, 1 + 2 * (shape % 2), 0, 0, 0, 1 };
                run_deposit_case(ctx, &k, 300, &rng);
            }
}

/* Gather reproduces constants (every shape) and linear fields (CIC, TSC on
 * a periodic-free grid), to rounding. */
static void scenario_gather_polynomials(partile_context_t *ctx, uint64_t seed)
{
    uint64_t rng = seed;
    for (int shape = 0; shape < 4; shape++)
        for (int cent = 0; cent < 2; cent++) {
            partile_grid_t g = su_grid(3, 7, 6, 5, 0);
            int64_t pts[3], total;
            partile_field_shape(&g, (partile_centering_t)cent, pts, &total);
            const size_t n = 500;
            double *x = su_positions(&g, n, &rng), *sizes = malloc(n * 8);
            for (size_t p = 0; p < n; p++)
                sizes[p] = 0.1 * (1 + su_uniform(&rng)) * g.spacing[0];
            double *f = malloc((size_t)total * 2 * 8);
            for (int64_t gi = 0; gi < total; gi++) {
                int64_t idx[3] = { gi % pts[0], gi / pts[0] % pts[1], gi / (pts[0] * pts[1]) };
                double lin = 0.5;
                for (int a = 0; a < 3; a++) /* point coordinate (ghost layer: idx − 1) */
                    lin += (a + 1.0) * (g.lower[a] + ((double)idx[a] - 1 + (cent ? 0.5 : 0.0)) * g.spacing[a]);
                f[gi * 2] = 3.25; /* constant */
                f[gi * 2 + 1] = lin;
            }
            partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { stage(ctx, x, n * 8), stage(ctx, x + n, n * 8),
                                                               stage(ctx, x + 2 * n, n * 8) } };
            double *df = stage(ctx, f, (size_t)total * 16), *dsz = stage(ctx, sizes, n * 8);
            double *dv = stage(ctx, NULL, n * 16), *v = malloc(n * 16);
            partile_transfer_t t = { &g, (partile_shape_t)shape, (partile_centering_t)cent, 2,
                                     shape == PARTILE_SHAPE_OVERLAP ? dsz : NULL, PARTILE_ORDER_BY_POINT };
            assert_int_equal(partile_gather(ctx, &t, n, &pos, df, dv, NULL), 0);
            fetch(ctx, v, dv, n * 16);
            for (size_t p = 0; p < n; p++) {
                assert_true(fabs(v[p * 2] - 3.25) <= 1e-14);
                if (shape == PARTILE_SHAPE_CIC || shape == PARTILE_SHAPE_TSC) {
                    double lin = 0.5;
                    for (int a = 0; a < 3; a++)
                        lin += (a + 1.0) * x[a * n + p];
                    assert_true(fabs(v[p * 2 + 1] - lin) <= 1e-12);
                }
            }
            for (int a = 0; a < 3; a++)
                partile_free(ctx, (void *)pos.axis[a]);
            partile_free(ctx, df), partile_free(ctx, dsz), partile_free(ctx, dv);
            free(x), free(sizes), free(f), free(v);
        }
}

/* The two deposit orders by hand, where they round differently: 2-D
 * periodic CIC, 4 x 4 unit cells, point (1, 1) reached from cells (0, 0)
 * (contribution 1), (0, 1) and (1, 1) (2^-53 each). By point, one chain: 1
 * + 2^-53 rounds to 1, twice. By cell, the y sum of the x sums: 1 +
 * (2^-53 + 2^-53) = 1 + 2^-52 (a flat sum of the cells' partials would
 * round to 1 as well). */
static void scenario_deposit_orders(partile_context_t *ctx)
{
    partile_grid_t g = su_grid(2, 4, 4, 1, 1);
    for (int a = 0; a < 2; a++)
        g.lower[a] = 0.0, g.spacing[a] = 1.0;
    const double x[3] = { 0.5, 0.5, 1.0 }, y[3] = { 0.5, 1.0, 1.0 };
    const double v[3] = { 4.0, 0x1p-52, 0x1p-53 };
    int64_t off[17];
    for (int c = 0; c <= 16; c++) /* cells 0, 4 and 5 hold one particle each */
        off[c] = c < 1 ? 0 : c < 5 ? 1 : c < 6 ? 2 : 3;
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { stage(ctx, x, 24), stage(ctx, y, 24) } };
    double *dv = stage(ctx, v, 24), *df = stage(ctx, NULL, 16 * 8);
    int64_t *doff = stage(ctx, off, sizeof off);
    const double want[2] = { 1.0, 1.0 + 0x1p-52 };
    for (int order = PARTILE_ORDER_BY_POINT; order <= PARTILE_ORDER_BY_CELL; order++) {
        partile_transfer_t t = { &g, PARTILE_SHAPE_CIC, PARTILE_CENTERING_NODE, 1, NULL,
                                 (partile_deposit_order_t)order };
        double f[16] = { 0 };
        partile_memcpy(ctx, df, f, sizeof f, PARTILE_COPY_HOST_TO_DEVICE);
        assert_int_equal(partile_deposit(ctx, &t, 3, &pos, dv, doff, df, NULL), 0);
        fetch(ctx, f, df, sizeof f);
        if (f[1 + 4 * 1] != want[order])
            fail_msg("order %d: point (1, 1) %a, want %a", order, f[5], want[order]);
    }
    partile_transfer_t bad = { &g, PARTILE_SHAPE_CIC, PARTILE_CENTERING_NODE, 1, NULL,
                               (partile_deposit_order_t)2 };
    assert_int_equal(partile_deposit(ctx, &bad, 3, &pos, dv, doff, df, NULL),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    partile_free(ctx, (void *)pos.axis[0]), partile_free(ctx, (void *)pos.axis[1]);
    partile_free(ctx, dv), partile_free(ctx, df), partile_free(ctx, doff);
}

/* The sorted deposit's errors in both orders (the by-cell GPU path checks
 * the particles in its first pass): the reference's status and particle,
 * the field untouched — a NaN behind a particle outside its cell's range
 * (the position error wins), that particle alone, and a broken cell list
 * with and without the NaN. 3-D periodic CIC, node-centred, 1 component. */
static void scenario_deposit_sorted_errors(partile_context_t *ctx, uint64_t seed)
{
    uint64_t rng = seed;
    partile_grid_t g = su_grid(3, 4, 5, 3, 1);
    int64_t pts[3], total, ncells;
    partile_field_shape(&g, PARTILE_CENTERING_NODE, pts, &total);
    partile_grid_cell_count(&g, &ncells);
    const size_t n = 600;
    double *x = su_positions(&g, n, &rng), *v = malloc(n * 8);
    for (size_t p = 0; p < n; p++)
        v[p] = su_uniform(&rng);
    /* sort on the host: a stable counting sort by cell */
    int64_t *off = calloc((size_t)ncells + 1, 8), *cell = malloc(n * 8), *fill = malloc(n * 8);
    double *xs = malloc(3 * n * 8);
    for (size_t p = 0; p < n; p++)
        off[(cell[p] = su_cell(&g, x, n, p)) + 1]++;
    for (int64_t c = 0; c < ncells; c++)
        off[c + 1] += off[c];
    memcpy(fill, off, (size_t)ncells * 8);
    for (size_t p = 0; p < n; p++) {
        const int64_t to = fill[cell[p]]++;
        for (int a = 0; a < 3; a++)
            xs[a * n + to] = x[a * n + p];
    }
    partile_context_t *ref = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ref), 0);
    double *f = malloc((size_t)total * 8), *back = malloc((size_t)total * 8);
    for (int kase = 0; kase < 4; kase++) {
        double *xk = malloc(3 * n * 8);
        int64_t *offk = malloc(((size_t)ncells + 1) * 8);
        memcpy(xk, xs, 3 * n * 8);
        memcpy(offk, off, ((size_t)ncells + 1) * 8);
        if (kase == 0 || kase == 2)
            xk[n + 300] = NAN;
        if (kase <= 1) /* particle 100 moved to the cell of particle 500 (another, mostly) */
            for (int a = 0; a < 3; a++)
                xk[a * n + 100] =
                    xs[a * n + (su_cell(&g, xs, n, 100) == su_cell(&g, xs, n, 500) ? 5 : 500)];
        if (kase >= 2) /* a range that runs backwards */
            offk[7] = offk[8] + 1;
        for (int order = PARTILE_ORDER_BY_POINT; order <= PARTILE_ORDER_BY_CELL; order++) {
            partile_transfer_t t = { &g, PARTILE_SHAPE_CIC, PARTILE_CENTERING_NODE, 1, NULL,
                                     (partile_deposit_order_t)order };
            partile_vectors_t hpos = { PARTILE_DTYPE_FLOAT64, { xk, xk + n, xk + 2 * n } };
            int64_t want_bad = -1, bad = -1;
            for (int64_t i = 0; i < total; i++)
                f[i] = 1.0;
            const int want = partile_deposit(ref, &t, n, &hpos, v, offk, f, &want_bad);
            assert_true(want < 0);
            partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64,
                                      { stage(ctx, xk, n * 8), stage(ctx, xk + n, n * 8),
                                        stage(ctx, xk + 2 * n, n * 8) } };
            double *dv = stage(ctx, v, n * 8), *df = stage(ctx, NULL, (size_t)total * 8);
            int64_t *doff = stage(ctx, offk, ((size_t)ncells + 1) * 8);
            const int got = partile_deposit(ctx, &t, n, &pos, dv, doff, df, &bad);
            if (got != want || bad != want_bad)
                fail_msg("case %d order %d: status %d particle %lld, the reference's %d %lld", kase,
                         order, got, (long long)bad, want, (long long)want_bad);
            fetch(ctx, back, df, (size_t)total * 8);
            for (int64_t i = 0; i < total; i++)
                assert_true(((uint64_t *)back)[i] == 0xababababababababull);
            for (int a = 0; a < 3; a++)
                partile_free(ctx, (void *)pos.axis[a]);
            partile_free(ctx, dv), partile_free(ctx, df), partile_free(ctx, doff);
        }
        free(xk), free(offk);
    }
    partile_context_destroy(ref);
    free(x), free(v), free(off), free(cell), free(fill), free(xs), free(f), free(back);
}

/* Bad input: errors naming the particle, field and values untouched. */
static void scenario_deposit_errors(partile_context_t *ctx, uint64_t seed)
{
    uint64_t rng = seed;
    partile_grid_t g = su_grid(2, 5, 4, 1, 0);
    int64_t pts[3], total, ncells;
    partile_field_shape(&g, PARTILE_CENTERING_NODE, pts, &total);
    partile_grid_cell_count(&g, &ncells);
    const size_t n = 1000;
    double *x = su_positions(&g, n, &rng), *v = malloc(n * 8), *sizes = malloc(n * 8);
    for (size_t p = 0; p < n; p++)
        v[p] = 1.0, sizes[p] = 0.5 * g.spacing[0];
    x[n + 321] = NAN;
    x[777] = 1e9; /* out of domain, later */
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { stage(ctx, x, n * 8), stage(ctx, x + n, n * 8) } };
    double *dv = stage(ctx, v, n * 8), *dsz = stage(ctx, sizes, n * 8);
    double *df = stage(ctx, NULL, (size_t)total * 8), *dgv = stage(ctx, NULL, n * 8);
    partile_transfer_t t = { &g, PARTILE_SHAPE_CIC, PARTILE_CENTERING_NODE, 1, NULL, PARTILE_ORDER_BY_POINT };
    int64_t bad = -1;
    assert_int_equal(partile_deposit(ctx, &t, n, &pos, dv, NULL, df, &bad), PARTILE_ERROR_NOT_FINITE);
    assert_int_equal(bad, 321);
    assert_int_equal(partile_gather(ctx, &t, n, &pos, df, dgv, &bad), PARTILE_ERROR_NOT_FINITE);
    assert_int_equal(bad, 321);
    double *back = malloc(((size_t)total > n ? (size_t)total : n) * 8);
    fetch(ctx, back, df, (size_t)total * 8);
    for (int64_t i = 0; i < total; i++)
        assert_true(((uint64_t *)back)[i] == 0xababababababababull);
    fetch(ctx, back, dgv, n * 8);
    for (size_t i = 0; i < n; i++)
        assert_true(((uint64_t *)back)[i] == 0xababababababababull);
    x[n + 321] = x[n + 320];
    partile_memcpy(ctx, (void *)pos.axis[1], x + n, n * 8, PARTILE_COPY_HOST_TO_DEVICE);
    assert_int_equal(partile_deposit(ctx, &t, n, &pos, dv, NULL, df, &bad), PARTILE_ERROR_OUT_OF_DOMAIN);
    assert_int_equal(bad, 777);
    x[777] = x[776];
    /* the upper face, to the last place: the first x past it is out of the
     * domain, the one below it inside (GPU checks without a cell list decide
     * most positions without the division; not these) */
    double last_in, edge;
    domain_upper_face(g.lower[0], g.spacing[0], g.cells[0], &last_in, &edge);
    x[500] = edge;
    partile_memcpy(ctx, (void *)pos.axis[0], x, n * 8, PARTILE_COPY_HOST_TO_DEVICE);
    assert_int_equal(partile_gather(ctx, &t, n, &pos, df, dgv, &bad), PARTILE_ERROR_OUT_OF_DOMAIN);
    assert_int_equal(bad, 500);
    assert_int_equal(partile_deposit(ctx, &t, n, &pos, dv, NULL, df, &bad), PARTILE_ERROR_OUT_OF_DOMAIN);
    assert_int_equal(bad, 500);
    double *dgv_ok = stage(ctx, NULL, n * 8); /* dgv stays untouched (checked below) */
    x[500] = last_in;
    partile_memcpy(ctx, (void *)pos.axis[0], x, n * 8, PARTILE_COPY_HOST_TO_DEVICE);
    assert_int_equal(partile_gather(ctx, &t, n, &pos, df, dgv_ok, &bad), 0);
    /* and the lower face: lower itself inside, the double below it out */
    x[500] = g.lower[0];
    partile_memcpy(ctx, (void *)pos.axis[0], x, n * 8, PARTILE_COPY_HOST_TO_DEVICE);
    assert_int_equal(partile_gather(ctx, &t, n, &pos, df, dgv_ok, &bad), 0);
    partile_free(ctx, dgv_ok);
    x[500] = nextafter(g.lower[0], -INFINITY);
    partile_memcpy(ctx, (void *)pos.axis[0], x, n * 8, PARTILE_COPY_HOST_TO_DEVICE);
    assert_int_equal(partile_gather(ctx, &t, n, &pos, df, dgv, &bad), PARTILE_ERROR_OUT_OF_DOMAIN);
    assert_int_equal(bad, 500);
    x[500] = x[499];
    partile_memcpy(ctx, (void *)pos.axis[0], x, n * 8, PARTILE_COPY_HOST_TO_DEVICE);
    /* a cell list that does not match the particle order */
    int64_t *off = calloc((size_t)ncells + 1, 8);
    off[ncells] = (int64_t)n; /* claims all particles are in the last cell */
    for (int64_t c = 1; c < ncells; c++)
        off[c] = 0;
    int64_t *doff = stage(ctx, off, (size_t)(ncells + 1) * 8);
    assert_int_equal(partile_deposit(ctx, &t, n, &pos, dv, doff, df, &bad), PARTILE_ERROR_NOT_SORTED);
    /* the same through the other sorted paths (GPU: the TSC tile
     * kernel, the re-binning one), which a GPU launches before it has read
     * the check: they must still write nothing */
    t.shape = PARTILE_SHAPE_TSC;
    assert_int_equal(partile_deposit(ctx, &t, n, &pos, dv, doff, df, &bad), PARTILE_ERROR_NOT_SORTED);
    /* and the cell-centred ones (GPU: the per-point kernel with the check's
     * offsets; the field holds the node-centred point count, more) */
    t.centering = PARTILE_CENTERING_CELL;
    assert_int_equal(partile_deposit(ctx, &t, n, &pos, dv, doff, df, &bad), PARTILE_ERROR_NOT_SORTED);
    t.shape = PARTILE_SHAPE_CIC;
    assert_int_equal(partile_deposit(ctx, &t, n, &pos, dv, doff, df, &bad), PARTILE_ERROR_NOT_SORTED);
    t.centering = PARTILE_CENTERING_NODE;
    t.shape = PARTILE_SHAPE_OVERLAP;
    t.sizes = dsz;
    assert_int_equal(partile_deposit(ctx, &t, n, &pos, dv, doff, df, &bad), PARTILE_ERROR_NOT_SORTED);
    t.shape = PARTILE_SHAPE_CIC;
    t.sizes = NULL;
    /* OVERLAP sizes out of range */
    t.shape = PARTILE_SHAPE_OVERLAP;
    t.sizes = dsz;
    sizes[55] = 2 * g.spacing[0];
    partile_memcpy(ctx, dsz, sizes, n * 8, PARTILE_COPY_HOST_TO_DEVICE);
    assert_int_equal(partile_gather(ctx, &t, n, &pos, df, dgv, &bad), PARTILE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(bad, 55);
    t.sizes = NULL;
    assert_int_equal(partile_gather(ctx, &t, n, &pos, df, dgv, &bad), PARTILE_ERROR_NULL_POINTER);
    t.shape = PARTILE_SHAPE_CIC;
    t.components = 17;
    assert_int_equal(partile_gather(ctx, &t, n, &pos, df, dgv, &bad), PARTILE_ERROR_INVALID_ARGUMENT);
    t.components = 0;
    assert_int_equal(partile_deposit(ctx, &t, n, &pos, dv, NULL, df, &bad), PARTILE_ERROR_INVALID_ARGUMENT);
    t.components = 1;
    t.shape = (partile_shape_t)9;
    assert_int_equal(partile_deposit(ctx, &t, n, &pos, dv, NULL, df, &bad), PARTILE_ERROR_INVALID_ARGUMENT);
    t.shape = PARTILE_SHAPE_CIC;
    assert_int_equal(partile_deposit(ctx, &t, n, &pos, NULL, NULL, df, &bad), PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_deposit(ctx, NULL, n, &pos, dv, NULL, df, &bad), PARTILE_ERROR_NULL_POINTER);
    fetch(ctx, back, df, (size_t)total * 8);
    for (int64_t i = 0; i < total; i++)
        assert_true(((uint64_t *)back)[i] == 0xababababababababull);
    fetch(ctx, back, dgv, n * 8); /* nor did the OVERLAP gather (GPU: k_gather) */
    for (size_t i = 0; i < n; i++)
        assert_true(((uint64_t *)back)[i] == 0xababababababababull);
    partile_free(ctx, (void *)pos.axis[0]), partile_free(ctx, (void *)pos.axis[1]);
    partile_free(ctx, dv), partile_free(ctx, dsz), partile_free(ctx, df), partile_free(ctx, dgv), partile_free(ctx, doff);
    free(x), free(v), free(sizes), free(back), free(off);
}

#endif
