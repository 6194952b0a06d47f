/* The CUDA backend: memory, events, the mma.sync tile engine and its
 * launches. Kernels come from backends/gpu/tile_kernels.inc, written once
 * for CUDA and HIP. Every CUDA call and every launch is checked, and the
 * runtime's own message is kept in partile_last_error_detail(). */
#include <stdio.h>
#include <stdlib.h>

#include "backends/cuda/mma_cuda.h"
#define PARTILE_GPU_ENTRY(name) partile_cuda_##name
#include "backends/gpu/particles_entry.h"
#include "backends/gpu/tile_kernels.inc"
#include "common/backend.h"
#include "common/error.h"

PARTILE_DEFINE_TILE_KERNELS(f64_m8n8k4, 8, 8, 4, double, double)
PARTILE_DEFINE_TILE_KERNELS(f64_m16n8k4, 16, 8, 4, double, double)
PARTILE_DEFINE_TILE_KERNELS(f64_m16n8k8, 16, 8, 8, double, double)
PARTILE_DEFINE_TILE_KERNELS(f64_m16n8k16, 16, 8, 16, double, double)
PARTILE_DEFINE_TILE_KERNELS(tf32_m16n8k8, 16, 8, 8, float, float)
PARTILE_DEFINE_TILE_KERNELS(f16_m16n8k16, 16, 8, 16, float, float)
PARTILE_DEFINE_TILE_KERNELS(bf16_m16n8k16, 16, 8, 16, float, float)
PARTILE_DEFINE_FMA_PEAK_KERNEL()

/* Checks a runtime call, keeping the vendor's message (backends/gpu/dialect.h). */
#define CUDA_TRY PARTILE_GPU_TRY

/* A launch's own error (configuration) and, on synchronize, its execution. */
#define CUDA_LAUNCH_CHECK(name) CUDA_TRY(cudaGetLastError())

typedef struct cuda_state {
    int device;
    int cc; /* compute capability, 10·major + minor */
    int sms;
    cudaStream_t stream;     /* where work is issued: own_stream or the caller's */
    cudaStream_t own_stream; /* created with the context */
    partile_gpu_workspace ws; /* sorting scratch, kept and grown */
} cuda_state;

typedef struct cuda_shape_kernels {
    void (*batched)(long long, int, int, int, const void *, const void *,
                    const void *, void *);
    void (*peak)(int, void *);
    int min_cc;
} cuda_shape_kernels;

/* In the order of partile_cuda_shapes (common/mma_shapes.c). */
#define KERNELS(S, CC) { (void (*)(long long, int, int, int, const void *, const void *, \
                                   const void *, void *))S##_batched,                   \
                         (void (*)(int, void *))S##_peak, CC }
static const cuda_shape_kernels shape_kernels[] = {
    KERNELS(f64_m8n8k4, 80),  KERNELS(f64_m16n8k4, 90), KERNELS(f64_m16n8k8, 90),
    KERNELS(f64_m16n8k16, 90), KERNELS(tf32_m16n8k8, 80), KERNELS(f16_m16n8k16, 80),
    KERNELS(bf16_m16n8k16, 80),
};

static int cuda_device_count(int *count, const char **note)
{
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
        (void)cudaGetLastError(); /* clear the sticky "no device" error */
        *count = 0;
        *note = err == cudaErrorNoDevice ? "no CUDA device found"
                : err == cudaErrorInsufficientDriver
                    ? "no usable NVIDIA driver (CUDA driver missing or too old)"
                    : "the CUDA runtime could not initialise";
        return 0;
    }
    *count = n;
    *note = n ? "" : "no CUDA device found";
    return 0;
}

static int cuda_open(int device, void **state, char *desc, size_t desc_len)
{
    cudaDeviceProp prop;
    CUDA_TRY(cudaGetDeviceProperties(&prop, device));
    int cc = 10 * prop.major + prop.minor;
    if (cc < 80)
        return partile_fail(PARTILE_ERROR_NO_DEVICE,
                            "%s is sm_%d; partile's CUDA backend needs sm_80 or newer",
                            prop.name, cc);
    CUDA_TRY(cudaSetDevice(device));
    cuda_state *s = (cuda_state *)calloc(1, sizeof *s);
    if (!s)
        return partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "CUDA state");
    s->device = device;
    s->cc = cc;
    s->sms = prop.multiProcessorCount;
    cudaError_t err = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking);
    if (err != cudaSuccess) {
        free(s);
        return partile_fail(PARTILE_ERROR_DEVICE, "cudaStreamCreate: %s",
                            cudaGetErrorString(err));
    }
    s->own_stream = s->stream;
    snprintf(desc, desc_len, "%s (sm_%d, %d SMs, %.1f GiB)", prop.name, cc,
             prop.multiProcessorCount, (double)prop.totalGlobalMem / (1 << 30));
    *state = s;
    return 0;
}

static int cuda_close(void *state)
{
    cuda_state *s = (cuda_state *)state;
    cudaSetDevice(s->device);
    if (s->ws.ptr)
        cudaFree(s->ws.ptr);
    if (s->ws.host)
        cudaFreeHost(s->ws.host);
    cudaError_t err = cudaStreamDestroy(s->own_stream);
    free(s);
    if (err != cudaSuccess)
        return partile_fail(PARTILE_ERROR_DEVICE, "cudaStreamDestroy: %s",
                            cudaGetErrorString(err));
    return 0;
}

/* Every operation starts here: its device current, and no error pending
 * from an earlier runtime call (the caller's own, or a failure this library
 * reported already), which the operation's launch checks would otherwise
 * take for their own (cudaGetLastError returns the last error of any call). */
static int use_device(cuda_state *s)
{
    CUDA_TRY(cudaSetDevice(s->device));
    (void)cudaGetLastError();
    return 0;
}

static int cuda_synchronize(void *state)
{
    cuda_state *s = (cuda_state *)state;
    int st = use_device(s);
    if (st < 0)
        return st;
    CUDA_TRY(cudaStreamSynchronize(s->stream));
    return 0;
}

static int cuda_set_stream(void *state, void *stream)
{
    cuda_state *s = (cuda_state *)state;
    int st = use_device(s);
    if (st < 0)
        return st;
    cudaStream_t next = stream ? (cudaStream_t)stream : s->own_stream;
    if (next != s->own_stream) {
        cudaError_t q = cudaStreamQuery(next);
        if (q != cudaSuccess && q != cudaErrorNotReady) {
            (void)cudaGetLastError();
            return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "stream %p: cudaStreamQuery: %s",
                                stream, cudaGetErrorString(q));
        }
    }
    /* the work issued so far may still use the workspace */
    CUDA_TRY(cudaStreamSynchronize(s->stream));
    s->stream = next;
    return 0;
}

static void *cuda_get_stream(void *state)
{
    return (void *)((cuda_state *)state)->stream;
}

static int cuda_alloc(void *state, size_t bytes, void **ptr)
{
    int st = use_device((cuda_state *)state);
    if (st < 0)
        return st;
    CUDA_TRY(cudaMalloc(ptr, bytes));
    return 0;
}

static int cuda_release(void *state, void *ptr)
{
    int st = use_device((cuda_state *)state);
    if (st < 0)
        return st;
    CUDA_TRY(cudaFree(ptr));
    return 0;
}

static int cuda_copy(void *state, void *dst, const void *src, size_t bytes,
                     partile_copy_kind_t kind)
{
    cuda_state *s = (cuda_state *)state;
    int st = use_device(s);
    if (st < 0)
        return st;
    cudaMemcpyKind k = kind == PARTILE_COPY_HOST_TO_DEVICE   ? cudaMemcpyHostToDevice
                       : kind == PARTILE_COPY_DEVICE_TO_HOST ? cudaMemcpyDeviceToHost
                                                             : cudaMemcpyDeviceToDevice;
    CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, k, s->stream));
    CUDA_TRY(cudaStreamSynchronize(s->stream));
    return 0;
}

static int cuda_fill(void *state, void *dst, int value, size_t bytes)
{
    cuda_state *s = (cuda_state *)state;
    int st = use_device(s);
    if (st < 0)
        return st;
    CUDA_TRY(cudaMemsetAsync(dst, value, bytes, s->stream));
    CUDA_TRY(cudaStreamSynchronize(s->stream));
    return 0;
}

typedef struct cuda_timer {
    cudaEvent_t start, stop;
} cuda_timer;

static int cuda_timer_create(void *state, void **timer)
{
    /* the events belong to the device current at their creation */
    int st = use_device((cuda_state *)state);
    if (st < 0)
        return st;
    cuda_timer *t = (cuda_timer *)calloc(1, sizeof *t);
    if (!t)
        return partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "timer");
    *timer = t;
    CUDA_TRY(cudaEventCreate(&t->start));
    CUDA_TRY(cudaEventCreate(&t->stop));
    return 0;
}

static int cuda_timer_begin(void *state, void *timer)
{
    CUDA_TRY(cudaEventRecord(((cuda_timer *)timer)->start, ((cuda_state *)state)->stream));
    return 0;
}

static int cuda_timer_end(void *state, void *timer, double *seconds)
{
    cuda_timer *t = (cuda_timer *)timer;
    float ms = 0.0f;
    CUDA_TRY(cudaEventRecord(t->stop, ((cuda_state *)state)->stream));
    CUDA_TRY(cudaEventSynchronize(t->stop));
    CUDA_TRY(cudaEventElapsedTime(&ms, t->start, t->stop));
    *seconds = 1e-3 * (double)ms;
    return 0;
}

static int cuda_timer_destroy(void *state, void *timer)
{
    (void)state;
    cuda_timer *t = (cuda_timer *)timer;
    if (t->start)
        cudaEventDestroy(t->start);
    if (t->stop)
        cudaEventDestroy(t->stop);
    free(t);
    return 0;
}

static int cuda_shape_available(void *state, int index)
{
    return ((cuda_state *)state)->cc >= shape_kernels[index].min_cc;
}

static int cuda_mma_batched(void *state, const partile_tile_t *tile, int shape_index,
                            size_t batch, int rows, int cols, int depth, const void *a,
                            const void *b, const void *c, void *d)
{
    cuda_state *s = (cuda_state *)state;
    int st = use_device(s);
    if (st < 0)
        return st;
    const long long tiles = (long long)batch * (((long long)rows + tile->m - 1) / tile->m) *
                            (((long long)cols + tile->n - 1) / tile->n); /* rows near INT_MAX */
    const int threads = 128;
    const long long blocks = (tiles * 32 + threads - 1) / threads;
    if (blocks > 0x7fffffffLL)
        return partile_fail(PARTILE_ERROR_SIZE_OVERFLOW, "%lld tiles exceed the grid", tiles);
    shape_kernels[shape_index].batched<<<(unsigned)blocks, threads, 0, s->stream>>>(
        (long long)batch, rows, cols, depth, a, b, c, d);
    CUDA_LAUNCH_CHECK("batched tile");
    CUDA_TRY(cudaStreamSynchronize(s->stream));
    return 0;
}

/* Best of five timed launches after one warm-up: a ceiling, not a typical
 * rate. Returns the milliseconds of the fastest launch. */
static int time_peak_kernel(cuda_state *s, void (*kernel)(int, void *), int blocks,
                            int threads, int iterations, float *best)
{
    void *sink = NULL;
    CUDA_TRY(cudaMalloc(&sink, (size_t)threads * blocks * sizeof(double)));
    cudaEvent_t e0 = NULL, e1 = NULL;
    float best_ms = 0.0f;
    cudaError_t err = cudaEventCreate(&e0);
    if (err == cudaSuccess)
        err = cudaEventCreate(&e1);
    /* One warm-up launch, then the best of five (the ceiling, not a typical rate). */
    for (int rep = 0; rep < 6 && err == cudaSuccess; rep++) {
        float ms;
        err = cudaEventRecord(e0, s->stream);
        if (err != cudaSuccess)
            break;
        kernel<<<blocks, threads, 0, s->stream>>>(iterations, sink);
        err = cudaGetLastError();
        if (err == cudaSuccess)
            err = cudaEventRecord(e1, s->stream);
        if (err == cudaSuccess)
            err = cudaEventSynchronize(e1);
        if (err == cudaSuccess)
            err = cudaEventElapsedTime(&ms, e0, e1);
        if (err == cudaSuccess && rep > 0 && (best_ms == 0.0f || ms < best_ms))
            best_ms = ms;
    }
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    cudaFree(sink);
    if (err != cudaSuccess)
        return partile_fail(PARTILE_ERROR_DEVICE, "peak kernel: %s", cudaGetErrorString(err));
    *best = best_ms;
    return 0;
}

static int cuda_mma_peak(void *state, int shape_index, double *flops_per_second)
{
    cuda_state *s = (cuda_state *)state;
    int st = use_device(s);
    if (st < 0)
        return st;
    const partile_tile_t *t = &partile_cuda_shapes[shape_index].tile;
    const int threads = 256, blocks = 8 * s->sms, iterations = 4096;
    float best_ms = 0.0f;
    st = time_peak_kernel(s, shape_kernels[shape_index].peak, blocks, threads, iterations,
                          &best_ms);
    if (st < 0)
        return st;
    const double warps = (double)blocks * threads / 32;
    const double flops = 2.0 * t->m * t->n * t->k * (double)iterations * PARTILE_PEAK_CHAINS * warps;
    *flops_per_second = flops / (1e-3 * (double)best_ms);
    return 0;
}

static int cuda_fma_peak(void *state, double *flops_per_second)
{
    cuda_state *s = (cuda_state *)state;
    int st = use_device(s);
    if (st < 0)
        return st;
    const int threads = 256, blocks = 8 * s->sms, iterations = 8192;
    float best_ms = 0.0f;
    st = time_peak_kernel(s, (void (*)(int, void *))partile_fma_peak_f64, blocks, threads,
                          iterations, &best_ms);
    if (st < 0)
        return st;
    const double flops = 2.0 * PARTILE_FMA_PEAK_CHAINS * (double)iterations * blocks * threads;
    *flops_per_second = flops / (1e-3 * (double)best_ms);
    return 0;
}

/* ---- binning and sorting (backends/gpu/sort_gpu.inc) ---- */

#define CUDA_SORT_STATE(state)                                                  \
    cuda_state *s = (cuda_state *)state;                                        \
    int st_ = use_device(s);                                                    \
    if (st_ < 0)                                                                \
        return st_

static int cuda_bin(void *state, const partile_grid_t *grid, size_t n,
                    const partile_vectors_t *pos, int64_t *cell, int64_t *bad)
{
    CUDA_SORT_STATE(state);
    return partile_cuda_bin(s->stream, s->sms, &s->ws, grid, n, pos, cell, bad);
}

static int cuda_sort(void *state, const partile_grid_t *grid, int64_t ncells, size_t n,
                     const partile_vectors_t *pos, int64_t *offsets, int64_t *perm,
                     int64_t *sorted_cell, int64_t *bad)
{
    CUDA_SORT_STATE(state);
    return partile_cuda_sort(s->stream, s->sms, &s->ws, grid, ncells, n, pos, offsets, perm,
                             sorted_cell, bad);
}

static int cuda_resort(void *state, const partile_grid_t *grid, int64_t ncells, size_t n,
                       const partile_vectors_t *pos, const int64_t *old_offsets,
                       const int64_t *old_cell, int64_t *offsets, int64_t *perm,
                       int64_t *sorted_cell, int64_t *bad)
{
    CUDA_SORT_STATE(state);
    return partile_cuda_resort(s->stream, s->sms, &s->ws, grid, ncells, n, pos, old_offsets,
                               old_cell, offsets, perm, sorted_cell, bad);
}

static int cuda_check_permutation(void *state, size_t n, const int64_t *perm, int64_t *bad)
{
    CUDA_SORT_STATE(state);
    return partile_cuda_check_permutation(s->stream, s->sms, &s->ws, n, perm, bad);
}

static int cuda_permute(void *state, size_t n, const int64_t *perm, int count,
                        const partile_array_t *arrays, void *scratch)
{
    CUDA_SORT_STATE(state);
    return partile_cuda_permute(s->stream, s->sms, &s->ws, n, perm, count, arrays, scratch);
}

static int cuda_deposit(void *state, const partile_transfer_t *t, size_t n,
                       const partile_vectors_t *pos, const double *values,
                       const int64_t *cell_offsets, double *field, int64_t *bad)
{
    CUDA_SORT_STATE(state);
    return partile_cuda_deposit(s->stream, s->sms, &s->ws, t, n, pos, values, cell_offsets, field,
                              bad);
}

static int cuda_gather(void *state, const partile_transfer_t *t, size_t n,
                      const partile_vectors_t *pos, const double *field, double *values,
                      int64_t *bad)
{
    CUDA_SORT_STATE(state);
    return partile_cuda_gather(s->stream, s->sms, &s->ws, t, n, pos, field, values, bad);
}

/* ---- mass matrix (backends/gpu/mass_*.inc) ---- */

static int cuda_mass_assemble(void *state, const partile_mass_params_t *p, size_t n,
                              const partile_vectors_t *pos, const int64_t *cell_offsets,
                              const double *q, const partile_vectors_t *omega, double *storage,
                              int64_t *bad)
{
    CUDA_SORT_STATE(state);
    /* the m16n8k16 FP64 tile is sm_90's; m8n8k4 runs from sm_80; tf32 m16n8k8.
     * The 3-D CIC scalar assembly (8 × 8 local matrices, half an m16n8k16
     * tile) takes m8n8k4 on sm_90 too: with 4 blocks per SM
     * (MASS_TILE_MIN_BLOCKS) 6 % faster at 64³ × 128 on the H200; m8n8k4
     * alone was 5 % slower, and TSC scalar 3-5 % slower with it
     * (bench/RESULTS.md, 2026-12-02). Both engines give the same bits. */
    const int cic_scalar_3d = p->kind == PARTILE_MASS_SCALAR && p->shape == PARTILE_SHAPE_CIC &&
                              p->grid && p->grid->dim == 3;
    const int engine = p->precision == PARTILE_MASS_TF32 ? 2
                       : s->cc >= 90 && !cic_scalar_3d   ? 1
                                                         : 0;
    return partile_cuda_mass_assemble(s->stream, s->sms, &s->ws, engine, p, n, pos, cell_offsets,
                                      q, omega, storage, bad);
}

/* ---- y = M x (backends/gpu/apply_gpu.inc) ---- */

static int cuda_apply_matfree(void *state, const partile_mass_params_t *p, size_t n,
                              const partile_vectors_t *pos, const int64_t *off, const double *q,
                              const partile_vectors_t *omega, const double *x, double *y,
                              int64_t *bad)
{
    CUDA_SORT_STATE(state);
    return partile_cuda_mass_apply_matfree(s->stream, s->sms, &s->ws, p, n, pos, off, q, omega, x, y,
                                         bad, PARTILE_GPU_APPLY_DEFAULT);
}

static int cuda_apply_matfree_f32(void *state, const partile_mass_params_t *p, size_t n,
                                  const partile_vectors_t *pos, const int64_t *off, const float *q,
                                  const partile_vectors_t *omega, const float *x, float *y,
                                  int64_t *bad)
{
    CUDA_SORT_STATE(state);
    return partile_cuda_mass_apply_matfree_f32(s->stream, s->sms, &s->ws, p, n, pos, off, q, omega,
                                             x, y, bad);
}

static int cuda_apply_assembled(void *state, const partile_mass_params_t *p, const double *storage,
                                const double *x, double *y)
{
    CUDA_SORT_STATE(state);
    return partile_cuda_mass_apply_assembled(s->stream, s->sms, &s->ws, p, storage, x, y);
}

static int cuda_pairs(void *state, const partile_grid_t *grid, const partile_pair_params_t *params,
                      size_t n, const partile_vectors_t *pos, const int64_t *cell_offsets,
                      partile_vectors_t *force, void *scalar, int64_t *bad)
{
    CUDA_SORT_STATE(state);
    return partile_cuda_pairs(s->stream, s->sms, &s->ws, grid, params, n, pos, cell_offsets, force,
                              scalar, bad);
}

extern "C" const partile_backend_ops_t partile_backend_cuda = {
    /* name */ "cuda",
    /* targets */ PARTILE_CUDA_TARGETS,
    cuda_device_count,
    cuda_open,
    cuda_close,
    cuda_synchronize,
    cuda_alloc,
    cuda_release,
    cuda_copy,
    cuda_fill,
    cuda_timer_create,
    cuda_timer_begin,
    cuda_timer_end,
    cuda_timer_destroy,
    partile_cuda_shapes,
    &partile_cuda_shape_count,
    cuda_shape_available,
    /* any_shape */ 0,
    cuda_mma_batched,
    cuda_mma_peak,
    cuda_fma_peak,
    cuda_bin,
    cuda_sort,
    cuda_resort,
    cuda_check_permutation,
    cuda_permute,
    cuda_deposit,
    cuda_gather,
    cuda_mass_assemble,
    cuda_apply_matfree,
    cuda_apply_assembled,
    cuda_pairs,
    cuda_apply_matfree_f32,
    cuda_set_stream,
    cuda_get_stream,
};

static_assert(sizeof shape_kernels / sizeof shape_kernels[0] == 7,
              "shape_kernels must follow partile_cuda_shapes");
