/* Deposit and gather benchmark (issue #5), CUDA: following the seed's
 * experiment — cubic periodic node-centred meshes 16³ to 256³, uniformly random
 * particles at 0.1, 1, 10 and 100 per cell — P2C (unsorted: atomics;
 * sorted: the bitwise paths, in both orders) and C2P (on the random order and on
 * the sorted particles), CIC and TSC, 1 and 3 components. Each row: particles/s, fraction of the memory roofline
 * (bytes that must move over the copy bandwidth measured in this run), the
 * reference backend on the host's cores for the smaller cases, and the
 * break-even: sort + permute + sorted deposit against unsorted deposit.
 * PyTorch's equivalent runs from bench/bench_deposit_torch.py in the same
 * device call. usage: bench_deposit [--json FILE] [--max N] [--only SIDE,PPC]
 * [--centering node|cell] (--only: one mesh and density, e.g. for a
 * profiler; --centering cell: the cell-centred grid, whose deposits and
 * gathers take the generic kernels). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_cuda.h"

typedef struct run_args {
    partile_transfer_t t;
    size_t n;
    partile_vectors_t pos;
    double *values, *field, *out;
    int64_t *offsets, *perm;
    partile_array_t arrays[4];
    int narrays;
} run_args;

static int do_unsorted(partile_context_t *c, void *a_)
{
    run_args *a = (run_args *)a_;
    return partile_deposit(c, &a->t, a->n, &a->pos, a->values, NULL, a->field, NULL);
}
static int do_sorted(partile_context_t *c, void *a_)
{
    run_args *a = (run_args *)a_;
    return partile_deposit(c, &a->t, a->n, &a->pos, a->values, a->offsets, a->field, NULL);
}
static int do_sorted_by_cell(partile_context_t *c, void *a_)
{
    run_args *a = (run_args *)a_;
    partile_transfer_t t = a->t;
    t.order = PARTILE_ORDER_BY_CELL;
    return partile_deposit(c, &t, a->n, &a->pos, a->values, a->offsets, a->field, NULL);
}
static int do_gather(partile_context_t *c, void *a_)
{
    run_args *a = (run_args *)a_;
    return partile_gather(c, &a->t, a->n, &a->pos, a->field, a->out, NULL);
}
static int do_sort(partile_context_t *c, void *a_)
{
    run_args *a = (run_args *)a_;
    int st = partile_sort(c, a->t.grid, a->n, &a->pos, a->offsets, a->perm, NULL, NULL);
    return st < 0 ? st : partile_permute(c, a->n, a->perm, a->narrays, a->arrays, NULL, 0);
}
int main(int argc, char **argv)
{
    const char *json_path = NULL;
    double max_n = 2.2e8, only_ppc = 0;
    int only_side = 0;
    partile_centering_t centering = PARTILE_CENTERING_NODE;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json_path = argv[++i];
        else if (!strcmp(argv[i], "--max") && i + 1 < argc)
            max_n = atof(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc &&
                 sscanf(argv[++i], "%d,%lf", &only_side, &only_ppc) == 2)
            ;
        else if (!strcmp(argv[i], "--centering") && i + 1 < argc &&
                 (!strcmp(argv[i + 1], "node") || !strcmp(argv[i + 1], "cell")))
            centering = !strcmp(argv[++i], "node") ? PARTILE_CENTERING_NODE : PARTILE_CENTERING_CELL;
        else {
            fprintf(stderr, "usage: bench_deposit [--json FILE] [--max N] [--only SIDE,PPC] "
                            "[--centering node|cell]\n");
            return 2;
        }
    }
    partile_context_t *ctx = NULL, *ref = NULL;
    PK(partile_context_create("cuda", 0, &ctx));
    PK(partile_context_create("reference", 0, &ref));
    FILE *jf = json_path ? fopen(json_path, "w") : NULL;
    bench_json j = { NULL, 1 };
    if (jf)
        bench_json_open(&j, jf, "deposit", ctx);
    double bandwidth = 0;
    PK(bench_copy_bandwidth(ctx, &bandwidth));
    printf("device %s, copy bandwidth %.0f GB/s\n", partile_context_device(ctx), bandwidth * 1e-9);
    if (jf)
        bench_json_row(&j, "copy_bandwidth", bandwidth, "B/s", -1, "");
    printf("%-5s %5s %4s %1s %11s | %9s %5s | %9s %5s | %9s %5s | %9s %5s | %9s %5s | %8s %8s | %7s\n",
           "mesh", "ppc", "shp", "m", "N", "unsorted", "roof", "sorted", "roof", "by-cell", "roof",
           "gather", "roof", "gather-s", "roof", "sort+p",
           "breakev", "ref x");
    int sides[] = { 16, 64, 128, 256 }; /* the seed's 16³ … 256³; --max bounds N */
    double ppcs[] = { 0.1, 1, 10, 100 };
    int nsides = 4, nppcs = 4;
    if (only_side) { /* any side and count, also those outside the sweep */
        sides[0] = only_side;
        ppcs[0] = only_ppc;
        nsides = nppcs = 1;
    }
    for (int si = 0; si < nsides; si++)
        for (int pi = 0; pi < nppcs; pi++)
            for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++)
                for (int m = 1; m <= 3; m += 2) {
                    const int side = sides[si];
                    const double cells = (double)side * side * side;
                    const size_t n = (size_t)llround(cells * ppcs[pi]);
                    if ((double)n > max_n || n < 100)
                        continue;
                    partile_grid_t grid = bench_unit_cube(side);
                    run_args a;
                    memset(&a, 0, sizeof a);
                    a.t.grid = &grid;
                    a.t.shape = (partile_shape_t)shape;
                    a.t.centering = centering;
                    a.t.components = m;
                    a.n = n;
                    int64_t pts[3], total;
                    PK(partile_field_shape(&grid, centering, pts, &total));
                    a.pos.type = PARTILE_DTYPE_FLOAT64;
                    for (int d = 0; d < 3; d++) {
                        double *x;
                        PK(partile_malloc(ctx, n * 8, (void **)&x));
                        fill_uniform<<<1024, 256>>>((long long)n, x, 0.0, 1.0, 77ull * (d + 1) + si);
                        a.pos.axis[d] = x;
                        a.arrays[d] = (partile_array_t){ x, PARTILE_DTYPE_FLOAT64 };
                    }
                    PK(partile_malloc(ctx, n * m * 8, (void **)&a.values));
                    fill_uniform<<<1024, 256>>>((long long)(n * m), a.values, -1.0, 2.0, 991ull);
                    PK(partile_malloc(ctx, (size_t)total * m * 8, (void **)&a.field));
                    PK(partile_memset(ctx, a.field, 0, (size_t)total * m * 8));
                    PK(partile_malloc(ctx, n * m * 8, (void **)&a.out));
                    PK(partile_malloc(ctx, (size_t)(cells + 1) * 8, (void **)&a.offsets));
                    PK(partile_malloc(ctx, n * 8, (void **)&a.perm));
                    a.narrays = 3;
                    cudaDeviceSynchronize();
                    partile_timing_t tu, ts, tc, tg, tgs, tsort;
                    PK(partile_time(ctx, do_unsorted, &a, 1, 3, &tu));
                    PK(partile_time(ctx, do_gather, &a, 1, 3, &tg)); /* random order */
                    /* sort + permute (positions; values would be one more array) */
                    PK(partile_time(ctx, do_sort, &a, 0, 1, &tsort));
                    a.arrays[3] = (partile_array_t){ a.values, PARTILE_DTYPE_FLOAT64 };
                    PK(partile_sort(ctx, &grid, n, &a.pos, a.offsets, a.perm, NULL, NULL));
                    PK(partile_time(ctx, do_sorted, &a, 1, 3, &ts));
                    /* by cell: CIC only (TSC takes the generic per-point kernel there) */
                    const int by_cell = shape == PARTILE_SHAPE_CIC;
                    tc.median_s = NAN;
                    if (by_cell)
                        PK(partile_time(ctx, do_sorted_by_cell, &a, 1, 3, &tc));
                    PK(partile_time(ctx, do_gather, &a, 1, 3, &tgs)); /* sorted positions */
                    const double dep_bytes = n * (24.0 + 8.0 * m) + 16.0 * m * total;
                    const double gat_bytes = n * (24.0 + 8.0 * m) + 8.0 * m * total;
                    /* the reference on the host's cores, for the smaller cases */
                    double ref_ratio = -1;
                    if (n <= 3000000) {
                        run_args h = a;
                        double *hx[3];
                        for (int d = 0; d < 3; d++) {
                            hx[d] = (double *)malloc(n * 8);
                            PK(partile_memcpy(ctx, hx[d], a.pos.axis[d], n * 8, PARTILE_COPY_DEVICE_TO_HOST));
                            h.pos.axis[d] = hx[d];
                        }
                        h.values = (double *)malloc(n * m * 8);
                        h.field = (double *)calloc((size_t)total * m, 8);
                        h.offsets = (int64_t *)malloc((size_t)(cells + 1) * 8);
                        PK(partile_memcpy(ctx, h.values, a.values, n * m * 8, PARTILE_COPY_DEVICE_TO_HOST));
                        PK(partile_memcpy(ctx, h.offsets, a.offsets, (size_t)(cells + 1) * 8, PARTILE_COPY_DEVICE_TO_HOST));
                        partile_timing_t tr;
                        PK(partile_time(ref, do_sorted, &h, 0, 1, &tr));
                        ref_ratio = tr.median_s / ts.median_s;
                        /* and the sorted deposit must be the reference's to the bit */
                        double *gf = (double *)malloc((size_t)total * m * 8);
                        double *rf = (double *)calloc((size_t)total * m, 8);
                        PK(partile_memset(ctx, a.field, 0, (size_t)total * m * 8));
                        PK(partile_deposit(ctx, &a.t, n, &a.pos, a.values, a.offsets, a.field, NULL));
                        PK(partile_memcpy(ctx, gf, a.field, (size_t)total * m * 8, PARTILE_COPY_DEVICE_TO_HOST));
                        PK(partile_deposit(ref, &h.t, n, &h.pos, h.values, h.offsets, rf, NULL));
                        if (memcmp(gf, rf, (size_t)total * m * 8) != 0) {
                            fprintf(stderr, "sorted deposit differs from the reference\n");
                            return 1;
                        }
                        /* and in the by-cell order */
                        memset(h.field, 0, (size_t)total * m * 8);
                        if (by_cell) {
                        PK(partile_memset(ctx, a.field, 0, (size_t)total * m * 8));
                        PK(do_sorted_by_cell(ctx, &a));
                        PK(partile_memcpy(ctx, gf, a.field, (size_t)total * m * 8, PARTILE_COPY_DEVICE_TO_HOST));
                        PK(do_sorted_by_cell(ref, &h));
                        if (memcmp(gf, h.field, (size_t)total * m * 8) != 0) {
                            fprintf(stderr, "sorted deposit by cell differs from the reference\n");
                            return 1;
                        }
                        }
                        free(gf), free(rf);
                        for (int d = 0; d < 3; d++)
                            free(hx[d]);
                        free(h.values), free(h.field), free(h.offsets);
                    }
                    const char *sn = centering == PARTILE_CENTERING_CELL
                                         ? (shape == PARTILE_SHAPE_CIC ? "cic-cell" : "tsc-cell")
                                         : (shape == PARTILE_SHAPE_CIC ? "cic" : "tsc");
                    printf("%4d^3 %5.1f %4s %d %11zu | %9.3f %5.2f | %9.3f %5.2f | %9.3f %5.2f | %9.3f %5.2f | %9.3f %5.2f | %8.3f %8.2f | %7.1f\n",
                           side, ppcs[pi], sn, m, n, tu.median_s * 1e3, dep_bytes / bandwidth / tu.median_s,
                           ts.median_s * 1e3, dep_bytes / bandwidth / ts.median_s,
                           tc.median_s * 1e3, dep_bytes / bandwidth / tc.median_s, tg.median_s * 1e3,
                           gat_bytes / bandwidth / tg.median_s, tgs.median_s * 1e3,
                           gat_bytes / bandwidth / tgs.median_s, tsort.median_s * 1e3,
                           (tsort.median_s + ts.median_s) / tu.median_s, ref_ratio);
                    fflush(stdout);
                    if (jf) {
                        char name[160];
#define ROW(what, v, unit, r, of)                                                               \
    snprintf(name, sizeof name, "%s.%s.m%d.side%d.ppc%g", what, sn, m, side, ppcs[pi]);          \
    bench_json_row(&j, name, v, unit, r, of)
                        ROW("deposit_unsorted_seconds", tu.median_s, "s", dep_bytes / bandwidth / tu.median_s, "roofline");
                        ROW("deposit_sorted_seconds", ts.median_s, "s", dep_bytes / bandwidth / ts.median_s, "roofline");
                        if (by_cell) {
                            ROW("deposit_sorted_by_cell_seconds", tc.median_s, "s", dep_bytes / bandwidth / tc.median_s, "roofline");
                        }
                        ROW("gather_seconds", tg.median_s, "s", gat_bytes / bandwidth / tg.median_s, "roofline");
                        ROW("gather_sorted_seconds", tgs.median_s, "s", gat_bytes / bandwidth / tgs.median_s, "roofline");
                        ROW("sort_permute_seconds", tsort.median_s, "s", -1, "");
                        ROW("particles", (double)n, "1", -1, "");
                        if (ref_ratio > 0) {
                            ROW("speedup_vs_reference_sorted_deposit", ref_ratio, "x", -1, "");
                        }
                    }
                    for (int d = 0; d < 3; d++)
                        partile_free(ctx, (void *)a.pos.axis[d]);
                    partile_free(ctx, a.values), partile_free(ctx, a.field), partile_free(ctx, a.out);
                    partile_free(ctx, a.offsets), partile_free(ctx, a.perm);
                }
    if (jf) {
        bench_json_close(&j);
        fclose(jf);
    }
    partile_context_destroy(ref);
    partile_context_destroy(ctx);
    return 0;
}
