/* partile inside a CUDA code: the code's own kernels and partile's share one
 * stream and the same device arrays, with no synchronization between them.
 * A step: the code pushes its particles (its kernel, held back behind a
 * kernel that spins for about 20 ms, so that anything that did not wait
 * for it would read the old positions), partile sorts them and deposits
 * their charge on that stream, and the code's next kernel scales the field;
 * one copy back at the end. The same step on the host, with the reference
 * backend, must give the same bits: the permutation, the cell list and the
 * field.
 * Build against an installed partile:
 *   nvcc -fmad=false cuda_interop.cu $(pkg-config --cflags --libs partile)
 * usage: cuda_interop   (exit 77: no CUDA device, or partile without CUDA) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include <partile/partile.h>

#define CUDA_CHECK(call)                                                                           \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess) {                                                                 \
            fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(err_));                         \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static void partile_check(int status, const char *what)
{
    if (status < 0) {
        fprintf(stderr, "%s: %s: %s\n", what, partile_status_string(status),
                partile_last_error_detail());
        exit(1);
    }
}

enum { SIDE = 32, N = 1 << 21 };
static const double DT = 0.37;

/* The code's push: x += v·dt, back into [0, 1) (periodic); the same
 * operations on the host (no contraction: nvcc -fmad=false, as partile's
 * build uses). */
__host__ __device__ static double pushed(double x, double v)
{
    double y = x + v * DT;
    if (y >= 1.0)
        y -= 1.0;
    if (y < 0.0)
        y += 1.0;
    return y;
}

static __global__ void spin(long long cycles)
{
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

static __global__ void push(int n, double *x, double *y, double *z, const double *vx,
                            const double *vy, const double *vz)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < n) {
        x[p] = pushed(x[p], vx[p]);
        y[p] = pushed(y[p], vy[p]);
        z[p] = pushed(z[p], vz[p]);
    }
}

static __global__ void scale(int count, double *f, double factor)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count)
        f[i] = factor * f[i];
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double uniform(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1p-53;
}

int main(void)
{
    partile_context_t *ctx = NULL;
    int st = partile_context_create("cuda", 0, &ctx);
    if (st == PARTILE_ERROR_NOT_COMPILED || st == PARTILE_ERROR_NO_DEVICE) {
        printf("SKIP: %s\n", partile_last_error_detail());
        return 77;
    }
    partile_check(st, "context");
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    partile_check(partile_context_set_stream(ctx, stream), "set stream");

    const partile_grid_t grid = { 3, { SIDE, SIDE, SIDE }, { 0, 0, 0 },
                                  { 1.0 / SIDE, 1.0 / SIDE, 1.0 / SIDE }, { 1, 1, 1 } };
    const int64_t cells = (int64_t)SIDE * SIDE * SIDE;
    double *h[7]; /* x, y, z, vx, vy, vz, q on the host */
    for (int a = 0; a < 7; a++) {
        h[a] = (double *)malloc(N * sizeof(double));
        if (!h[a])
            return 1;
        for (int p = 0; p < N; p++)
            h[a][p] = a < 3 ? uniform() : a < 6 ? uniform() - 0.5 : uniform() - 0.25;
    }
    /* the code's own device arrays, from cudaMalloc */
    double *d[7], *d_field;
    int64_t *d_offsets, *d_perm;
    for (int a = 0; a < 7; a++) {
        CUDA_CHECK(cudaMalloc(&d[a], N * sizeof(double)));
        CUDA_CHECK(cudaMemcpy(d[a], h[a], N * sizeof(double), cudaMemcpyHostToDevice));
    }
    CUDA_CHECK(cudaMalloc(&d_field, cells * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&d_offsets, (cells + 1) * sizeof(int64_t)));
    CUDA_CHECK(cudaMalloc(&d_perm, N * sizeof(int64_t)));

    /* the step, all on `stream`: no synchronization of the code's */
    int rate_khz = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&rate_khz, cudaDevAttrClockRate, 0));
    spin<<<1, 1, 0, stream>>>((long long)rate_khz * 20); /* ~20 ms */
    push<<<(N + 255) / 256, 256, 0, stream>>>(N, d[0], d[1], d[2], d[3], d[4], d[5]);
    CUDA_CHECK(cudaGetLastError());
    const partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { d[0], d[1], d[2] } };
    partile_check(partile_sort(ctx, &grid, N, &pos, d_offsets, d_perm, NULL, NULL), "sort");
    const partile_array_t arrays[4] = { { d[0], PARTILE_DTYPE_FLOAT64 },
                                        { d[1], PARTILE_DTYPE_FLOAT64 },
                                        { d[2], PARTILE_DTYPE_FLOAT64 },
                                        { d[6], PARTILE_DTYPE_FLOAT64 } };
    partile_check(partile_permute(ctx, N, d_perm, 4, arrays, NULL, 0), "permute");
    CUDA_CHECK(cudaMemsetAsync(d_field, 0, cells * sizeof(double), stream));
    const partile_transfer_t t = { &grid, PARTILE_SHAPE_CIC, PARTILE_CENTERING_NODE, 1, NULL,
                                   PARTILE_ORDER_BY_POINT };
    partile_check(partile_deposit(ctx, &t, N, &pos, d[6], d_offsets, d_field, NULL), "deposit");
    scale<<<(int)((cells + 255) / 256), 256, 0, stream>>>((int)cells, d_field, 2.0);
    CUDA_CHECK(cudaGetLastError());
    double *field = (double *)malloc(cells * sizeof(double));
    int64_t *offsets = (int64_t *)malloc((cells + 1) * sizeof(int64_t));
    int64_t *perm = (int64_t *)malloc(N * sizeof(int64_t));
    if (!field || !offsets || !perm)
        return 1;
    CUDA_CHECK(cudaMemcpyAsync(field, d_field, cells * sizeof(double), cudaMemcpyDeviceToHost,
                               stream));
    CUDA_CHECK(cudaMemcpyAsync(offsets, d_offsets, (cells + 1) * sizeof(int64_t),
                               cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaMemcpyAsync(perm, d_perm, N * sizeof(int64_t), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));

    /* the same step on the host, the reference backend */
    partile_context_t *ref = NULL;
    partile_check(partile_context_create("reference", 0, &ref), "reference");
    for (int p = 0; p < N; p++)
        for (int a = 0; a < 3; a++)
            h[a][p] = pushed(h[a][p], h[3 + a][p]);
    const partile_vectors_t hpos = { PARTILE_DTYPE_FLOAT64, { h[0], h[1], h[2] } };
    int64_t *want_offsets = (int64_t *)malloc((cells + 1) * sizeof(int64_t));
    int64_t *want_perm = (int64_t *)malloc(N * sizeof(int64_t));
    double *want_field = (double *)calloc((size_t)cells, sizeof(double));
    if (!want_offsets || !want_perm || !want_field)
        return 1;
    partile_check(partile_sort(ref, &grid, N, &hpos, want_offsets, want_perm, NULL, NULL),
                  "reference sort");
    const partile_array_t harrays[4] = { { h[0], PARTILE_DTYPE_FLOAT64 },
                                         { h[1], PARTILE_DTYPE_FLOAT64 },
                                         { h[2], PARTILE_DTYPE_FLOAT64 },
                                         { h[6], PARTILE_DTYPE_FLOAT64 } };
    partile_check(partile_permute(ref, N, want_perm, 4, harrays, NULL, 0), "reference permute");
    partile_check(partile_deposit(ref, &t, N, &hpos, h[6], want_offsets, want_field, NULL),
                  "reference deposit");
    for (int64_t i = 0; i < cells; i++)
        want_field[i] = 2.0 * want_field[i];

    const int same_offsets = !memcmp(offsets, want_offsets, (cells + 1) * sizeof(int64_t));
    const int same_perm = !memcmp(perm, want_perm, N * sizeof(int64_t));
    const int same_field = !memcmp(field, want_field, cells * sizeof(double));
    printf("cuda_interop: %d particles pushed by the code's kernel, sorted, permuted and "
           "deposited by partile, the field scaled by the code's kernel, all on one stream:\n"
           "  cell list %s, permutation %s, field %s the reference's bit for bit\n",
           N, same_offsets ? "equal to" : "DIFFERENT from", same_perm ? "equal to" : "DIFFERENT from",
           same_field ? "equal to" : "DIFFERENT from");

    partile_check(partile_context_set_stream(ctx, NULL), "own stream");
    partile_context_destroy(ctx);
    partile_context_destroy(ref);
    CUDA_CHECK(cudaStreamDestroy(stream));
    for (int a = 0; a < 7; a++) {
        cudaFree(d[a]);
        free(h[a]);
    }
    cudaFree(d_field), cudaFree(d_offsets), cudaFree(d_perm);
    free(field), free(offsets), free(perm), free(want_offsets), free(want_perm), free(want_field);
    return same_offsets && same_perm && same_field ? 0 : 1;
}
