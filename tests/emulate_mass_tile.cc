/* The GPU mass matrix end to end on the CPU: the tile kernels of
 * backends/gpu/mass_tile.inc (CUDA's f64 m8n8k4 and m16n8k16 engines; built
 * with EMU_MASS_HIP and PARTILE_WARP_SIZE 64, HIP's f64 16x16x4 MFMA on a
 * wave64, whose logic this is the only run of: unverified on AMD hardware)
 * and kernel (ii) (k_mass_fma_*) as pass 1, then pass 2 (mass_reduce_index.inc)
 * finishing the storage, run as host C++ with the shims of
 * tests/emulate_gpu.h — a pthread per lane, warp ballots, __syncwarp and
 * each mma.sync a collective of the warp's lanes that gathers their
 * fragments by the engine's layout (backends/cuda/mma_layout.h,
 * backends/hip/mfma_layout.h) and runs the forward FMA chain over k that
 * the NVIDIA tensor cores were measured to take (DESIGN.md §2; assumed for
 * the MFMA) — against the reference backend's partile_mass_assemble, bit
 * for bit. What the layout test (test_mass_layout.c) cannot see, this
 * runs, and counts on the host that each run reached (`enum path`):
 * staging rounds and their ring; the TSC group queue keeping particles for
 * the next round; the RESIDENT staging of the 2-D and 3-D TSC tensor, with
 * a group larger than the ring and a cell too full to try (both stream),
 * and an empty group (its block of scratch zeroed, no passes);
 * passes of tiles; a capped grid whose warps stride over several cells and
 * the CIC tensor's carry of the next cell's first round into a cell of
 * several rounds; the CIC scalar's inputs by asynchronous copies (deferred
 * to the lane's wait, tests/emulate_gpu.h), its next cell's first round
 * copied during its last, and its unrolled rounds; pass 1 over chunks of
 * cell planes; a bad particle (NaN, or listed in the wrong cell), which
 * pass 1 must flag (its other runs must leave the fault word clear).
 *   - 1-3-D, CIC and TSC, scalar and tensor, periodic axes or not, ω
 *     given (not from a B field), bitwise mode, no accumulate;
 *   - positions FP64, or (a third of the grids) FP32, which pass 1 reads
 *     as k_mass_positions_f64 converts them (mass_args.x), as mass_gpu.inc
 *     does;
 *   - cells empty, of one particle and crowded;
 *   - blocks of 1 to MASS_BLOCK_WARPS warps, shared memory sized as
 *     mass_launch_cells sizes it (mass_block_shared), filled with NaN
 *     before every launch and followed by a guard that must stay intact;
 *     the scratch filled with NaN, so that a slot read before it is staged
 *     or an entry never written shows in the sums;
 *   - every lane of a warp must reach the same collective, and every
 *     element of an mma's A and B must come from some lane.
 * Not seen here: the collectives are full barriers of the warp's lanes,
 * stronger than __ballot_sync, so a missing __syncwarp next to a ballot
 * passes; relaxed mode, accumulate, the B field and kernel (i) are left to
 * the GPU tests (test_mass_gpu).
 * Seed: the time, printed; give it as the argument to rerun. */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include <sanitizer/asan_interface.h> /* no-ops unless built with -fsanitize=address */

#include "emulate_gpu.h"

#include "backends/cuda/mma_layout.h"
#include "backends/hip/mfma_layout.h"
#include "partile/mass.h"

/* ---- the warp primitives the mass kernels use, run for real ---- */

/* Every lane of a warp must reach the same collective (the kernels' ballots
 * and __syncwarp take the full mask; mma.sync needs all lanes): each
 * writes its kind, and every lane checks the warp's. These exchanges are
 * full barriers of the warp's lanes, stronger than __ballot_sync (which
 * orders no memory): a missing __syncwarp next to a ballot goes unseen. */
enum emu_collective { EMU_BALLOT = 1, EMU_SYNCWARP, EMU_MMA };
static int emu_collective_kind[1024];
static std::atomic<long long> collective_errors{ 0 };
static void emu_collective_enter(unsigned t, int kind)
{
    const unsigned w = t / PARTILE_WARP_SIZE;
    thread_shuffles++;
    emu_collective_kind[t] = kind;
    emu_barrier_wait(&warp_barrier[w]);
    for (unsigned l = 0; l < PARTILE_WARP_SIZE; l++)
        if (emu_collective_kind[w * PARTILE_WARP_SIZE + l] != kind)
            collective_errors++;
}
static unsigned long long emu_ballot(int pred)
{
    const unsigned t = threadIdx.x, w = t / PARTILE_WARP_SIZE;
    warp_slot[t] = pred != 0;
    emu_collective_enter(t, EMU_BALLOT);
    unsigned long long bits = 0;
    for (unsigned l = 0; l < PARTILE_WARP_SIZE; l++)
        bits |= warp_slot[w * PARTILE_WARP_SIZE + l] << l;
    emu_barrier_wait(&warp_barrier[w]); /* all read before the next exchange writes */
    return bits;
}
static void emu_syncwarp()
{
    const unsigned t = threadIdx.x;
    emu_collective_enter(t, EMU_SYNCWARP);
    emu_barrier_wait(&warp_barrier[t / PARTILE_WARP_SIZE]);
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
 * from the warp's lanes by the engine's layout (an element no lane holds
 * counts as an error, and so does a NaN where every particle is good; a
 * bad particle's CIC weights are NaN, thrown away with its fault). */
static bool emu_inputs_finite = true;
template <int M, int N, int K, int AN, int BN, int CN>
static void emu_mma(double *d, const double *a, const double *b, emu_pos_fn apos, emu_pos_fn bpos,
                    emu_pos_fn cpos)
{
    const unsigned t = threadIdx.x, lane = t % PARTILE_WARP_SIZE, w = t / PARTILE_WARP_SIZE;
    for (int e = 0; e < AN; e++)
        emu_frag_a[t][e] = a[e];
    for (int e = 0; e < BN; e++)
        emu_frag_b[t][e] = b[e];
    emu_collective_enter(t, EMU_MMA);
    double A[M][K], B[K][N];
    bool held_a[M][K] = {}, held_b[K][N] = {};
    for (int l = 0; l < PARTILE_WARP_SIZE; l++) {
        int r, c;
        for (int e = 0; e < AN; e++) {
            apos(l, e, &r, &c);
            A[r][c] = emu_frag_a[w * PARTILE_WARP_SIZE + l][e];
            held_a[r][c] = true;
        }
        for (int e = 0; e < BN; e++) {
            bpos(l, e, &r, &c);
            B[r][c] = emu_frag_b[w * PARTILE_WARP_SIZE + l][e];
            held_b[r][c] = true;
        }
    }
    emu_barrier_wait(&warp_barrier[w]); /* all gathered before the next mma writes */
    for (int e = 0; e < CN; e++) {
        int r, c;
        cpos((int)lane, e, &r, &c);
        double acc = d[e];
        for (int k = 0; k < K; k++) {
            if (!held_a[r][k] || !held_b[k][c]) {
                collective_errors++;
                continue; /* A or B uninitialized */
            }
            if (emu_inputs_finite && (std::isnan(A[r][k]) || std::isnan(B[k][c])))
                collective_errors++; /* e.g. a ring slot read before it was staged */
            acc = fma(A[r][k], B[k][c], acc);
        }
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

/* the per-cell kernels' dynamic shared memory: MASS_MAX_WARPS of the largest
 * staging (27 points + 9 components), the pair table and queues, then a
 * guard that no launch may touch */
enum { EMU_GUARD = 64 };
enum {
    EMU_SMEM_DOUBLES = MASS_MAX_WARPS * (MASS_WARP_DOUBLES(MASS_MAX_NPTS, 9) + MASS_RING) +
                       MASS_MAX_NPTS * MASS_MAX_NPTS / 4 + 1 + EMU_GUARD
};
double mass_smem[EMU_SMEM_DOUBLES];
static const uint64_t guard_bits = 0x7ff4dead0000beefull; /* a NaN no kernel writes */

/* Fills the `bytes` a launch may use with NaN and the guard after them.
 * Under AddressSanitizer (the CPU suite's sanitized run) everything past
 * them is also poisoned, so that a read there stops the test: the guard
 * sees writes only, and a kernel (ii) whose idle lanes read coefficients
 * past the block's shared memory (values they then dropped) passed this
 * emulation and failed only compute-sanitizer on the GPU (bench/RESULTS.md,
 * 2026-12-06). */
static void poison_shared(size_t bytes)
{
    const size_t used = (bytes + sizeof(double) - 1) / sizeof(double);
    ASAN_UNPOISON_MEMORY_REGION(mass_smem, sizeof mass_smem);
    for (size_t i = 0; i < used; i++)
        mass_smem[i] = NAN;
    for (size_t i = used; i < used + EMU_GUARD; i++)
        memcpy(&mass_smem[i], &guard_bits, sizeof guard_bits);
    ASAN_POISON_MEMORY_REGION(mass_smem + used, sizeof mass_smem - used * sizeof(double));
}
static int guard_broken(size_t bytes)
{
    const size_t used = (bytes + sizeof(double) - 1) / sizeof(double);
    ASAN_UNPOISON_MEMORY_REGION(mass_smem, sizeof mass_smem);
    for (size_t i = used; i < used + EMU_GUARD; i++)
        if (memcmp(&mass_smem[i], &guard_bits, sizeof guard_bits) != 0)
            return 1;
    return 0;
}

/* Per cell, how many particles: mostly few, some empty, some crowded. */
static int draw_count(int crowd)
{
    switch (next() % 8) {
    case 0: return 0;
    case 1: return 1;
    case 2: return PARTILE_WARP_SIZE + 1 + (int)(next() % (uint64_t)crowd);
    default: return (int)(next() % 6);
    }
}

/* The paths a run must have reached (counted on the host from the cells'
 * counts and groups and each launch's geometry), so that a draw that stops
 * reaching one fails instead of passing quietly. */
enum path {
    STRIDED,      /* fewer warps than cells: warps take several */
    CARRY_ROUNDS, /* CIC tensor tiles: a warp's later cell of several rounds */
    COPIED_AHEAD, /* CIC scalar tiles: a warp's later cell, copied during its last */
    UNROLLED,     /* CIC scalar tiles: a cell of a whole round or more */
    QUEUE_REST,   /* TSC: a cell's group of more than a warp (the queue keeps some) */
    OVERFLOW,     /* RESIDENT, cell tried: a group larger than the ring (it streams) */
    UNTRIED,      /* RESIDENT: a cell too full to try */
    EMPTY_GROUP,  /* RESIDENT, cell tried: a group of no particle (its block zeroed) */
    CHUNKED,      /* pass 1 over chunks of cell planes (cell0 > 0) */
    FAULTS,       /* a bad particle flagged */
    PATHS
};
static const char *const path_names[PATHS] = {
    "strided", "carry into cells of several rounds", "copies ahead", "unrolled rounds", "queue rests",
    "resident overflows", "resident untried", "resident empty groups", "chunks", "faults"
};

int main(int argc, char **argv)
{
    rng_state = argc > 1 ? strtoull(argv[1], NULL, 10) : test_seed();
    printf("# seed %llu\n", (unsigned long long)rng_state);
    partile_context_t *ref = NULL;
    must(partile_context_create("reference", 0, &ref), "reference context");
    long long runs = 0, failures = 0, values = 0;
    long long seen[PATHS] = {};
    for (int trial = 0; trial < 36; trial++) {
        const int dim = 1 + trial % 3, tsc = (trial / 3) % 2, comps = (trial / 6) % 2 ? 9 : 1;
        const int fp32 = trial / 12 == 2; /* FP32 positions: k_mass_positions_f64 first */
        int64_t cells[3];
        int periodic[3];
        for (int a = 0; a < 3; a++) {
            periodic[a] = (int)(next() % 2);
            /* a periodic axis needs 2n + 1 cells (common/mass.c); small 3-D
             * TSC grids, whose tensor kernel is the slowest to emulate */
            const int least = periodic[a] ? (tsc ? 5 : 3) : 1;
            cells[a] = least + (int64_t)(next() % (dim == 3 ? (tsc ? 1 : 3) : 5));
        }
        /* 2-D: room for the RESIDENT cells below (TSC tensor, cells 1 and
         * 2), or for a crowded last cell after a non-empty one in its plane
         * (CIC: the one-warp launch below) */
        if (dim == 2 && (!tsc || comps == 9) && cells[0] < 3)
            cells[0] = 3;
        partile_grid_t g;
        const int64_t ncells = emu_grid(&g, dim, cells, periodic);
        const partile_shape_t shape = tsc ? PARTILE_SHAPE_TSC : PARTILE_SHAPE_CIC;
        const partile_mass_kind_t kind = comps == 1 ? PARTILE_MASS_SCALAR : PARTILE_MASS_TENSOR;
        /* crowded cells: several rounds (scaled by the ring, for wave64) */
        const int crowd = dim == 3 && tsc && comps == 9 ? 16 : dim == 3 ? 2 * MASS_RING - 68
                                                                         : 2 * MASS_RING + 12;
        std::vector<int> count(ncells), cluster(ncells, 0);
        for (int64_t c = 0; c < ncells; c++)
            count[c] = draw_count(crowd);
        if (ncells > 1) { /* an empty cell and a crowded one in every grid */
            count[0] = 0;
            count[ncells - 1] = PARTILE_WARP_SIZE + 1 + crowd / 4;
        }
        if (dim == 2 && !tsc && count[ncells - 2] == 0)
            count[ncells - 2] = 1;
        if (tsc && dim < 3 && ncells > 2) {
            /* a cell whose particles all lie in one group, more than the ring
             * but few enough that a RESIDENT kernel tries it; in 2-D also a
             * cell too full to try (mass_resident_cell) */
            cluster[1] = 1;
            count[1] = MASS_RING + 1 + (int)(next() % (uint64_t)(MASS_RING / 4));
            if (dim == 2 && comps == 9)
                count[2] = 3 * MASS_RING + 1 + (int)(next() % 8);
        }
        size_t n = 0;
        for (int64_t c = 0; c < ncells; c++)
            n += (size_t)count[c];
        std::vector<double> x(3 * n), q(n), w(3 * n);
        for (int64_t c = 0, i = 0; c < ncells; c++) {
            int64_t rest = c, j[3] = { 0, 0, 0 };
            for (int a = 0; a < dim; a++) {
                j[a] = rest % g.cells[a];
                rest /= g.cells[a];
            }
            for (int k = 0; k < count[c]; k++, i++) {
                for (int a = 0; a < dim; a++) { /* clustered: the lower half of the cell */
                    double &xa = x[a * n + i];
                    xa = g.lower[a] + ((double)j[a] + (cluster[c] ? 0.4 : 1.0) * uniform()) * g.spacing[a];
                    if (fp32 && std::floor(((double)(float)xa - g.lower[a]) / g.spacing[a]) != (double)j[a])
                        xa = g.lower[a] + ((double)j[a] + 0.25) * g.spacing[a]; /* rounded out */
                    if (fp32)
                        xa = (double)(float)xa;
                }
                q[i] = uniform() - 0.3;
                for (int a = 0; a < 3; a++)
                    w[a * n + i] = 4.0 * uniform() - 2.0;
            }
        }
        std::vector<int64_t> off(ncells + 1), perm(n);
        std::vector<double> xs;
        partile_vectors_t spos;
        emu_sort(ref, g, n, x, off, perm, xs, &spos);
        std::vector<float> xf(fp32 ? 3 * n : 0); /* FP32 trials: the positions given */
        partile_vectors_t given = spos;
        if (fp32) {
            given.type = PARTILE_DTYPE_FLOAT32;
            for (int a = 0; a < dim; a++) {
                for (size_t i = 0; i < n; i++)
                    xf[a * n + i] = (float)xs[a * n + i]; /* exact */
                given.axis[a] = xf.data() + a * n;
            }
        }
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
        must(partile_mass_assemble(ref, &p, n, &given, off.data(), qs.data(),
                                   comps == 9 ? &omega : NULL, want.data(), &bad),
             "reference assembly");

        /* pass 1's arguments as gpu_mass_assemble sets them in bitwise mode,
         * ω given */
        mass_args m;
        memset(&m, 0, sizeof m);
        const partile_transfer_t tr = { &g, shape, PARTILE_CENTERING_NODE, 3, NULL,
                                        PARTILE_ORDER_BY_POINT };
        m.t = make_transfer(&tr, &given);
        /* mass_args.x: FP64 positions as given, or the FP32 ones converted */
        std::vector<double> converted(fp32 ? 3 * n : 0);
        const auto convert = [&] {
            for (double &v : converted)
                v = NAN;
            launch(2, 64, [&] { k_mass_positions_f64((long long)n, dim, given, converted.data()); });
        };
        for (int a = 0; a < dim; a++)
            m.x[a] = (fp32 ? converted.data() : xs.data()) + a * n;
        m.off = off.data();
        m.q = qs.data();
        mass_set_local_sizes(&m, (int)shape, dim, comps, L.offsets);
        mass_set_cell_geometry(&m, &g);
        for (int a = 0; a < 3; a++)
            m.w[a] = ws.data() + a * n;
        m.w_stride = 1;
        std::vector<unsigned char> groups(n);
        std::vector<int> biggest_group(ncells, 0), empty_groups(ncells, 0); /* per cell */
        for (int64_t c = 0; c < ncells; c++) {
            int per[8] = { 0 };
            for (int64_t i = off[c]; i < off[c + 1]; i++) { /* k_mass_groups */
                mass_raw r;
                for (int a = 0; a < dim; a++)
                    r.x[a] = xs[a * n + i];
                groups[i] = (unsigned char)mass_group_of(&m, &r);
                per[groups[i]]++;
            }
            for (int k = 0; k < 8; k++)
                biggest_group[c] = per[k] > biggest_group[c] ? per[k] : biggest_group[c];
            for (int k = 0; k < m.ngroups; k++)
                empty_groups[c] += per[k] == 0;
        }
        m.groups = groups.data();
        ull fault = NO_BAD;
        m.fault = &fault;
        m.sigma = p.sigma;
        const size_t cell_values = (size_t)m.ngroups * m.pairs * comps;
        std::vector<double> scratch(cell_values * (size_t)ncells), part;
        const long long planes = g.cells[dim - 1], plane_cells = ncells / planes;

        for (int variant = 0; variant < 4; variant++) {
            /* 0, 1: the tile kernel of each engine (the TSC tensor's RESIDENT
             * kernel or not); 2: kernel (ii); 3: a bad particle, to be
             * flagged by any of them */
            const int engine = variant == 3 ? (int)(next() % 3) : variant;
            /* RESIDENT or not: variants 0 and 1 alternate with the trial, so
             * that each 2-D TSC tensor trial runs one RESIDENT kernel and the
             * paths it alone reaches are reached whatever the seed (a coin
             * per launch missed them all in one of 64 runs) */
            const int resident = engine != 2 && m.ngroups > 1 && comps == 9 &&
                                 (variant == 3 ? (int)(next() % 2) : (trial / 12 + variant) % 2);
            const mass_kernel_t kernel = pass1_kernel(engine, m.npts, comps, resident);
            /* mostly 1-3 warps: every warp collective waits for all the
             * block's threads to be scheduled on the CPU's few cores */
            const int most = MASS_BLOCK_WARPS(m.npts, comps);
            /* 2-D CIC: one engine's launch (alternating with the trial) is
             * one block of one warp, so a warp's next cell is the next one:
             * the crowded last cell after a non-empty one reaches the carry
             * and the copies ahead whatever the seed (random launches missed
             * them in about one run of 50000) */
            const int one_warp = dim == 2 && !tsc && variant == (trial / 12) % 2;
            const int warps = one_warp ? 1 : next() % 8 == 0 ? most : 1 + (int)(next() % 3);
            const size_t shared = mass_block_shared(m.npts, comps, (size_t)warps);
            if (shared > sizeof mass_smem - EMU_GUARD * sizeof(double)) {
                printf("FAIL: a block of %d warps needs %zu bytes of shared memory\n", warps, shared);
                return 1;
            }
            /* the chunks of cell planes pass 1 runs over (several only in
             * variants 0 and 1, where planes allow), as mass_gpu.inc does
             * when the scratch budget is short */
            const long long chunk_planes =
                variant < 2 && planes > 1 && next() % 2 ? 1 + (long long)(next() % (uint64_t)(planes - 1))
                                                        : planes;
            size_t bad_particle = 0;
            double saved = 0.0;
            if (variant == 3) {
                if (n == 0)
                    continue;
                bad_particle = (size_t)(next() % n);
                saved = xs[bad_particle]; /* x of a particle: NaN, or a cell off */
                xs[bad_particle] = next() % 2 || fp32 ? NAN : saved + g.spacing[0]; /* the next cell */
                if (fp32)
                    xf[bad_particle] = NAN;
            }
            emu_inputs_finite = variant != 3;
            if (fp32)
                convert();
            for (double &v : scratch)
                v = NAN;
            fault = NO_BAD;
            for (long long z0 = 0; z0 < planes; z0 += chunk_planes) {
                const long long z1 = z0 + chunk_planes < planes ? z0 + chunk_planes : planes;
                m.cell0 = z0 * plane_cells;
                m.cells = (z1 - z0) * plane_cells;
                part.assign(cell_values * (size_t)m.cells, NAN);
                m.scratch = part.data();
                long long blocks = (m.cells + warps - 1) / warps;
                if (engine != 2) { /* mass_launch_cells' cap, small: warps stride */
                    const long long cap = one_warp ? 1 : 1 + (long long)(next() % 3);
                    blocks = blocks < cap ? blocks : cap;
                }
                /* the paths this launch reaches */
                seen[STRIDED] += blocks * warps < m.cells;
                seen[CHUNKED] += m.cell0 > 0;
                const long long first_stride = blocks * warps;
                for (long long c = m.cell0; engine != 2 && variant != 3 && c < m.cell0 + m.cells;
                     c++) { /* the tile kernels' paths, on valid particles */
                    const int cnt = count[c], big = biggest_group[c];
                    /* loaded during the warp's last cell (if not empty) */
                    seen[CARRY_ROUNDS] += !tsc && comps == 9 && c - m.cell0 >= first_stride &&
                                          cnt > PARTILE_WARP_SIZE && count[c - first_stride] > 0;
                    seen[COPIED_AHEAD] += !tsc && comps == 1 && c - m.cell0 >= first_stride &&
                                          cnt > 0 && count[c - first_stride] > 0;
                    seen[UNROLLED] += !tsc && comps == 1 && cnt >= PARTILE_WARP_SIZE;
                    seen[QUEUE_REST] += tsc && big > PARTILE_WARP_SIZE;
                    if (resident && dim > 1) { /* RESIDENT sizes (2-D, 3-D TSC tensor) */
                        const int tried = mass_resident_cell(m.ngroups, cnt);
                        seen[UNTRIED] += !tried;
                        seen[OVERFLOW] += tried && big > MASS_RING;
                        seen[EMPTY_GROUP] += tried && empty_groups[c] > 0;
                    }
                }
                poison_shared(shared);
                launch((unsigned)blocks, (unsigned)(warps * PARTILE_WARP_SIZE), [&] { kernel(m); });
                if (guard_broken(shared)) {
                    printf("FAIL: %s: shared memory written past the block's %zu bytes\n",
                           emu_grid_name(g, tsc).s, shared);
                    failures++;
                }
                std::copy(part.begin(), part.end(),
                          scratch.begin() + (ptrdiff_t)(cell_values * (size_t)m.cell0));
            }
            if (variant == 3) {
                xs[bad_particle] = saved;
                if (fp32)
                    xf[bad_particle] = (float)saved;
                seen[FAULTS] += fault != NO_BAD;
                if (fault == NO_BAD || divergent || collective_errors) {
                    failures++;
                    printf("FAIL: %s %s, %s: a bad particle (%zu of %zu) %s, divergent %d, "
                           "collective errors %lld\n",
                           emu_grid_name(g, tsc).s, comps == 9 ? "tensor" : "scalar",
                           engine_names[engine], bad_particle, n,
                           fault == NO_BAD ? "not flagged" : "flagged", divergent,
                           collective_errors.load());
                    divergent = 0;
                    collective_errors = 0;
                }
                continue;
            }

            /* pass 2 over the whole scratch finishes the storage */
            m.cell0 = 0;
            m.cells = ncells;
            m.scratch = scratch.data();
            m.finish = 1;
            long long plane0;
            const long long total = mass_reduce_range(&m, 0, planes, &plane0);
            std::vector<double> got(L.entries, NAN);
            run_reduce(m, tsc, plane0, total, ncells, (long long)L.entries, got.data(),
                       (int)(next() % 2));
            m.finish = 0;
            int64_t first;
            const int64_t differ = emu_differ(want.data(), got.data(), (int64_t)L.entries, &first);
            runs++;
            values += (long long)L.entries;
            if (differ || fault != NO_BAD || divergent || collective_errors) {
                failures++;
                printf("FAIL: %s %s, %s, %d warps, chunks of %lld planes, %zu particles: %lld of "
                       "%zu differ (first %lld: %.17g, reference %.17g), fault %s, divergent %d, "
                       "collective errors %lld\n",
                       emu_grid_name(g, tsc).s, comps == 9 ? "tensor" : "scalar",
                       engine_names[engine], warps, chunk_planes, n, (long long)differ, L.entries,
                       (long long)first, got[first], want[first], fault != NO_BAD ? "set" : "clear",
                       divergent, collective_errors.load());
                divergent = 0;
                collective_errors = 0;
            }
        }
    }
    must(partile_context_destroy(ref), "context destroy");
    printf("%lld assemblies, %lld stored values, %lld failed; paths reached:", runs, values,
           failures);
    for (int k = 0; k < PATHS; k++)
        printf("%s %s %lld", k ? "," : "", path_names[k], seen[k]);
    printf("\n");
    for (int k = 0; k < PATHS; k++)
        if (seen[k] == 0) {
            printf("FAIL: never reached: %s\n", path_names[k]);
            failures++;
        }
    return failures != 0;
}
