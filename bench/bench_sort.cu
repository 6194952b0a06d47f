/* Sorting benchmark (issue #3), CUDA only: partile's full sort and re-sort
 * against CUB's DeviceRadixSort::SortPairs on the same keys and payload, and
 * against the memory roofline (bytes that must move over the copy bandwidth
 * measured in the same run).
 *
 * Per (particles N, particles per cell): uniform random FP64 positions on a
 * periodic 3-D grid of about N/ppc cells;
 *   - partile_sort from positions (binning + counting sort + fix-up);
 *   - CUB SortPairs of the same cells as 32-bit keys with 32-bit particle
 *     indices as payload, end_bit = bits needed for the cell count (CUB's best
 *     case; the binning it needs is timed separately);
 *   - move every particle by up to ±0.1 cell per axis (after reordering it
 *     by the first sort) and time partile_resort against partile_sort on the
 *     moved particles.
 * usage: bench_sort [--json FILE] [--max N] [--n N] [--ppc P] */
#include <cub/device/device_radix_sort.cuh>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_cuda.h"

/* y = x[perm] + a step of up to ±0.1 cell (periodic grid: no clamping) */
__global__ void move_particles(long long n, const int64_t *perm, const double *x, double *y,
                               double h, unsigned long long seed)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        double u = (double)(mix(seed + 0x9e3779b97f4a7c15ull * (i + 1)) >> 11) * 0x1p-53;
        y[i] = x[perm[i]] + (2 * u - 1) * 0.1 * h;
    }
}

__global__ void keys_from_cells(long long n, const int64_t *cell, unsigned *key, unsigned *val)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        key[i] = (unsigned)cell[i];
        val[i] = (unsigned)i;
    }
}

typedef struct sort_args {
    partile_grid_t grid;
    size_t n;
    partile_vectors_t pos;
    int64_t *offsets, *perm, *cell, *old_offsets, *old_cell;
} sort_args;

static int run_sort(partile_context_t *ctx, void *arg)
{
    sort_args *a = (sort_args *)arg;
    return partile_sort(ctx, &a->grid, a->n, &a->pos, a->offsets, a->perm, a->cell, NULL);
}

static int run_resort(partile_context_t *ctx, void *arg)
{
    sort_args *a = (sort_args *)arg;
    return partile_resort(ctx, &a->grid, a->n, &a->pos, a->old_offsets, a->old_cell, a->offsets,
                          a->perm, a->cell, NULL);
}

static int run_bin(partile_context_t *ctx, void *arg)
{
    sort_args *a = (sort_args *)arg;
    return partile_bin(ctx, &a->grid, a->n, &a->pos, a->cell, NULL);
}

typedef struct cub_args {
    void *temp;
    size_t temp_bytes;
    unsigned *kin, *kout, *vin, *vout;
    long long n;
    int end_bit;
} cub_args;

/* CUB on its own stream, timed with its own events: warm-up, median of 5. */
static double time_cub(cub_args *c)
{
    cudaStream_t s;
    cudaEvent_t e0, e1;
    CK(cudaStreamCreate(&s));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    float ms[6];
    for (int r = 0; r < 6; r++) {
        CK(cudaEventRecord(e0, s));
        CK(cub::DeviceRadixSort::SortPairs(c->temp, c->temp_bytes, c->kin, c->kout, c->vin,
                                           c->vout, c->n, 0, c->end_bit, s));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms[r], e0, e1));
    }
    /* median of the 5 after the warm-up */
    for (int i = 1; i < 6; i++)
        for (int k = i + 1; k < 6; k++)
            if (ms[k] < ms[i]) {
                float t = ms[i];
                ms[i] = ms[k];
                ms[k] = t;
            }
    cudaEventDestroy(e0), cudaEventDestroy(e1), cudaStreamDestroy(s);
    return 1e-3 * ms[3];
}

int main(int argc, char **argv)
{
    const char *json_path = NULL;
    double max_n = 1e9, only_n = 0, only_ppc = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json_path = argv[++i];
        else if (!strcmp(argv[i], "--max") && i + 1 < argc)
            max_n = atof(argv[++i]);
        else if (!strcmp(argv[i], "--n") && i + 1 < argc)
            only_n = atof(argv[++i]);
        else if (!strcmp(argv[i], "--ppc") && i + 1 < argc)
            only_ppc = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_sort [--json FILE] [--max N] [--n N] [--ppc P]\n");
            return 2;
        }
    }
    partile_context_t *ctx = NULL;
    PK(partile_context_create("cuda", 0, &ctx));
    FILE *jf = json_path ? fopen(json_path, "w") : NULL;
    bench_json j = { NULL, 1 };
    if (jf)
        bench_json_open(&j, jf, "sort", ctx);

    /* the memory ceiling, measured now */
    double bandwidth = 0;
    PK(bench_copy_bandwidth(ctx, &bandwidth));
    printf("device %s, copy bandwidth %.0f GB/s\n", partile_context_device(ctx), bandwidth * 1e-9);
    if (jf)
        bench_json_row(&j, "copy_bandwidth", bandwidth, "B/s", -1, "");

    printf("%-10s %6s %10s | %9s %9s %9s %9s | %7s %7s %7s | %9s %9s %6s %7s\n", "N", "ppc",
           "cells", "sort ms", "bin ms", "cub ms", "bin+cub", "x cub", "x b+cub", "roof",
           "full ms", "resort ms", "x", "roof");
    const double sizes[] = { 1e7, 1e8, 1e9 };
    const double ppcs[] = { 0.1, 1, 10, 128 };
    for (int si = 0; si < 3; si++)
        for (int pi = 0; pi < 4; pi++) {
            const size_t n = (size_t)sizes[si];
            if (sizes[si] > max_n || (only_n && sizes[si] != only_n) ||
                (only_ppc && ppcs[pi] != only_ppc))
                continue;
            int64_t side = (int64_t)llround(cbrt(sizes[si] / ppcs[pi]));
            int64_t ncells = side * side * side;
            if (ncells >= 0xffffffffll || (sizes[si] >= 1e9 && ppcs[pi] < 1))
                continue; /* beyond the 32-bit GPU path / the card's memory */
            sort_args a;
            memset(&a, 0, sizeof a);
            a.n = n;
            a.grid.dim = 3;
            for (int d = 0; d < 3; d++) {
                a.grid.cells[d] = side;
                a.grid.lower[d] = -0.5;
                a.grid.spacing[d] = 1.0 / (double)side;
                a.grid.periodic[d] = 1;
            }
            double *x[3], *y[3];
            a.pos.type = PARTILE_DTYPE_FLOAT64;
            for (int d = 0; d < 3; d++) {
                PK(partile_malloc(ctx, n * 8, (void **)&x[d]));
                fill_uniform<<<1024, 256>>>((long long)n, x[d], -0.5, 1.0, 1234567ull * (d + 1) + si * 7 + pi);
                CK(cudaGetLastError());
                a.pos.axis[d] = x[d];
            }
            CK(cudaDeviceSynchronize());
            PK(partile_malloc(ctx, (size_t)(ncells + 1) * 8, (void **)&a.offsets));
            PK(partile_malloc(ctx, n * 8, (void **)&a.perm));
            PK(partile_malloc(ctx, n * 8, (void **)&a.cell));

            /* full sort from positions */
            partile_timing_t ts, tb, tc;
            PK(partile_time(ctx, run_sort, &a, 1, 5, &ts));
            PK(partile_time(ctx, run_bin, &a, 1, 5, &tb));

            /* CUB on the same cells, 32-bit keys and payload */
            cub_args c;
            memset(&c, 0, sizeof c);
            c.n = (long long)n;
            while ((1ll << c.end_bit) < ncells)
                c.end_bit++;
            CK(cudaMalloc(&c.kin, n * 4));
            CK(cudaMalloc(&c.kout, n * 4));
            CK(cudaMalloc(&c.vin, n * 4));
            CK(cudaMalloc(&c.vout, n * 4));
            keys_from_cells<<<1024, 256>>>((long long)n, a.cell, c.kin, c.vin);
            CK(cudaGetLastError());
            CK(cub::DeviceRadixSort::SortPairs(NULL, c.temp_bytes, c.kin, c.kout, c.vin, c.vout,
                                               c.n, 0, c.end_bit));
            CK(cudaMalloc(&c.temp, c.temp_bytes));
            CK(cudaDeviceSynchronize());
            tc.median_s = time_cub(&c);
            /* CUB's result must be our result (same stable order) */
            {
                unsigned *h = (unsigned *)malloc(n * 4);
                int64_t *p = (int64_t *)malloc(n * 8);
                CK(cudaMemcpy(h, c.vout, n * 4, cudaMemcpyDeviceToHost));
                PK(partile_sort(ctx, &a.grid, n, &a.pos, a.offsets, a.perm, a.cell, NULL));
                PK(partile_memcpy(ctx, p, a.perm, n * 8, PARTILE_COPY_DEVICE_TO_HOST));
                for (size_t i = 0; i < n; i++)
                    if ((int64_t)h[i] != p[i]) {
                        fprintf(stderr, "perm differs from CUB's at %zu: %lld vs %u\n", i,
                                (long long)p[i], h[i]);
                        return 1;
                    }
                free(h);
                free(p);
            }
            cudaFree(c.kin), cudaFree(c.kout), cudaFree(c.vin), cudaFree(c.vout), cudaFree(c.temp);

            /* re-sort after a move of up to 0.1 cell */
            partile_timing_t tr, tf;
            a.old_offsets = a.offsets;
            a.old_cell = a.cell;
            for (int d = 0; d < 3; d++) {
                PK(partile_malloc(ctx, n * 8, (void **)&y[d]));
                move_particles<<<1024, 256>>>((long long)n, a.perm, x[d], y[d], a.grid.spacing[d], 99ull + d);
                CK(cudaGetLastError());
                partile_free(ctx, x[d]);
                a.pos.axis[d] = y[d];
            }
            PK(partile_malloc(ctx, (size_t)(ncells + 1) * 8, (void **)&a.offsets));
            PK(partile_malloc(ctx, n * 8, (void **)&a.perm));
            PK(partile_malloc(ctx, n * 8, (void **)&a.cell));
            PK(partile_time(ctx, run_resort, &a, 1, 5, &tr));
            PK(partile_time(ctx, run_sort, &a, 1, 5, &tf));

            /* bytes that must move: full sort reads 3 positions, writes perm,
             * sorted cell and offsets; re-sort also reads the old cell list */
            const double full_bytes = 40.0 * n + 8.0 * (ncells + 1);
            const double resort_bytes = full_bytes + 8.0 * n + 8.0 * (ncells + 1);
            const double roof_full = full_bytes / bandwidth, roof_re = resort_bytes / bandwidth;
            printf("%-10.0e %6.1f %10lld | %9.3f %9.3f %9.3f %9.3f | %7.2f %7.2f %7.2f | %9.3f %9.3f "
                   "%6.2f %7.2f\n",
                   sizes[si], ppcs[pi], (long long)ncells, ts.median_s * 1e3, tb.median_s * 1e3,
                   tc.median_s * 1e3, (tb.median_s + tc.median_s) * 1e3, tc.median_s / ts.median_s,
                   (tb.median_s + tc.median_s) / ts.median_s, roof_full / ts.median_s,
                   tf.median_s * 1e3, tr.median_s * 1e3, tf.median_s / tr.median_s,
                   roof_re / tr.median_s);
            fflush(stdout);
            if (jf) {
                char name[128];
#define ROW(what, v, unit, r, of)                                                              \
    snprintf(name, sizeof name, "%s.n%.0e.ppc%g", what, sizes[si], ppcs[pi]);                   \
    bench_json_row(&j, name, v, unit, r, of)
                ROW("sort_seconds", ts.median_s, "s", roof_full / ts.median_s, "roofline");
                ROW("bin_seconds", tb.median_s, "s", -1, "");
                ROW("cub_sortpairs_seconds", tc.median_s, "s", -1, "");
                ROW("speedup_vs_cub", tc.median_s / ts.median_s, "x", -1, "");
                ROW("speedup_vs_bin_plus_cub", (tb.median_s + tc.median_s) / ts.median_s, "x", -1, "");
                ROW("resort_seconds", tr.median_s, "s", roof_re / tr.median_s, "roofline");
                ROW("full_sort_moved_seconds", tf.median_s, "s", -1, "");
                ROW("resort_speedup", tf.median_s / tr.median_s, "x", -1, "");
                ROW("particles_per_second_sort", n / ts.median_s, "1/s", -1, "");
            }
            for (int d = 0; d < 3; d++)
                partile_free(ctx, y[d]);
            partile_free(ctx, a.offsets), partile_free(ctx, a.perm), partile_free(ctx, a.cell);
            partile_free(ctx, a.old_offsets), partile_free(ctx, a.old_cell);
        }
    if (jf) {
        bench_json_close(&j);
        fclose(jf);
    }
    partile_context_destroy(ctx);
    return 0;
}
