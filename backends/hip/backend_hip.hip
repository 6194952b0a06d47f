/* The HIP backend: memory, events, the MFMA tile engine and its launches.
 * Kernels come from backends/gpu/tile_kernels.inc, written once for CUDA and
 * HIP (here PARTILE_WARP_SIZE is 64: one wave64 per tile). Every HIP call
 * and every launch is checked, and the runtime's own message is kept in
 * partile_last_error_detail(). Compiled by hipcc through a Meson
 * custom_target (backends/hip/meson.build). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/hip/mma_hip.h"
#define PARTILE_GPU_ENTRY(name) partile_hip_##name
#include "backends/gpu/particles_entry.h"
#include "backends/gpu/tile_kernels.inc"
#include "common/backend.h"
#include "common/error.h"

#ifndef PARTILE_HIP_TARGETS
#error "PARTILE_HIP_TARGETS (the --offload-arch list) must be defined by the build"
#endif

PARTILE_DEFINE_TILE_KERNELS(f64_16x16x4, 16, 16, 4, double, double)
PARTILE_DEFINE_TILE_KERNELS(f32_16x16x4, 16, 16, 4, float, float)
PARTILE_DEFINE_TILE_KERNELS(xf32_16x16x8, 16, 16, 8, float, float)
PARTILE_DEFINE_TILE_KERNELS(f16_16x16x16, 16, 16, 16, float, float)
PARTILE_DEFINE_TILE_KERNELS(bf16_16x16x16, 16, 16, 16, float, float)
PARTILE_DEFINE_FMA_PEAK_KERNEL()

/* Checks a runtime call, keeping the vendor's message (backends/gpu/dialect.h). */
#define HIP_TRY PARTILE_GPU_TRY

/* A launch's own error (configuration) and, on synchronize, its execution. */
#define HIP_LAUNCH_CHECK(name) HIP_TRY(hipGetLastError())

enum { HIP_WAVE = 64 };

typedef struct hip_state {
    int device;
    char arch[64]; /* gcnArchName without the feature suffix, e.g. "gfx90a" */
    int cus;
    hipStream_t stream;     /* where work is issued: own_stream or the caller's */
    hipStream_t own_stream; /* created with the context */
    partile_gpu_workspace ws; /* sorting scratch, kept and grown */
} hip_state;

/* Which targets run a shape's instruction. */
enum { ON_GFX90A_GFX94X = 0, ON_GFX94X_ONLY = 1 };

typedef struct hip_shape_kernels {
    void (*batched)(long long, int, int, int, const void *, const void *,
                    const void *, void *);
    void (*peak)(int, void *);
    int needs;
} hip_shape_kernels;

/* In the order of partile_hip_shapes (common/mma_shapes.c). */
#define KERNELS(S, NEEDS) { (void (*)(long long, int, int, int, const void *, const void *, \
                                      const void *, void *))S##_batched,                   \
                            (void (*)(int, void *))S##_peak, NEEDS }
static const hip_shape_kernels shape_kernels[] = {
    KERNELS(f64_16x16x4, ON_GFX90A_GFX94X),  KERNELS(f32_16x16x4, ON_GFX90A_GFX94X),
    KERNELS(xf32_16x16x8, ON_GFX94X_ONLY),   KERNELS(f16_16x16x16, ON_GFX90A_GFX94X),
    KERNELS(bf16_16x16x16, ON_GFX90A_GFX94X),
};

static int is_gfx94x(const char *arch)
{
    return !strcmp(arch, "gfx940") || !strcmp(arch, "gfx941") || !strcmp(arch, "gfx942");
}

/* Whether `arch` is a whole word of the space-separated target list. */
static int arch_compiled(const char *arch)
{
    const char *p = PARTILE_HIP_TARGETS;
    const size_t n = strlen(arch);
    while (*p) {
        while (*p == ' ')
            p++;
        const char *end = p;
        while (*end && *end != ' ')
            end++;
        if ((size_t)(end - p) == n && !strncmp(p, arch, n))
            return 1;
        p = end;
    }
    return 0;
}

static int hip_device_count(int *count, const char **note)
{
    /* The note must outlive the call; the runtime's message is kept. */
    static thread_local char buf[192];
    int n = 0;
    hipError_t err = hipGetDeviceCount(&n);
    if (err != hipSuccess) {
        (void)hipGetLastError(); /* clear the sticky error */
        snprintf(buf, sizeof buf, "no AMD GPU found (hipGetDeviceCount: %s)",
                 hipGetErrorString(err));
        *count = 0;
        *note = buf;
        return 0;
    }
    *count = n;
    *note = n ? "" : "no AMD GPU found";
    return 0;
}

static int hip_open(int device, void **state, char *desc, size_t desc_len)
{
    hipDeviceProp_t prop;
    HIP_TRY(hipGetDeviceProperties(&prop, device));
    char arch[sizeof prop.gcnArchName];
    snprintf(arch, sizeof arch, "%s", prop.gcnArchName);
    arch[strcspn(arch, ":")] = '\0'; /* "gfx90a:sramecc+:xnack-" */
    /* every kernel exists only for the compiled targets (no portable code
     * object): on any other GPU each operation would fail at its launch, so
     * refuse here, as CUDA refuses below sm_80 */
    if (!arch_compiled(arch))
        return partile_fail(PARTILE_ERROR_NO_DEVICE,
                            "%s (%s) is not a target of this build (%s): reconfigure with "
                            "-Dhip_arch=%s if it is a CDNA GPU (64-lane wavefronts)",
                            prop.name, arch, PARTILE_HIP_TARGETS, arch);
    HIP_TRY(hipSetDevice(device));
    hip_state *s = (hip_state *)calloc(1, sizeof *s);
    if (!s)
        return partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "HIP state");
    s->device = device;
    snprintf(s->arch, sizeof s->arch, "%s", arch);
    s->cus = prop.multiProcessorCount;
    hipError_t err = hipStreamCreateWithFlags(&s->stream, hipStreamNonBlocking);
    if (err != hipSuccess) {
        free(s);
        return partile_fail(PARTILE_ERROR_DEVICE, "hipStreamCreate: %s",
                            hipGetErrorString(err));
    }
    s->own_stream = s->stream;
    snprintf(desc, desc_len, "%s (%s, %d CUs, %.1f GiB)", prop.name, prop.gcnArchName,
             prop.multiProcessorCount, (double)prop.totalGlobalMem / (1 << 30));
    *state = s;
    return 0;
}

static int hip_close(void *state)
{
    hip_state *s = (hip_state *)state;
    (void)hipSetDevice(s->device);
    if (s->ws.ptr)
        (void)hipFree(s->ws.ptr);
    if (s->ws.host)
        (void)hipHostFree(s->ws.host);
    hipError_t err = hipStreamDestroy(s->own_stream);
    free(s);
    if (err != hipSuccess)
        return partile_fail(PARTILE_ERROR_DEVICE, "hipStreamDestroy: %s",
                            hipGetErrorString(err));
    return 0;
}

/* Every operation starts here: its device current, and no error pending
 * from an earlier runtime call (the caller's own, or a failure this library
 * reported already), which the operation's launch checks would otherwise
 * take for their own (hipGetLastError returns the last error of any call). */
static int use_device(hip_state *s)
{
    HIP_TRY(hipSetDevice(s->device));
    (void)hipGetLastError();
    return 0;
}

static int hip_synchronize(void *state)
{
    hip_state *s = (hip_state *)state;
    int st = use_device(s);
    if (st < 0)
        return st;
    HIP_TRY(hipStreamSynchronize(s->stream));
    return 0;
}

static int hip_set_stream(void *state, void *stream)
{
    hip_state *s = (hip_state *)state;
    int st = use_device(s);
    if (st < 0)
        return st;
    hipStream_t next = stream ? (hipStream_t)stream : s->own_stream;
    if (next != s->own_stream) {
        hipError_t q = hipStreamQuery(next);
        if (q != hipSuccess && q != hipErrorNotReady) {
            (void)hipGetLastError();
            return partile_fail(PARTILE_ERROR_INVALID_ARGUMENT, "stream %p: hipStreamQuery: %s",
                                stream, hipGetErrorString(q));
        }
    }
    /* the work issued so far may still use the workspace */
    HIP_TRY(hipStreamSynchronize(s->stream));
    s->stream = next;
    return 0;
}

static void *hip_get_stream(void *state)
{
    return (void *)((hip_state *)state)->stream;
}

static int hip_alloc(void *state, size_t bytes, void **ptr)
{
    int st = use_device((hip_state *)state);
    if (st < 0)
        return st;
    HIP_TRY(hipMalloc(ptr, bytes));
    return 0;
}

static int hip_release(void *state, void *ptr)
{
    int st = use_device((hip_state *)state);
    if (st < 0)
        return st;
    HIP_TRY(hipFree(ptr));
    return 0;
}

static int hip_copy(void *state, void *dst, const void *src, size_t bytes,
                    partile_copy_kind_t kind)
{
    hip_state *s = (hip_state *)state;
    int st = use_device(s);
    if (st < 0)
        return st;
    hipMemcpyKind k = kind == PARTILE_COPY_HOST_TO_DEVICE   ? hipMemcpyHostToDevice
                      : kind == PARTILE_COPY_DEVICE_TO_HOST ? hipMemcpyDeviceToHost
                                                            : hipMemcpyDeviceToDevice;
    HIP_TRY(hipMemcpyAsync(dst, src, bytes, k, s->stream));
    HIP_TRY(hipStreamSynchronize(s->stream));
    return 0;
}

static int hip_fill(void *state, void *dst, int value, size_t bytes)
{
    hip_state *s = (hip_state *)state;
    int st = use_device(s);
    if (st < 0)
        return st;
    HIP_TRY(hipMemsetAsync(dst, value, bytes, s->stream));
    HIP_TRY(hipStreamSynchronize(s->stream));
    return 0;
}

typedef struct hip_timer {
    hipEvent_t start, stop;
} hip_timer;

static int hip_timer_create(void *state, void **timer)
{
    /* the events belong to the device current at their creation */
    int st = use_device((hip_state *)state);
    if (st < 0)
        return st;
    hip_timer *t = (hip_timer *)calloc(1, sizeof *t);
    if (!t)
        return partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "timer");
    *timer = t;
    HIP_TRY(hipEventCreate(&t->start));
    HIP_TRY(hipEventCreate(&t->stop));
    return 0;
}

static int hip_timer_begin(void *state, void *timer)
{
    HIP_TRY(hipEventRecord(((hip_timer *)timer)->start, ((hip_state *)state)->stream));
    return 0;
}

static int hip_timer_end(void *state, void *timer, double *seconds)
{
    hip_timer *t = (hip_timer *)timer;
    float ms = 0.0f;
    HIP_TRY(hipEventRecord(t->stop, ((hip_state *)state)->stream));
    HIP_TRY(hipEventSynchronize(t->stop));
    HIP_TRY(hipEventElapsedTime(&ms, t->start, t->stop));
    *seconds = 1e-3 * (double)ms;
    return 0;
}

static int hip_timer_destroy(void *state, void *timer)
{
    (void)state;
    hip_timer *t = (hip_timer *)timer;
    if (t->start)
        (void)hipEventDestroy(t->start);
    if (t->stop)
        (void)hipEventDestroy(t->stop);
    free(t);
    return 0;
}

/* A shape runs where its instruction exists (the device's target is a
 * compiled one: hip_open); a shape of gfx94x only is unavailable on gfx90a
 * rather than a launch failure. */
static int hip_shape_available(void *state, int index)
{
    const hip_state *s = (const hip_state *)state;
    if (shape_kernels[index].needs == ON_GFX94X_ONLY)
        return is_gfx94x(s->arch);
    return !strcmp(s->arch, "gfx90a") || is_gfx94x(s->arch);
}

static int hip_mma_batched(void *state, const partile_tile_t *tile, int shape_index,
                           size_t batch, int rows, int cols, int depth, const void *a,
                           const void *b, const void *c, void *d)
{
    hip_state *s = (hip_state *)state;
    int st = use_device(s);
    if (st < 0)
        return st;
    const long long tiles = (long long)batch * (((long long)rows + tile->m - 1) / tile->m) *
                            (((long long)cols + tile->n - 1) / tile->n); /* rows near INT_MAX */
    const int threads = 256; /* 4 waves, one tile each */
    const long long blocks = (tiles * HIP_WAVE + threads - 1) / threads;
    if (blocks > 0x7fffffffLL)
        return partile_fail(PARTILE_ERROR_SIZE_OVERFLOW, "%lld tiles exceed the grid", tiles);
    shape_kernels[shape_index].batched<<<(unsigned)blocks, threads, 0, s->stream>>>(
        (long long)batch, rows, cols, depth, a, b, c, d);
    HIP_LAUNCH_CHECK("batched tile");
    HIP_TRY(hipStreamSynchronize(s->stream));
    return 0;
}

/* Best of five timed launches after one warm-up: a ceiling, not a typical
 * rate. Returns the milliseconds of the fastest launch. */
static int time_peak_kernel(hip_state *s, void (*kernel)(int, void *), int blocks,
                            int threads, int iterations, float *best)
{
    void *sink = NULL;
    HIP_TRY(hipMalloc(&sink, (size_t)threads * blocks * sizeof(double)));
    hipEvent_t e0 = NULL, e1 = NULL;
    float best_ms = 0.0f;
    hipError_t err = hipEventCreate(&e0);
    if (err == hipSuccess)
        err = hipEventCreate(&e1);
    for (int rep = 0; rep < 6 && err == hipSuccess; rep++) {
        float ms;
        err = hipEventRecord(e0, s->stream);
        if (err != hipSuccess)
            break;
        kernel<<<blocks, threads, 0, s->stream>>>(iterations, sink);
        err = hipGetLastError();
        if (err == hipSuccess)
            err = hipEventRecord(e1, s->stream);
        if (err == hipSuccess)
            err = hipEventSynchronize(e1);
        if (err == hipSuccess)
            err = hipEventElapsedTime(&ms, e0, e1);
        if (err == hipSuccess && rep > 0 && (best_ms == 0.0f || ms < best_ms))
            best_ms = ms;
    }
    if (e0)
        (void)hipEventDestroy(e0);
    if (e1)
        (void)hipEventDestroy(e1);
    (void)hipFree(sink);
    if (err != hipSuccess)
        return partile_fail(PARTILE_ERROR_DEVICE, "peak kernel: %s", hipGetErrorString(err));
    if (best_ms <= 0.0f)
        return partile_fail(PARTILE_ERROR_DEVICE, "peak kernel: no measurable time");
    *best = best_ms;
    return 0;
}

static int hip_mma_peak(void *state, int shape_index, double *flops_per_second)
{
    hip_state *s = (hip_state *)state;
    int st = use_device(s);
    if (st < 0)
        return st;
    const partile_tile_t *t = &partile_hip_shapes[shape_index].tile;
    const int threads = 256, blocks = 8 * s->cus, iterations = 4096;
    float best_ms;
    st = time_peak_kernel(s, shape_kernels[shape_index].peak, blocks, threads, iterations,
                          &best_ms);
    if (st < 0)
        return st;
    const double waves = (double)blocks * threads / HIP_WAVE;
    const double flops = 2.0 * t->m * t->n * t->k * (double)iterations * PARTILE_PEAK_CHAINS * waves;
    *flops_per_second = flops / (1e-3 * (double)best_ms);
    return 0;
}

static int hip_fma_peak(void *state, double *flops_per_second)
{
    hip_state *s = (hip_state *)state;
    int st = use_device(s);
    if (st < 0)
        return st;
    const int threads = 256, blocks = 8 * s->cus, iterations = 8192;
    float best_ms;
    st = time_peak_kernel(s, (void (*)(int, void *))partile_fma_peak_f64, blocks, threads,
                          iterations, &best_ms);
    if (st < 0)
        return st;
    const double flops = 2.0 * PARTILE_FMA_PEAK_CHAINS * (double)iterations * blocks * threads;
    *flops_per_second = flops / (1e-3 * (double)best_ms);
    return 0;
}

/* ---- binning and sorting (backends/gpu/sort_gpu.inc) ---- */

#define HIP_SORT_STATE(state)                                                   \
    hip_state *s = (hip_state *)state;                                          \
    int st_ = use_device(s);                                                    \
    if (st_ < 0)                                                                \
        return st_

static int hip_bin(void *state, const partile_grid_t *grid, size_t n,
                   const partile_vectors_t *pos, int64_t *cell, int64_t *bad)
{
    HIP_SORT_STATE(state);
    return partile_hip_bin(s->stream, s->cus, &s->ws, grid, n, pos, cell, bad);
}

static int hip_sort(void *state, const partile_grid_t *grid, int64_t ncells, size_t n,
                    const partile_vectors_t *pos, int64_t *offsets, int64_t *perm,
                    int64_t *sorted_cell, int64_t *bad)
{
    HIP_SORT_STATE(state);
    return partile_hip_sort(s->stream, s->cus, &s->ws, grid, ncells, n, pos, offsets, perm,
                            sorted_cell, bad);
}

static int hip_resort(void *state, const partile_grid_t *grid, int64_t ncells, size_t n,
                      const partile_vectors_t *pos, const int64_t *old_offsets,
                      const int64_t *old_cell, int64_t *offsets, int64_t *perm,
                      int64_t *sorted_cell, int64_t *bad)
{
    HIP_SORT_STATE(state);
    return partile_hip_resort(s->stream, s->cus, &s->ws, grid, ncells, n, pos, old_offsets,
                              old_cell, offsets, perm, sorted_cell, bad);
}

static int hip_check_permutation(void *state, size_t n, const int64_t *perm, int64_t *bad)
{
    HIP_SORT_STATE(state);
    return partile_hip_check_permutation(s->stream, s->cus, &s->ws, n, perm, bad);
}

static int hip_permute(void *state, size_t n, const int64_t *perm, int count,
                       const partile_array_t *arrays, void *scratch)
{
    HIP_SORT_STATE(state);
    return partile_hip_permute(s->stream, s->cus, &s->ws, n, perm, count, arrays, scratch);
}

static int hip_deposit(void *state, const partile_transfer_t *t, size_t n,
                       const partile_vectors_t *pos, const double *values,
                       const int64_t *cell_offsets, double *field, int64_t *bad)
{
    HIP_SORT_STATE(state);
    return partile_hip_deposit(s->stream, s->cus, &s->ws, t, n, pos, values, cell_offsets, field,
                              bad);
}

static int hip_gather(void *state, const partile_transfer_t *t, size_t n,
                      const partile_vectors_t *pos, const double *field, double *values,
                      int64_t *bad)
{
    HIP_SORT_STATE(state);
    return partile_hip_gather(s->stream, s->cus, &s->ws, t, n, pos, field, values, bad);
}

/* ---- mass matrix (backends/gpu/mass_*.inc; unverified on AMD hardware) ---- */

static int hip_mass_assemble(void *state, const partile_mass_params_t *p, size_t n,
                             const partile_vectors_t *pos, const int64_t *cell_offsets,
                             const double *q, const partile_vectors_t *omega, double *storage,
                             int64_t *bad)
{
    HIP_SORT_STATE(state);
    return partile_hip_mass_assemble(s->stream, s->cus, &s->ws,
                                     p->precision == PARTILE_MASS_TF32 ? 1 : 0, p, n, pos,
                                     cell_offsets, q, omega, storage, bad);
}

/* ---- y = M x (backends/gpu/apply_gpu.inc) ---- */

static int hip_apply_matfree(void *state, const partile_mass_params_t *p, size_t n,
                              const partile_vectors_t *pos, const int64_t *off, const double *q,
                              const partile_vectors_t *omega, const double *x, double *y,
                              int64_t *bad)
{
    HIP_SORT_STATE(state);
    return partile_hip_mass_apply_matfree(s->stream, s->cus, &s->ws, p, n, pos, off, q, omega, x, y,
                                         bad, PARTILE_GPU_APPLY_DEFAULT);
}

static int hip_apply_matfree_f32(void *state, const partile_mass_params_t *p, size_t n,
                                  const partile_vectors_t *pos, const int64_t *off, const float *q,
                                  const partile_vectors_t *omega, const float *x, float *y,
                                  int64_t *bad)
{
    HIP_SORT_STATE(state);
    return partile_hip_mass_apply_matfree_f32(s->stream, s->cus, &s->ws, p, n, pos, off, q, omega,
                                             x, y, bad);
}

static int hip_apply_assembled(void *state, const partile_mass_params_t *p, const double *storage,
                                const double *x, double *y)
{
    HIP_SORT_STATE(state);
    return partile_hip_mass_apply_assembled(s->stream, s->cus, &s->ws, p, storage, x, y);
}

static int hip_pairs(void *state, const partile_grid_t *grid, const partile_pair_params_t *params,
                     size_t n, const partile_vectors_t *pos, const int64_t *cell_offsets,
                     partile_vectors_t *force, void *scalar, int64_t *bad)
{
    HIP_SORT_STATE(state);
    return partile_hip_pairs(s->stream, s->cus, &s->ws, grid, params, n, pos, cell_offsets, force,
                             scalar, bad);
}

extern "C" const partile_backend_ops_t partile_backend_hip = {
    /* name */ "hip",
    /* targets */ PARTILE_HIP_TARGETS,
    hip_device_count,
    hip_open,
    hip_close,
    hip_synchronize,
    hip_alloc,
    hip_release,
    hip_copy,
    hip_fill,
    hip_timer_create,
    hip_timer_begin,
    hip_timer_end,
    hip_timer_destroy,
    partile_hip_shapes,
    &partile_hip_shape_count,
    hip_shape_available,
    /* any_shape */ 0,
    hip_mma_batched,
    hip_mma_peak,
    hip_fma_peak,
    hip_bin,
    hip_sort,
    hip_resort,
    hip_check_permutation,
    hip_permute,
    hip_deposit,
    hip_gather,
    hip_mass_assemble,
    hip_apply_matfree,
    hip_apply_assembled,
    hip_pairs,
    hip_apply_matfree_f32,
    hip_set_stream,
    hip_get_stream,
};

static_assert(sizeof shape_kernels / sizeof shape_kernels[0] == 5,
              "shape_kernels must follow partile_hip_shapes");
