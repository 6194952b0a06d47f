/* The CPU emulation of GPU kernels shared by the emulation tests
 * (tests/emulate_line_deposit.cc, tests/emulate_assembled_apply.cc): the
 * CUDA spellings that the device parts of the backends/gpu .inc files use
 * (cut at their host-side markers by tests/device_part.awk), for the host
 * compiler; a launch runs a pthread per GPU thread of a block, __syncthreads
 * a barrier, __shared__ arrays static, the blocks in turn, and counts the
 * blocks whose threads passed different numbers of barriers (`divergent`).
 * Also the tests' random numbers (seeded by test_seed.h) and `must`.
 * Include once, before the cut device files. */
#ifndef PARTILE_TESTS_EMULATE_GPU_H
#define PARTILE_TESTS_EMULATE_GPU_H

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <vector>

#include <atomic>

#include <pthread.h>
#include <sched.h>

#include "partile/partile.h"
#include "test_seed.h"

/* ---- the CUDA spellings the device code uses, for the host ---- */

struct emu_dim3 {
    unsigned x, y, z;
};
static thread_local emu_dim3 threadIdx, blockIdx;
static emu_dim3 blockDim, gridDim;
/* A barrier of n threads that yields while it waits: far cheaper than
 * pthread_barrier_wait's futex wake of every waiter when hundreds of
 * threads share two cores. */
struct emu_barrier {
    std::atomic<unsigned> count{ 0 }, gen{ 0 };
    unsigned n = 1;
};
static void emu_barrier_init(emu_barrier *b, unsigned n)
{
    b->count.store(0);
    b->gen.store(0);
    b->n = n;
}
static void emu_barrier_wait(emu_barrier *b)
{
    const unsigned g = b->gen.load(std::memory_order_acquire);
    if (b->count.fetch_add(1, std::memory_order_acq_rel) + 1 == b->n) {
        b->count.store(0, std::memory_order_relaxed);
        b->gen.fetch_add(1, std::memory_order_release);
    } else {
        while (b->gen.load(std::memory_order_acquire) == g)
            sched_yield();
    }
}
static emu_barrier block_barrier;
static thread_local long long thread_syncs; /* per block: all threads must agree */
static long long block_syncs;                 /* in all, for the log */

/* Warp shuffles: lanes exchange through a slot per thread, between two
 * barriers of the warp's threads, so every lane of a warp must call
 * (as __shfl_up_sync with the full mask requires); per block, the lanes
 * of a warp must agree on the number of shuffles (`divergent`). */
#ifndef PARTILE_WARP_SIZE
#define PARTILE_WARP_SIZE 32
#endif
static emu_barrier warp_barrier[1024 / PARTILE_WARP_SIZE];
static uint64_t warp_slot[1024];
static thread_local long long thread_shuffles;

template <typename V> static V emu_shfl_up(V v, unsigned d)
{
    static_assert(sizeof(V) <= sizeof(uint64_t), "shuffle of a wide type");
    const unsigned t = threadIdx.x, lane = t % PARTILE_WARP_SIZE, w = t / PARTILE_WARP_SIZE;
    thread_shuffles++;
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof v);
    warp_slot[t] = bits;
    emu_barrier_wait(&warp_barrier[w]);
    V r = v;
    if (lane >= d)
        memcpy(&r, &warp_slot[t - d], sizeof r);
    emu_barrier_wait(&warp_barrier[w]); /* all read before the next shuffle writes */
    return r;
}
#define PARTILE_SHFL_UP(v, d) emu_shfl_up((v), (unsigned)(d))
static inline int __ffs(int x) { return __builtin_ffs(x); }

static void emu_syncthreads()
{
    thread_syncs++;
    if (threadIdx.x == 0)
        block_syncs++;
    emu_barrier_wait(&block_barrier);
}

/* k_check_particles' first-bad word: atomic, as its threads run at once. */
static unsigned long long atomicMin(unsigned long long *a, unsigned long long v)
{
    unsigned long long old = __atomic_load_n(a, __ATOMIC_RELAXED);
    while (v < old && !__atomic_compare_exchange_n(a, &old, v, false, __ATOMIC_RELAXED,
                                                   __ATOMIC_RELAXED)) {
    }
    return old;
}
/* All-in-sm's ranks in its bins (pairs_aism_order_cells). */
static inline int atomicAdd(int *a, int v)
{
    return __atomic_fetch_add(a, v, __ATOMIC_RELAXED);
}
/* The unsorted deposit's atomics (the threads of a block run at once). */
static inline double atomicAdd(double *a, double v)
{
    uint64_t *const bits = (uint64_t *)a;
    uint64_t old = __atomic_load_n(bits, __ATOMIC_RELAXED), sum;
    double o;
    do {
        memcpy(&o, &old, sizeof o);
        const double n = o + v;
        memcpy(&sum, &n, sizeof sum);
    } while (!__atomic_compare_exchange_n(bits, &old, sum, false, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    return o;
}

/* All-in-sm's packed FP32 staging (pairs_aism_staging) */
struct float4 {
    float x, y, z, w;
};
static inline float4 make_float4(float x, float y, float z, float w)
{
    const float4 v = { x, y, z, w };
    return v;
}
#define __align__(n) __attribute__((aligned(n)))

using std::fma;
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define EMU_EXTERN_SHARED extern /* device_part.awk's `extern __shared__` */
#define __host__
/* after every standard header: glibc spells __attribute__((__noinline__)) */
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __syncthreads() emu_syncthreads()
#define PARTILE_DEVICE static inline
#define PARTILE_GRID_CONSTANT
/* cp.async: the copy lands at the thread's wait, not before, so that a
 * read of shared memory before its wait sees what was there (a NaN in the
 * tests that fill it); copies never waited for are counted per launch. */
struct emu_async_copy {
    double *dst;
    const double *src;
};
static thread_local std::vector<emu_async_copy> async_pending;
static std::atomic<long long> async_unwaited{ 0 };
static inline void emu_async_wait()
{
    for (const emu_async_copy &c : async_pending)
        *c.dst = *c.src;
    async_pending.clear();
}
#define PARTILE_ASYNC_COPY8(dst, src) async_pending.push_back(emu_async_copy{ (dst), (src) })
#define PARTILE_ASYNC_WAIT() emu_async_wait()
#define PARTILE_UNROLL_COPIES

/* Around the included device code: it is written for nvcc and hipcc, so
 * host compilers see pragmas they do not know (`#pragma unroll`) and
 * kernels a test does not call; g++ also cannot see that k_gather_nodes'
 * unused stencil entries are skipped by count[]. */
#if defined(__GNUC__) && !defined(__clang__)
#define EMU_DEVICE_CODE_MAYBE_UNINITIALIZED _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#else
#define EMU_DEVICE_CODE_MAYBE_UNINITIALIZED
#endif
#define EMU_DEVICE_CODE_BEGIN                                                                      \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wunknown-pragmas\"")          \
        _Pragma("GCC diagnostic ignored \"-Wunused-function\"") EMU_DEVICE_CODE_MAYBE_UNINITIALIZED
#define EMU_DEVICE_CODE_END _Pragma("GCC diagnostic pop")

/* ---- launches ---- */

struct emu_thread {
    unsigned t;
    const std::function<void()> *body;
    std::vector<long long> *syncs, *shuffles;
};

static int divergent; /* blocks whose threads passed different barrier counts */

static void *emu_thread_main(void *p)
{
    const emu_thread *e = (const emu_thread *)p;
    threadIdx = emu_dim3{ e->t, 0, 0 };
    for (unsigned b = 0; b < gridDim.x; b++) {
        blockIdx = emu_dim3{ b, 0, 0 };
        thread_syncs = 0;
        thread_shuffles = 0;
        (*e->body)();
        async_unwaited += (long long)async_pending.size();
        async_pending.clear();
        (*e->syncs)[e->t] = thread_syncs;
        (*e->shuffles)[e->t] = thread_shuffles;
        /* the block is done (its shared arrays are free) before the next
         * starts, and its barrier counts are compared */
        emu_barrier_wait(&block_barrier);
        if (e->t == 0) {
            int differ = 0;
            for (size_t t = 0; t < e->syncs->size(); t++)
                differ |= (*e->syncs)[t] != (*e->syncs)[0] ||
                          (*e->shuffles)[t] != (*e->shuffles)[t - t % PARTILE_WARP_SIZE];
            divergent += differ;
        }
        emu_barrier_wait(&block_barrier);
    }
    return NULL;
}

/* A launch of `blocks` blocks of `threads` threads, the blocks in turn. */
[[maybe_unused]] static void launch(unsigned blocks, unsigned threads,
                                    const std::function<void()> &body)
{
    gridDim = emu_dim3{ blocks, 1, 1 };
    blockDim = emu_dim3{ threads, 1, 1 };
    emu_barrier_init(&block_barrier, threads);
    const unsigned warps = (threads + PARTILE_WARP_SIZE - 1) / PARTILE_WARP_SIZE;
    for (unsigned w = 0; w < warps; w++) /* the last warp may be partial */
        emu_barrier_init(&warp_barrier[w], threads - w * PARTILE_WARP_SIZE < PARTILE_WARP_SIZE
                                                   ? threads - w * PARTILE_WARP_SIZE
                                                   : PARTILE_WARP_SIZE);
    std::vector<long long> syncs(threads), shuffles(threads);
    std::vector<emu_thread> arg(threads);
    std::vector<pthread_t> id(threads);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1 << 20); /* small frames; not 128 x 8 MiB reserved */
    for (unsigned t = 0; t < threads; t++) {
        arg[t] = emu_thread{ t, &body, &syncs, &shuffles };
        if (pthread_create(&id[t], &attr, emu_thread_main, &arg[t]) != 0) {
            perror("pthread_create");
            exit(2);
        }
    }
    pthread_attr_destroy(&attr);
    for (unsigned t = 0; t < threads; t++)
        pthread_join(id[t], NULL);
}

static uint64_t rng_state;
static uint64_t next()
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double uniform() { return (double)(next() >> 11) / 9007199254740992.0; }

/* An atomic (any-order) sum against the reference's: the count of values of
 * got off want by more than 1e-12 of bound (the same deposit of |v|), so
 * exactly 0 where nothing lands, and the first such index in *first (−1:
 * none). A sum of k terms in any order lies within (k − 1)·2^−53 of the sum
 * of their magnitudes from the exact one, so two orders within
 * 2(k − 1)·2^−53: under 1e-12 up to ~4500 terms a point (these tests reach
 * ~1200: 8 cells of 150 each for CIC on a periodic 2 × 3 × 4 grid). */
static inline int64_t emu_off_rounding(const double *got, const double *want, const double *bound,
                                       int64_t count, int64_t *first)
{
    int64_t off_by = 0;
    *first = -1;
    for (int64_t i = 0; i < count; i++)
        if (!(fabs(got[i] - want[i]) <= 1e-12 * bound[i])) {
            off_by++;
            *first = *first < 0 ? i : *first;
        }
    return off_by;
}

static void must(int status, const char *what)
{
    if (status != 0) {
        printf("%s: %s\n", what, partile_last_error_detail());
        exit(2);
    }
}


/* The reference's sort of the SoA positions x (g.dim axes of n): the cell
 * list off, the permutation perm, the sorted positions xs and spos, a view
 * of them. Callers permute their other arrays with perm. */
static inline void emu_sort(partile_context_t *ref, const partile_grid_t &g, size_t n,
                     const std::vector<double> &x, std::vector<int64_t> &off,
                     std::vector<int64_t> &perm, std::vector<double> &xs,
                     partile_vectors_t *spos)
{
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { 0 } };
    for (int a = 0; a < g.dim; a++)
        pos.axis[a] = x.data() + a * n;
    int64_t bad = -1;
    must(partile_sort(ref, &g, n, &pos, off.data(), perm.data(), NULL, &bad), "sort");
    xs.assign(x.size(), 0.0);
    for (int a = 0; a < g.dim; a++)
        for (size_t i = 0; i < n; i++)
            xs[a * n + i] = x[a * n + perm[i]];
    *spos = partile_vectors_t{ PARTILE_DTYPE_FLOAT64, { 0 } };
    for (int a = 0; a < g.dim; a++)
        spos->axis[a] = xs.data() + a * n;
}

/* A test grid: `dim` axes of cells[a] cells, periodic or not, unequal
 * spacings and offset lower corners; unused axes 1 cell. Returns the cells. */
static int64_t emu_grid(partile_grid_t *g, int dim, const int64_t *cells, const int *periodic)
{
    memset(g, 0, sizeof *g);
    g->dim = dim;
    int64_t ncells = 1;
    for (int a = 0; a < 3; a++) {
        g->cells[a] = a < dim ? cells[a] : 1;
        g->lower[a] = -1.5 + 0.25 * a;
        g->spacing[a] = 0.125 + 0.0625 * a;
        g->periodic[a] = a < dim ? periodic[a] : 0;
        ncells *= g->cells[a];
    }
    return ncells;
}

/* "CIC 2d cells 150x3x1 periodic 10": a case's grid, for the log. */
struct emu_name {
    char s[96];
};
static inline emu_name emu_grid_name(const partile_grid_t &g, int tsc)
{
    emu_name nm;
    char periodic[4] = { 0, 0, 0, 0 };
    for (int a = 0; a < g.dim && a < 3; a++)
        periodic[a] = (char)('0' + g.periodic[a]);
    snprintf(nm.s, sizeof nm.s, "%s %dd cells %lldx%lldx%lld periodic %s", tsc ? "TSC" : "CIC",
             g.dim, (long long)g.cells[0], (long long)g.cells[1], (long long)g.cells[2], periodic);
    return nm;
}

/* How many of count doubles differ in their bits; the first in *first. */
static inline int64_t emu_differ(const double *want, const double *got, int64_t count, int64_t *first)
{
    int64_t differ = 0;
    *first = 0;
    for (int64_t i = 0; i < count; i++)
        if (memcmp(&want[i], &got[i], sizeof(double)) != 0 && differ++ == 0)
            *first = i;
    return differ;
}

#endif
