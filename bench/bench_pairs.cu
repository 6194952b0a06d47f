/* Pair interactions benchmark (issue #7), CUDA: unit periodic box, cell
 * width = cutoff, uniformly random particles at 1 to 128 per cell, 1e5 to
 * 1e8 particles, Lennard-Jones (force + energy, shifted) in FP32 and FP64.
 * Each row: seconds per evaluation (partile_time median of 3 after a
 * warm-up, input checks included) and interactions/s of every strategy and
 * of auto, the selector's pick and its time against the best, the memory
 * roofline (bytes of positions read and force + energy written, over the
 * copy bandwidth measured in this run) and the rate roofline (18 flops per
 * interaction against the measured FMA peak: partile_fma_peak for FP64, a
 * plain FP32 FMA kernel here). Interactions = the expected number of
 * ordered pairs within r_c, n (n − 1) (4π/3) r_c³ in a unit box.
 * --only S times strategy S alone, for A/B runs (scripts/device-ab.sh): the
 * other columns, the ratios and the selector's pick are left out (nan).
 * usage: bench_pairs [--json FILE] [--max-work W] [--max-n N] [--max-ppc P] [--only S] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_cuda.h"

#define FMA_CHAINS 8
#define FMA_ITERS 4096

static __global__ void fma_peak_f32(float *out, float seed)
{
    float a[FMA_CHAINS];
    for (int k = 0; k < FMA_CHAINS; k++)
        a[k] = seed + (float)(threadIdx.x + k);
    const float b = 0.999f, c = 1e-4f;
    for (int i = 0; i < FMA_ITERS; i++)
#pragma unroll
        for (int k = 0; k < FMA_CHAINS; k++)
            a[k] = fmaf(a[k], b, c);
    float s = 0;
    for (int k = 0; k < FMA_CHAINS; k++)
        s += a[k];
    if (s == 12345.0f)
        out[0] = s;
}

static double measure_fp32_peak(void)
{
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    float *d;
    CK(cudaMalloc(&d, 4));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const int blocks = 16 * sms, threads = 256;
    float best = 1e30f;
    for (int r = 0; r < 4; r++) {
        CK(cudaEventRecord(e0));
        fma_peak_f32<<<blocks, threads>>>(d, 1.0f);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r && ms < best)
            best = ms;
    }
    CK(cudaFree(d));
    return 2.0 * FMA_CHAINS * (double)FMA_ITERS * blocks * threads / (1e-3 * best);
}

typedef struct run_args {
    partile_grid_t grid;
    partile_pair_params_t p;
    size_t n;
    partile_vectors_t pos, force;
    void *energy;
    int64_t *offsets;
} run_args;

static int do_pairs(partile_context_t *c, void *a_)
{
    run_args *a = (run_args *)a_;
    return partile_pairs(c, &a->grid, &a->p, a->n, &a->pos, a->offsets, &a->force, a->energy,
                         NULL, NULL);
}

static __global__ void to_f32(long long n, const double *x, float *y)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        y[i] = (float)x[i];
}

int main(int argc, char **argv)
{
    const char *json_path = NULL;
    double max_work = 2e9, max_n = 1e8, max_ppc = 128; /* work = particles × particles per cell */
    int only = -1; /* --only S: time strategy S alone (an A/B), no ratios, no selector */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json_path = argv[++i];
        else if (!strcmp(argv[i], "--max-work") && i + 1 < argc)
            max_work = atof(argv[++i]);
        else if (!strcmp(argv[i], "--max-n") && i + 1 < argc)
            max_n = atof(argv[++i]);
        else if (!strcmp(argv[i], "--max-ppc") && i + 1 < argc)
            max_ppc = atof(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc && partile_pairs_strategy_from_name(argv[i + 1], &only) == 0)
            i++;
        else {
            fprintf(stderr, "usage: bench_pairs [--json FILE] [--max-work W] [--max-n N] [--max-ppc P] "
                            "[--only naive|all-in-sm|x-pencil|x-pencil-reg|auto]\n");
            return 2;
        }
    }
    partile_context_t *ctx = NULL;
    PK(partile_context_create("cuda", 0, &ctx));
    FILE *jf = json_path ? fopen(json_path, "w") : NULL;
    bench_json j = { NULL, 1 };
    if (jf)
        bench_json_open(&j, jf, "pairs", ctx);
    double bandwidth = 0, peak64 = 0, peak32 = measure_fp32_peak();
    PK(bench_copy_bandwidth(ctx, &bandwidth));
    PK(partile_fma_peak(ctx, &peak64));
    printf("device %s, copy bandwidth %.0f GB/s, FMA peak FP32 %.1f TFLOP/s, FP64 %.1f TFLOP/s\n",
           partile_context_device(ctx), bandwidth * 1e-9, peak32 * 1e-12, peak64 * 1e-12);
    if (jf) {
        bench_json_row(&j, "copy_bandwidth", bandwidth, "B/s", -1, "");
        bench_json_row(&j, "fma_peak_f32", peak32, "flop/s", -1, "");
        bench_json_row(&j, "fma_peak_f64", peak64, "flop/s", -1, "");
    }
    static const char *const sname[PARTILE_PAIRS_STRATEGIES] = { "auto", "naive", "all-in-sm",
                                                                 "x-pencil", "x-pencil-reg" };
    printf("%4s %4s %10s | %8s %8s %8s %8s %8s | %6s %6s | %-12s %5s | %5s %5s\n", "prec", "ppc",
           "N", "naive", "aism", "xpen", "xpenreg", "auto", "best/n", "Gint/s", "selected", "sel/b",
           "mem", "rate");
    printf("%4s %4s %10s | %44s | %13s | %18s | %11s\n", "", "", "", "ms per evaluation", "",
           "", "of roofline");
    const double ns[] = { 1e5, 1e6, 1e7, 1e8 };
    const int ppcs[] = { 1, 2, 4, 8, 16, 32, 64, 128 };
    for (int f32 = 1; f32 >= 0; f32--)
        for (int pi = 0; pi < 8; pi++)
            for (int ni = 0; ni < 4; ni++) {
                const int ppc = ppcs[pi];
                if (ns[ni] > max_n || ns[ni] * ppc > max_work || ppc > max_ppc)
                    continue;
                const long long side = llround(cbrt(ns[ni] / ppc));
                if (side < 3)
                    continue;
                const double cells = (double)side * side * side;
                const size_t n = (size_t)(cells * ppc);
                const double rc = 1.0 / (double)side;
                const size_t esz = f32 ? 4 : 8;
                run_args a;
                memset(&a, 0, sizeof a);
                a.grid.dim = 3;
                for (int d = 0; d < 3; d++) {
                    a.grid.cells[d] = side;
                    a.grid.spacing[d] = rc;
                    a.grid.periodic[d] = 1;
                }
                a.p.interaction = PARTILE_PAIRS_LJ;
                a.p.cutoff = rc;
                a.p.epsilon = 1.0;
                a.p.sigma = rc / 2.5;
                a.p.shifted = 1;
                a.n = n;
                /* random positions (FP64), sorted by cell and permuted */
                double *x[3];
                partile_vectors_t pos64 = { PARTILE_DTYPE_FLOAT64, { NULL, NULL, NULL } };
                partile_array_t arrays[3];
                for (int d = 0; d < 3; d++) {
                    PK(partile_malloc(ctx, n * 8, (void **)&x[d]));
                    fill_uniform<<<1024, 256>>>((long long)n, x[d], 0.0, 1.0, 1234ull * (d + 1) + ppc);
                    pos64.axis[d] = x[d];
                    arrays[d] = (partile_array_t){ x[d], PARTILE_DTYPE_FLOAT64 };
                }
                CK(cudaGetLastError());
                int64_t *perm;
                PK(partile_malloc(ctx, (size_t)(cells + 1) * 8, (void **)&a.offsets));
                PK(partile_malloc(ctx, n * 8, (void **)&perm));
                PK(partile_sort(ctx, &a.grid, n, &pos64, a.offsets, perm, NULL, NULL));
                PK(partile_permute(ctx, n, perm, 3, arrays, NULL, 0));
                partile_free(ctx, perm);
                a.pos.type = a.force.type = f32 ? PARTILE_DTYPE_FLOAT32 : PARTILE_DTYPE_FLOAT64;
                for (int d = 0; d < 3; d++) {
                    if (f32) {
                        float *y;
                        PK(partile_malloc(ctx, n * 4, (void **)&y));
                        to_f32<<<1024, 256>>>((long long)n, x[d], y);
                        partile_free(ctx, x[d]);
                        a.pos.axis[d] = y;
                    } else {
                        a.pos.axis[d] = x[d];
                    }
                    void *f;
                    PK(partile_malloc(ctx, n * esz, &f));
                    a.force.axis[d] = f;
                }
                PK(partile_malloc(ctx, n * esz, &a.energy));
                CK(cudaDeviceSynchronize());
                /* FP32 rounding may move a particle across a cell face: re-sort in FP32 */
                if (f32) {
                    float *y[3];
                    for (int d = 0; d < 3; d++) {
                        y[d] = (float *)a.pos.axis[d];
                        arrays[d] = (partile_array_t){ y[d], PARTILE_DTYPE_FLOAT32 };
                    }
                    PK(partile_malloc(ctx, n * 8, (void **)&perm));
                    PK(partile_sort(ctx, &a.grid, n, &a.pos, a.offsets, perm, NULL, NULL));
                    PK(partile_permute(ctx, n, perm, 3, arrays, NULL, 0));
                    partile_free(ctx, perm);
                }
                double t[PARTILE_PAIRS_STRATEGIES];
                for (int s = 0; s < PARTILE_PAIRS_STRATEGIES; s++) {
                    partile_timing_t tm;
                    t[s] = NAN;
                    if (only >= 0 && s != only)
                        continue;
                    a.p.strategy = s;
                    PK(partile_time(ctx, do_pairs, &a, 1, 3, &tm));
                    t[s] = tm.median_s;
                }
                int best = only >= 0 ? only : PARTILE_PAIRS_NAIVE, pick = best;
                for (int s = PARTILE_PAIRS_NAIVE; only < 0 && s < PARTILE_PAIRS_STRATEGIES; s++)
                    if (t[s] < t[best])
                        best = s;
                double sel_times[PARTILE_PAIRS_STRATEGIES];
                if (only < 0)
                    PK(partile_pairs_select(ctx, &a.grid, &a.p, n, &a.pos, a.offsets, &a.force,
                                            a.energy, &pick, sel_times));
                const double inter = (double)n * (double)(n - 1) * (4.0 / 3.0) * M_PI * rc * rc * rc;
                const double bytes = (double)n * 7.0 * (double)esz;
                const double peak = f32 ? peak32 : peak64;
                const double mem = bytes / bandwidth / t[best], rate = inter * 18.0 / peak / t[best];
                printf("%4s %4d %10zu | %8.3f %8.3f %8.3f %8.3f %8.3f | %6.2f %6.1f | %-12s %5.2f | "
                       "%5.2f %5.2f\n",
                       f32 ? "fp32" : "fp64", ppc, n, t[1] * 1e3, t[2] * 1e3, t[3] * 1e3, t[4] * 1e3,
                       t[0] * 1e3, t[1] / t[best], inter / t[best] * 1e-9, sname[pick],
                       t[pick] / t[best], mem, rate);
                fflush(stdout);
                if (jf) {
                    char name[160];
                    const char *prec = f32 ? "fp32" : "fp64";
                    for (int s = 0; s < PARTILE_PAIRS_STRATEGIES; s++) {
                        if (isnan(t[s])) /* not timed (--only) */
                            continue;
                        snprintf(name, sizeof name, "pairs_seconds.%s.ppc%d.n%zu.%s", prec, ppc, n, sname[s]);
                        bench_json_row(&j, name, t[s], "s", bytes / bandwidth / t[s], "memory_roofline");
                        snprintf(name, sizeof name, "interactions_per_second.%s.ppc%d.n%zu.%s", prec, ppc,
                                 n, sname[s]);
                        bench_json_row(&j, name, inter / t[s], "1/s", inter * 18.0 / peak / t[s],
                                       "rate_roofline");
                    }
                    if (only < 0) {
                        snprintf(name, sizeof name, "selected.%s.ppc%d.n%zu.%s", prec, ppc, n, sname[pick]);
                        bench_json_row(&j, name, t[pick], "s", t[best] / t[pick], "best");
                        snprintf(name, sizeof name, "best_over_naive.%s.ppc%d.n%zu.%s", prec, ppc, n,
                                 sname[best]);
                        bench_json_row(&j, name, t[1] / t[best], "x", -1, "");
                    }
                }
                if (jf)
                    fflush(jf);
                for (int d = 0; d < 3; d++) {
                    partile_free(ctx, (void *)a.pos.axis[d]);
                    partile_free(ctx, (void *)a.force.axis[d]);
                }
                partile_free(ctx, a.energy), partile_free(ctx, a.offsets);
            }
    if (jf) {
        bench_json_close(&j);
        fclose(jf);
    }
    partile_context_destroy(ctx);
    return 0;
}
