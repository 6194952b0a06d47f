/* Host side of bench/bench_apply.cu, compiled by the C compiler with
 * OpenMP: plain CSR (scalar) and BSR 3×3 (tensor) SpMV over the arrays of
 * partile_mass_export, in FP64 and FP32, and the host copy bandwidth. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench/bench_apply_host.h"

void bench_spmv_host(int64_t rows, int b, const int64_t *ip, const int64_t *ix, const double *v,
                     const double *x, double *y)
{
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        double acc[3] = { 0.0, 0.0, 0.0 };
        for (int64_t k = ip[r]; k < ip[r + 1]; k++) {
            const double *blk = v + k * b * b, *xc = x + ix[k] * b;
            for (int i = 0; i < b; i++)
                for (int j = 0; j < b; j++)
                    acc[i] += blk[i * b + j] * xc[j];
        }
        for (int i = 0; i < b; i++)
            y[r * b + i] = acc[i];
    }
}

void bench_spmv_host_f32(int64_t rows, int b, const int64_t *ip, const int64_t *ix, const float *v,
                         const float *x, float *y)
{
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        float acc[3] = { 0.0f, 0.0f, 0.0f };
        for (int64_t k = ip[r]; k < ip[r + 1]; k++) {
            const float *blk = v + k * b * b, *xc = x + ix[k] * b;
            for (int i = 0; i < b; i++)
                for (int j = 0; j < b; j++)
                    acc[i] += blk[i * b + j] * xc[j];
        }
        for (int i = 0; i < b; i++)
            y[r * b + i] = acc[i];
    }
}

double bench_wtime(void)
{
#ifdef _OPENMP
    return omp_get_wtime();
#else
    return 0.0;
#endif
}

int bench_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

double bench_host_copy_bandwidth(void)
{
    const size_t n = (size_t)1 << 27; /* 1 GiB of doubles */
    double *a = malloc(n * 8), *b = malloc(n * 8);
    if (!a || !b) {
        free(a), free(b);
        return -1;
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        a[i] = (double)i, b[i] = 0.0;
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        const double t0 = bench_wtime();
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++)
            b[i] = a[i];
        const double t = bench_wtime() - t0;
        best = t < best ? t : best;
    }
    free(a), free(b);
    return 2.0 * (double)n * 8 / best;
}
