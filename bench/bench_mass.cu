/* Mass-matrix assembly benchmark (issue #4), CUDA: the paper's two sweeps —
 * particles per cell {1, 4, 13, 32, 64, 128, 256, 512, 1024} on 16³ cells,
 * and cells {8³ … 128³} at 128 ppc — on periodic grids with uniformly
 * random particles, for CIC and TSC, scalar and tensor (FP64). Each row:
 * particles/s of the tile kernel (bitwise and relaxed), its speedup over
 * the paper's kernels (i) (unsorted particles, global atomics) and (ii)
 * (sorted, plain FMAs per cell), bitwise against relaxed, and the fraction
 * of the roofline measured in the same run: scalar, bytes that must move
 * over the copy bandwidth; tensor, useful flops (2·N²·9 per particle, N
 * the support's points) over the FP64 tile peak (m16n8k16 on sm_90).
 * Particles are sorted once, outside the timing (the issue times assembly);
 * the bitwise result is checked against the reference for the small rows.
 * Each row also times the TF32 tiles (FP32 sums per group) and, for the
 * small rows, their largest error relative to the largest FP64 entry.
 * usage: bench_mass [--json FILE] [--max N] [--only SIDE,PPC] [--case NAME] [--dim D]
 *   --only and --case (cic-scalar, cic-tensor, tsc-scalar, tsc-tensor) pick one
 *   row, e.g. for a profiler (scripts/profile-kernels.sh). --dim 1 or 2 runs
 *   the same sweeps on 1-D or 2-D grids of as many cells as the cube's
 *   (side: the nearest integer to cells^(1/D); --only names that side), so
 *   the 1-D and 2-D kernels are timed too; the roofline's bytes and useful
 *   flops are those of the dimension (positions, N = 2^D or 3^D points). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_cuda.h"

typedef struct run_args {
    partile_mass_params_t p;
    size_t n;
    partile_vectors_t pos, pos_unsorted, omega, omega_unsorted;
    double *q, *storage;
    int64_t *offsets;
} run_args;

static int do_tiles(partile_context_t *c, void *a_)
{
    run_args *a = (run_args *)a_;
    return partile_mass_assemble(c, &a->p, a->n, &a->pos, a->offsets, a->q, &a->omega, a->storage,
                                 NULL);
}
static int do_atomic(partile_context_t *c, void *a_)
{
    run_args *a = (run_args *)a_;
    return partile_mass_assemble(c, &a->p, a->n, &a->pos_unsorted, NULL, a->q,
                                 &a->omega_unsorted, a->storage, NULL);
}

static double time_mode(partile_context_t *ctx, run_args *a, partile_mass_mode_t mode,
                        partile_mass_algorithm_t alg, int repeats)
{
    a->p.mode = mode;
    a->p.algorithm = alg;
    partile_timing_t t;
    PK(partile_time(ctx, alg == PARTILE_MASS_ATOMIC_UNSORTED ? do_atomic : do_tiles, a, 1,
                    repeats, &t));
    return t.median_s;
}

int main(int argc, char **argv)
{
    const char *json_path = NULL;
    double max_n = 2.7e8;
    int only_side = 0, only_ppc = 0;
    const char *only_case = NULL;
    int dim = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json_path = argv[++i];
        else if (!strcmp(argv[i], "--max") && i + 1 < argc)
            max_n = atof(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc &&
                 sscanf(argv[i + 1], "%d,%d", &only_side, &only_ppc) == 2)
            i++;
        else if (!strcmp(argv[i], "--case") && i + 1 < argc)
            only_case = argv[++i];
        else if (!strcmp(argv[i], "--dim") && i + 1 < argc && strlen(argv[i + 1]) == 1 &&
                 argv[i + 1][0] >= '1' && argv[i + 1][0] <= '3')
            dim = argv[++i][0] - '0';
        else {
            fprintf(stderr, "usage: bench_mass [--json FILE] [--max N] [--only SIDE,PPC] "
                            "[--case cic-scalar|cic-tensor|tsc-scalar|tsc-tensor] [--dim 1|2|3]\n");
            return 2;
        }
    }
    /* the sweeps' rows (side: of the grid of this dimension with as many
     * cells as the cube's), checked against --only and --case before any
     * device work */
    typedef struct sweep_point {
        int side, ppc;
    } sweep_point;
    sweep_point pts_list[32];
    int npts = 0;
    const int ppcs[] = { 1, 4, 13, 32, 64, 128, 256, 512, 1024 };
    for (int i = 0; i < 9; i++)
        pts_list[npts++] = (sweep_point){ 16, ppcs[i] };
    const int sides[] = { 8, 32, 64, 128 }; /* 16³ at 128 ppc is in the first sweep */
    for (int i = 0; i < 4; i++)
        pts_list[npts++] = (sweep_point){ sides[i], 128 };
    int only_found = !only_side;
    for (int pi = 0; pi < npts; pi++) {
        pts_list[pi].side = (int)llround(pow((double)pts_list[pi].side, 3.0 / dim));
        only_found |= pts_list[pi].side == only_side && pts_list[pi].ppc == only_ppc;
    }
    /* the cases by shape, then kind: cases[2 · (shape − CIC) + kind] */
    const char *cases[] = { "cic-scalar", "cic-tensor", "tsc-scalar", "tsc-tensor" };
    int case_found = !only_case;
    for (int i = 0; i < 4; i++)
        case_found |= only_case && !strcmp(only_case, cases[i]);
    if (!only_found || !case_found) {
        fprintf(stderr, "bench_mass: %s; the cases:", case_found ? "no row matches --only"
                                                                 : "no such --case");
        for (int i = 0; i < 4; i++)
            fprintf(stderr, " %s", cases[i]);
        fprintf(stderr, "; the %d-D rows (--only SIDE,PPC):", dim);
        for (int pi = 0; pi < npts; pi++)
            fprintf(stderr, " %d,%d", pts_list[pi].side, pts_list[pi].ppc);
        fprintf(stderr, "\n");
        return 2;
    }
    partile_context_t *ctx = NULL, *ref = NULL;
    PK(partile_context_create("cuda", 0, &ctx));
    PK(partile_context_create("reference", 0, &ref));
    FILE *jf = json_path ? fopen(json_path, "w") : NULL;
    bench_json j = { NULL, 1 };
    if (jf)
        bench_json_open(&j, jf, "mass", ctx);
    double bandwidth = 0, tile_peak = 0;
    PK(bench_copy_bandwidth(ctx, &bandwidth));
    partile_tile_t f64_tile = { 16, 8, 16, PARTILE_FP64, PARTILE_FP64 };
    if (partile_mma_peak(ctx, &f64_tile, &tile_peak) < 0) { /* sm_80: m8n8k4 */
        f64_tile = (partile_tile_t){ 8, 8, 4, PARTILE_FP64, PARTILE_FP64 };
        PK(partile_mma_peak(ctx, &f64_tile, &tile_peak));
    }
    printf("device %s, copy bandwidth %.0f GB/s, FP64 tile peak (m%dn%dk%d) %.1f TFLOP/s\n",
           partile_context_device(ctx), bandwidth * 1e-9, f64_tile.m, f64_tile.n, f64_tile.k,
           tile_peak * 1e-12);
    if (jf) {
        bench_json_row(&j, "copy_bandwidth", bandwidth, "B/s", -1, "");
        bench_json_row(&j, "f64_tile_peak", tile_peak, "flop/s", -1, "");
    }
    printf("%-6s %5s %-10s %11s | %9s %9s %6s | %6s %6s | %6s | %6s %8s | %s\n", "cells", "ppc", "case",
           "N", "bitwise", "Gpart/s", "roof", "x(ii)", "x(i)", "bw/rlx", "x tf32", "tf32 err",
           "ms: tiles-bitwise relaxed (ii) (i) tf32");
    int rows_run = 0;
    for (int pi = 0; pi < npts; pi++) {
        const int side = pts_list[pi].side, ppc = pts_list[pi].ppc;
        const double cells = pow((double)side, dim);
        const size_t n = (size_t)(cells * ppc);
        if ((double)n > max_n || (only_side && (side != only_side || ppc != only_ppc)))
            continue;
        partile_grid_t grid = bench_unit_box(dim, side);
        run_args a;
        memset(&a, 0, sizeof a);
        a.n = n;
        a.pos.type = a.pos_unsorted.type = a.omega.type = a.omega_unsorted.type =
            PARTILE_DTYPE_FLOAT64;
        partile_array_t arrays[7];
        for (int d = 0; d < 3; d++) {
            double *x, *xs, *w, *ws;
            PK(partile_malloc(ctx, n * 8, (void **)&x));
            PK(partile_malloc(ctx, n * 8, (void **)&xs));
            PK(partile_malloc(ctx, n * 8, (void **)&w));
            PK(partile_malloc(ctx, n * 8, (void **)&ws));
            fill_uniform<<<1024, 256>>>((long long)n, x, 0.0, 1.0, 71ull * (d + 1) + pi);
            fill_uniform<<<1024, 256>>>((long long)n, w, -1.0, 2.0, 97ull * (d + 1) + pi);
            CK(cudaMemcpy(xs, x, n * 8, cudaMemcpyDeviceToDevice));
            CK(cudaMemcpy(ws, w, n * 8, cudaMemcpyDeviceToDevice));
            a.pos_unsorted.axis[d] = x;
            a.omega_unsorted.axis[d] = w;
            a.pos.axis[d] = xs;
            a.omega.axis[d] = ws;
            arrays[d] = (partile_array_t){ xs, PARTILE_DTYPE_FLOAT64 };
            arrays[3 + d] = (partile_array_t){ ws, PARTILE_DTYPE_FLOAT64 };
        }
        PK(partile_malloc(ctx, n * 8, (void **)&a.q));
        fill_uniform<<<1024, 256>>>((long long)n, a.q, 0.5, 1.0, 5ull + pi);
        arrays[6] = (partile_array_t){ a.q, PARTILE_DTYPE_FLOAT64 };
        int64_t *perm;
        PK(partile_malloc(ctx, (size_t)(cells + 1) * 8, (void **)&a.offsets));
        PK(partile_malloc(ctx, n * 8, (void **)&perm));
        CK(cudaDeviceSynchronize());
        /* sorted copies (q is permuted too: kernel (i) then sees other charges
         * per position, the same work) */
        PK(partile_sort(ctx, &grid, n, &a.pos, a.offsets, perm, NULL, NULL));
        PK(partile_permute(ctx, n, perm, 7, arrays, NULL, 0));
        partile_free(ctx, perm);
        for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++)
            for (int kind = 0; kind <= 1; kind++) {
                const char *label = cases[2 * (shape - PARTILE_SHAPE_CIC) + kind];
                if (only_case && strcmp(only_case, label) != 0)
                    continue;
                partile_mass_layout_t L;
                PK(partile_mass_layout(&grid, (partile_shape_t)shape, (partile_mass_kind_t)kind, &L));
                PK(partile_malloc(ctx, L.entries * 8, (void **)&a.storage));
                a.p = (partile_mass_params_t){ &grid, (partile_shape_t)shape,
                                               (partile_mass_kind_t)kind, 1.0, 0, NULL, 0.0,
                                               PARTILE_MASS_BITWISE, PARTILE_MASS_TILES, PARTILE_MASS_FP64, PARTILE_ORDER_BY_POINT };
                const int tsc = shape == PARTILE_SHAPE_TSC;
                const int N = (int)llround(pow(tsc ? 3 : 2, dim)); /* the support's points */
                const double work = (double)n * N * N * (kind ? 9 : 1);
                const int reps = work > 4e10 ? 1 : 3;
                const double t_bit = time_mode(ctx, &a, PARTILE_MASS_BITWISE, PARTILE_MASS_TILES, reps);
                const double t_rel = time_mode(ctx, &a, PARTILE_MASS_RELAXED, PARTILE_MASS_TILES, reps);
                const double t_fma = time_mode(ctx, &a, PARTILE_MASS_BITWISE, PARTILE_MASS_FMA_PER_CELL, reps);
                a.p.precision = PARTILE_MASS_TF32; /* TF32 tiles, FP32 sums per group */
                const double t_tf32 = time_mode(ctx, &a, PARTILE_MASS_BITWISE, PARTILE_MASS_TILES, reps);
                a.p.precision = PARTILE_MASS_FP64;
                double tf32_err = -1; /* max |TF32 − FP64| over the largest FP64 entry */
                /* kernel (i): every product an atomic; skipped where it would take minutes */
                const double t_atom = work * (kind ? 1.0 : 1.0) > 2e11
                                          ? -1
                                          : time_mode(ctx, &a, PARTILE_MASS_RELAXED,
                                                      PARTILE_MASS_ATOMIC_UNSORTED, 1);
                double roof;
                const char *roof_of;
                if (kind) {
                    roof = 2.0 * N * N * 9 * (double)n / tile_peak / t_bit;
                    roof_of = "fp64_tile_peak_useful_flops";
                } else {
                    const double bytes = (double)n * 8 * (dim + 1) + (cells + 1) * 8 + (double)L.entries * 8;
                    roof = bytes / bandwidth / t_bit;
                    roof_of = "memory_roofline";
                }
                /* the bitwise result must be the reference's, where that is quick */
                if (n <= 600000) {
                    double *got = (double *)malloc(L.entries * 8), *want = (double *)malloc(L.entries * 8);
                    double *h[7];
                    int64_t *hoff = (int64_t *)malloc((size_t)(cells + 1) * 8);
                    for (int k = 0; k < 7; k++) {
                        h[k] = (double *)malloc(n * 8);
                        PK(partile_memcpy(ctx, h[k], arrays[k].data, n * 8, PARTILE_COPY_DEVICE_TO_HOST));
                    }
                    PK(partile_memcpy(ctx, hoff, a.offsets, (size_t)(cells + 1) * 8, PARTILE_COPY_DEVICE_TO_HOST));
                    a.p.mode = PARTILE_MASS_BITWISE;
                    a.p.algorithm = PARTILE_MASS_TILES;
                    PK(do_tiles(ctx, &a));
                    PK(partile_memcpy(ctx, got, a.storage, L.entries * 8, PARTILE_COPY_DEVICE_TO_HOST));
                    partile_vectors_t hp = { PARTILE_DTYPE_FLOAT64, { h[0], h[1], h[2] } };
                    partile_vectors_t hw = { PARTILE_DTYPE_FLOAT64, { h[3], h[4], h[5] } };
                    PK(partile_mass_assemble(ref, &a.p, n, &hp, hoff, h[6], &hw, want, NULL));
                    if (memcmp(got, want, L.entries * 8) != 0) {
                        fprintf(stderr, "bitwise assembly differs from the reference\n");
                        return 1;
                    }
                    a.p.precision = PARTILE_MASS_TF32;
                    PK(do_tiles(ctx, &a));
                    a.p.precision = PARTILE_MASS_FP64;
                    PK(partile_memcpy(ctx, want, a.storage, L.entries * 8, PARTILE_COPY_DEVICE_TO_HOST));
                    double peak = 0, diff = 0;
                    for (size_t e = 0; e < L.entries; e++) {
                        peak = fmax(peak, fabs(got[e]));
                        diff = fmax(diff, fabs(want[e] - got[e]));
                    }
                    tf32_err = diff / peak;
                    for (int k = 0; k < 7; k++)
                        free(h[k]);
                    free(hoff), free(got), free(want);
                }
                printf("%4d^%d %5d %-10s %11zu | %9.3f %9.3f %6.3f | %6.2f %6.1f | %6.3f | %6.2f %8.1e | "
                       "%.3f %.3f %.3f %.3f %.3f\n",
                       side, dim, ppc, label, n, t_bit * 1e3, n / t_bit * 1e-9, roof, t_fma / t_bit,
                       t_atom > 0 ? t_atom / t_bit : -1.0, t_bit / t_rel, t_bit / t_tf32, tf32_err,
                       t_bit * 1e3, t_rel * 1e3, t_fma * 1e3, t_atom * 1e3, t_tf32 * 1e3);
                fflush(stdout);
                rows_run++;
                if (jf) {
                    char name[160], dim_part[8] = ""; /* 3-D rows keep their names */
                    if (dim != 3)
                        snprintf(dim_part, sizeof dim_part, "dim%d.", dim);
#define ROW(what, v, unit, r, of)                                                               \
    snprintf(name, sizeof name, "%s.%s.%sside%d.ppc%d", what, label, dim_part, side, ppc);       \
    bench_json_row(&j, name, v, unit, r, of)
                    ROW("tiles_bitwise_seconds", t_bit, "s", roof, roof_of);
                    ROW("tiles_relaxed_seconds", t_rel, "s", t_bit / t_rel, "bitwise_over_relaxed_time");
                    ROW("fma_per_cell_seconds", t_fma, "s", t_fma / t_bit, "speedup_of_tiles");
                    if (t_atom > 0) {
                        ROW("atomic_unsorted_seconds", t_atom, "s", t_atom / t_bit, "speedup_of_tiles");
                    }
                    ROW("tiles_tf32_seconds", t_tf32, "s", t_bit / t_tf32, "speedup_over_fp64_tiles");
                    if (tf32_err >= 0) {
                        ROW("tf32_max_error_over_peak", tf32_err, "1", -1, "");
                    }
                    ROW("particles", (double)n, "1", -1, "");
                    ROW("particles_per_second", n / t_bit, "1/s", -1, "");
                }
                partile_free(ctx, a.storage);
            }
        for (int d = 0; d < 3; d++) {
            partile_free(ctx, (void *)a.pos.axis[d]), partile_free(ctx, (void *)a.pos_unsorted.axis[d]);
            partile_free(ctx, (void *)a.omega.axis[d]), partile_free(ctx, (void *)a.omega_unsorted.axis[d]);
        }
        partile_free(ctx, a.q), partile_free(ctx, a.offsets);
    }
    if (jf) {
        bench_json_close(&j);
        fclose(jf);
    }
    if (rows_run == 0) /* every row chosen is above --max */
        fprintf(stderr, "bench_mass: no row ran: the chosen rows have more than --max %.3g particles\n",
                max_n);
    partile_context_destroy(ref);
    partile_context_destroy(ctx);
    return rows_run ? 0 : 2;
}
