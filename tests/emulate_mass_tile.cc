/* The GPU mass matrix end to end on the CPU: the tile kernels of
 * backends/gpu/mass_tile.inc (CUDA's f64 m8n8k4 and m16n8k16 engines; built
 * with EMU_MASS_HIP and PARTILE_WARP_SIZE 64, HIP's f64 16x16x4 MFMA on a
 * wave64, whose logic this is the only run of: unverified on AMD hardware)
 * and kernel (ii) (k_mass_fma_*) as pass 1, then pass 2 (mass_reduce_index.inc)
 * finishing the storage, run as host C++ with the shims of
 * tests/emulate_gpu.h — a pthread per lane, warp ballots, __syncwarp and
 * each mma.sync a collective of the warp's 32 lanes that gathers their
 * fragments by the engine's layout (backends/cuda/mma_layout.h) and runs
 * the forward FMA chain over k the tensor cores were measured to take
 * (DESIGN.md §2) — against the reference backend's partile_mass_assemble,
 * bit for bit. What the layout test (test_mass_layout.c) cannot see, this
 * runs: the staging rounds and their ring, the TSC group queue, the
 * resident staging of the TSC tensor, passes of tiles, a capped grid whose
 * warps stride over several cells and the CIC tensor's carry of the next
 * cell's first round (a small `cap` makes every warp take many cells), in
 * blocks of 1 to MASS_BLOCK_WARPS warps.
 *   - 1-3-D, CIC and TSC, scalar and tensor, periodic axes or not;
 *   - cells empty, of one particle, and crowded (several rounds; a TSC
 *     group larger than the ring, which falls back to streaming);
 *   - shared memory filled with NaN before every launch, the scratch too,
 *     so that a slot read before it is staged or an entry never written
 *     shows in the sums; pass 1's fault word must stay clear (every
 *     particle is valid here).
 * Seed: the time, printed; give it as the argument to rerun. */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "emulate_gpu.h"

#include "backends/cuda/mma_layout.h"
#include "backends/hip/mfma_layout.h"
#include "partile/mass.h"

/* ---- the warp primitives the mass kernels use, run for real ---- */

/* A warp-wide value exchange: every lane of the warp calls (the kernels'
 * full-mask ballots and __syncwarp), so it counts as a shuffle for the
 * launch's `divergent` check. */
static unsigned long long emu_ballot(int pred)
{
    const unsigned t = threadIdx.x, w = t / PARTILE_WARP_SIZE;
    thread_shuffles++;
    warp_slot[t] = pred != 0;
    emu_barrier_wait(&warp_barrier[w]);
    unsigned long long bits = 0;
    for (unsigned l = 0; l < PARTILE_WARP_SIZE; l++)
        bits |= warp_slot[w * PARTILE_WARP_SIZE + l] << l;
    emu_barrier_wait(&warp_barrier[w]); /* all read before the next exchange writes */
    return bits;
}
static void emu_syncwarp()
{
    thread_shuffles++;
    emu_barrier_wait(&warp_barrier[threadIdx.x / PARTILE_WARP_SIZE]);
}
#define PARTILE_BALLOT(x) emu_ballot(x)
#define PARTILE_SYNC_WARP() emu_syncwarp()
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }

/* ---- the tile engines: mma.sync as a collective of the warp ---- */

typedef void (*emu_pos_fn)(int lane, int e, int *row, int *col);
enum { EMU_MAX_FRAG = 8 };
static double emu_frag_a[1024][EMU_MAX_FRAG], emu_frag_b[1024][EMU_MAX_FRAG];

/* d (C_N per lane) = A·B + d, each element the forward chain
 * fma(A[r][K−1], B[K−1][c], … fma(A[r][0], B[0][c], d)), A and B gathered
 * from the warp's lanes by the engine's layout. */
template <int M, int N, int K, int AN, int BN, int CN>
static void emu_mma(double *d, const double *a, const double *b, emu_pos_fn apos, emu_pos_fn bpos,
                    emu_pos_fn cpos)
{
    const unsigned t = threadIdx.x, lane = t % PARTILE_WARP_SIZE, w = t / PARTILE_WARP_SIZE;
    thread_shuffles++;
    for (int e = 0; e < AN; e++)
        emu_frag_a[t][e] = a[e];
    for (int e = 0; e < BN; e++)
        emu_frag_b[t][e] = b[e];
    emu_barrier_wait(&warp_barrier[w]);
    double A[M][K], B[K][N];
    for (int l = 0; l < PARTILE_WARP_SIZE; l++) {
        int r, c;
        for (int e = 0; e < AN; e++) {
            apos(l, e, &r, &c);
            A[r][c] = emu_frag_a[w * PARTILE_WARP_SIZE + l][e];
        }
        for (int e = 0; e < BN; e++) {
            bpos(l, e, &r, &c);
            B[r][c] = emu_frag_b[w * PARTILE_WARP_SIZE + l][e];
        }
    }
    emu_barrier_wait(&warp_barrier[w]); /* all gathered before the next mma writes */
    for (int e = 0; e < CN; e++) {
        int r, c;
        cpos((int)lane, e, &r, &c);
        double acc = d[e];
        for (int k = 0; k < K; k++)
            acc = fma(A[r][k], B[k][c], acc);
        d[e] = acc;
    }
}
#ifdef EMU_MASS_HIP
/* HIP's f64 MFMA on a wave64 (built with PARTILE_WARP_SIZE 64): the same
 * forward chain assumed, as test_mass_layout.c does (unverified on AMD
 * hardware) */
#define f64_16x16x4_in_t double
static void f64_16x16x4_mma(double *d, const double *a, const double *b)
{
    emu_mma<16, 16, 4, f64_16x16x4_A_N, f64_16x16x4_B_N, f64_16x16x4_C_N>(
        d, a, b, f64_16x16x4_a_pos, f64_16x16x4_b_pos, f64_16x16x4_c_pos);
}
#else
#define f64_m8n8k4_in_t double
#define f64_m16n8k16_in_t double
static void f64_m8n8k4_mma(double *d, const double *a, const double *b)
{
    emu_mma<8, 8, 4, f64_m8n8k4_A_N, f64_m8n8k4_B_N, f64_m8n8k4_C_N>(
        d, a, b, f64_m8n8k4_a_pos, f64_m8n8k4_b_pos, f64_m8n8k4_c_pos);
}
static void f64_m16n8k16_mma(double *d, const double *a, const double *b)
{
    emu_mma<16, 8, 16, f64_m16n8k16_A_N, f64_m16n8k16_B_N, f64_m16n8k16_C_N>(
        d, a, b, f64_m16n8k16_a_pos, f64_m16n8k16_b_pos, f64_m16n8k16_c_pos);
}
#endif

#define EMU_MASS_WARPS_RUN /* emulate_mass_device.h: these shims, not its not-run ones */
#include "emulate_mass_device.h"

/* the FP64 engines as the CUDA and HIP backends configure them */
EMU_DEVICE_CODE_BEGIN
#ifdef EMU_MASS_HIP
#include "backends/hip/mass_tiles_f64.inc"
#else
#include "backends/cuda/mass_tiles_f64.inc"
#endif
EMU_DEVICE_CODE_END

/* pass 1's kernel: 0, 1 the tile kernel of the first or second engine
 * (HIP has one), 2 kernel (ii) */
static mass_kernel_t pass1_kernel(int variant, int npts, int comps, int resident)
{
    if (variant == 2)
        return mass_fma_variant(npts, comps);
#ifdef EMU_MASS_HIP
    return mass_tile_variant_f64_16x16x4(npts, comps, resident);
#else
    return variant == 1 ? mass_tile_variant_f64_m16n8k16(npts, comps, resident)
                        : mass_tile_variant_f64_m8n8k4(npts, comps, resident);
#endif
}
#ifdef EMU_MASS_HIP
static const char *const engine_names[] = { "f64 16x16x4 (wave64)", "f64 16x16x4 (wave64)",
                                            "kernel (ii) (wave64)" };
#else
static const char *const engine_names[] = { "m8n8k4", "m16n8k16", "kernel (ii)" };
#endif

/* the per-cell kernels' dynamic shared memory: 8 warps of the largest
 * staging (27 points + 9 components, or 27 + 1), the pair table and queues */
enum { EMU_SMEM_DOUBLES = 8 * (36 * MASS_STRIDE + MASS_RING) + MASS_MAX_NPTS * MASS_MAX_NPTS };
double mass_smem[EMU_SMEM_DOUBLES];

/* Per cell, how many particles: mostly few, some empty, some crowded. */
static int draw_count(int crowd)
{
    switch (next() % 8) {
    case 0: return 0;
    case 1: return 1;
    case 2: return crowd ? 33 + (int)(next() % (uint64_t)crowd) : 2;
    default: return (int)(next() % 6);
    }
}

int main(int argc, char **argv)
{
    rng_state = argc > 1 ? strtoull(argv[1], NULL, 10) : (uint64_t)time(NULL);
    printf("# seed %llu\n", (unsigned long long)rng_state);
    partile_context_t *ref = NULL;
    must(partile_context_create("reference", 0, &ref), "reference context");
    long long runs = 0, strided = 0, failures = 0, values = 0;
    for (int trial = 0; trial < 48; trial++) {
        const int dim = 1 + trial % 3, tsc = (trial / 3) % 2, comps = (trial / 6) % 2 ? 9 : 1;
        int64_t cells[3];
        int periodic[3];
        for (int a = 0; a < 3; a++) {
            periodic[a] = (int)(next() % 2);
            /* a periodic axis needs 2n + 1 cells (common/mass.c); small 3-D
             * TSC grids, whose tensor kernel is the slowest to emulate */
            const int least = periodic[a] ? (tsc ? 5 : 3) : 1;
            cells[a] = least + (int64_t)(next() % (dim == 3 ? (tsc ? 1 : 3) : 5));
        }
        partile_grid_t g;
        const int64_t ncells = emu_grid(&g, dim, cells, periodic);
        const partile_shape_t shape = tsc ? PARTILE_SHAPE_TSC : PARTILE_SHAPE_CIC;
        const partile_mass_kind_t kind = comps == 1 ? PARTILE_MASS_SCALAR : PARTILE_MASS_TENSOR;
        /* crowded cells: several rounds; in 1-D and 2-D TSC also a group
         * larger than the ring (the resident kernel then streams it) */
        const int crowd = dim == 3 && tsc && comps == 9 ? 16 : dim == 3 ? 60 : 140;
        std::vector<int> count(ncells);
        size_t n = 0;
        for (int64_t c = 0; c < ncells; c++)
            n += (size_t)(count[c] = draw_count(crowd));
        std::vector<double> x(3 * n), q(n), w(3 * n);
        for (int64_t c = 0, i = 0; c < ncells; c++) {
            int64_t rest = c, j[3] = { 0, 0, 0 };
            for (int a = 0; a < dim; a++) {
                j[a] = rest % g.cells[a];
                rest /= g.cells[a];
            }
            for (int k = 0; k < count[c]; k++, i++) {
                for (int a = 0; a < dim; a++)
                    x[a * n + i] = g.lower[a] + ((double)j[a] + uniform()) * g.spacing[a];
                q[i] = uniform() - 0.3;
                for (int a = 0; a < 3; a++)
                    w[a * n + i] = 4.0 * uniform() - 2.0;
            }
        }
        std::vector<int64_t> off(ncells + 1), perm(n);
        std::vector<double> xs;
        partile_vectors_t spos;
        emu_sort(ref, g, n, x, off, perm, xs, &spos);
        std::vector<double> qs(n), ws(3 * n);
        for (size_t i = 0; i < n; i++) {
            qs[i] = q[perm[i]];
            for (int a = 0; a < 3; a++)
                ws[a * n + i] = w[a * n + perm[i]];
        }
        const partile_vectors_t omega = { PARTILE_DTYPE_FLOAT64,
                                          { ws.data(), ws.data() + n, ws.data() + 2 * n } };
        partile_mass_layout_t L;
        must(partile_mass_layout(&g, shape, kind, &L), "layout");
        partile_mass_params_t p;
        memset(&p, 0, sizeof p);
        p.grid = &g;
        p.shape = shape;
        p.kind = kind;
        p.sigma = 0.75 + uniform();
        std::vector<double> want(L.entries);
        int64_t bad = -1;
        must(partile_mass_assemble(ref, &p, n, &spos, off.data(), qs.data(),
                                   comps == 9 ? &omega : NULL, want.data(), &bad),
             "reference assembly");

        /* pass 1's arguments as gpu_mass_assemble sets them for one chunk
         * in bitwise mode, ω given */
        mass_args m;
        memset(&m, 0, sizeof m);
        const partile_transfer_t tr = { &g, shape, PARTILE_CENTERING_NODE, 3, NULL,
                                        PARTILE_ORDER_BY_POINT };
        m.t = make_transfer(&tr, &spos);
        m.off = off.data();
        m.q = qs.data();
        mass_set_local_sizes(&m, (int)shape, dim, comps, L.offsets);
        mass_set_cell_geometry(&m, &g);
        for (int a = 0; a < 3; a++)
            m.w[a] = ws.data() + a * n;
        m.w_stride = 1;
        std::vector<unsigned char> groups(n);
        for (size_t i = 0; i < n; i++) { /* k_mass_groups */
            mass_raw r;
            for (int a = 0; a < dim; a++)
                r.x[a] = xs[a * n + i];
            groups[i] = (unsigned char)mass_group_of(&m, &r);
        }
        m.groups = groups.data();
        ull fault = NO_BAD;
        m.fault = &fault;
        m.cell0 = 0;
        m.cells = ncells;
        m.sigma = p.sigma;
        std::vector<double> scratch((size_t)ncells * m.ngroups * m.pairs * comps);

        for (int variant = 0; variant < 3; variant++) {
            /* 0, 1: the tile kernel on m8n8k4 or m16n8k16 (the TSC tensor's
             * resident kernel or not); 2: kernel (ii) */
            const int resident = m.ngroups > 1 && comps == 9 && next() % 2;
            const mass_kernel_t kernel = pass1_kernel(variant, m.npts, comps, resident);
            const int most = MASS_BLOCK_WARPS(m.npts, comps);
            const int warps = 1 + (int)(next() % (uint64_t)most);
            long long blocks = (ncells + warps - 1) / warps;
            if (variant != 2) { /* mass_launch_cells' cap, small: warps stride */
                const long long cap = 1 + (long long)(next() % 3);
                blocks = blocks < cap ? blocks : cap;
            }
            strided += blocks * warps < ncells;
            for (double &v : mass_smem)
                v = NAN;
            for (double &v : scratch)
                v = NAN;
            m.scratch = scratch.data();
            launch((unsigned)blocks, (unsigned)(warps * PARTILE_WARP_SIZE), [&] { kernel(m); });

            /* pass 2 finishes the storage (one chunk) */
            m.finish = 1;
            long long plane0;
            const long long total = mass_reduce_range(&m, 0, g.cells[dim - 1], &plane0);
            std::vector<double> got(L.entries, NAN);
            run_reduce(m, tsc, plane0, total, ncells, (long long)L.entries, got.data(),
                       (int)(next() % 2));
            m.finish = 0;
            int64_t first;
            const int64_t differ = emu_differ(want.data(), got.data(), (int64_t)L.entries, &first);
            runs++;
            values += (long long)L.entries;
            if (differ || fault != NO_BAD || divergent) {
                failures++;
                printf("FAIL: %s %s, %s, %d warps x %lld blocks, %zu particles: %lld of %zu "
                       "differ (first %lld: %.17g, reference %.17g), fault %s, divergent %d\n",
                       emu_grid_name(g, tsc).s, comps == 9 ? "tensor" : "scalar",
                       engine_names[variant],
                       warps, blocks, n, (long long)differ, L.entries, (long long)first,
                       got[first], want[first], fault != NO_BAD ? "set" : "clear", divergent);
                divergent = 0;
                fault = NO_BAD;
            }
        }
    }
    must(partile_context_destroy(ref), "context destroy");
    printf("%lld assemblies (%lld with warps striding over cells), %lld stored values, "
           "%lld failed\n",
           runs, strided, values, failures);
    if (strided == 0) { /* the caps above must make warps take several cells */
        printf("FAIL: no launch had fewer warps than cells\n");
        return 1;
    }
    return failures != 0;
}
