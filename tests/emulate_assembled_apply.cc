/* The GPU assembled apply y = M x (backends/gpu/apply_gpu.inc) run on the
 * CPU against the reference backend's partile_mass_apply_assembled, bit for
 * bit: k_assembled<M, N, D> (tiles of rows staged in dynamic shared
 * memory, as launched for M = 1, 3, CIC N = 1 and TSC N = 2, D = 1-3) and
 * its fallback k_assembled_direct<M> (a thread per (row, component), where
 * a tile does not fit or the grid has more than ASM_MAX_ROWS points). The device parts of the GPU sources, cut at
 * their host-side markers by tests/device_part.awk, compile as host C++
 * with the shims of tests/emulate_gpu.h. The dynamic shared memory
 * (`extern __shared__ double asm_smem[]`) is a static array filled with a
 * NaN before each launch, so that reading what was not staged shows, and
 * checked after it: nothing written past the launch's bytes.
 * Storage: the reference's partile_mass_assemble of sorted particles, then
 * noise (every entry random: no symmetry or zeros to hide a wrong slot).
 * Grids of 1-3 dimensions, periodic axes at the layout's minimum (3 cells
 * CIC, 5 TSC) and longer, non-periodic ones (ghost layer), x-lines longer
 * than a tile (150 points) and tiles over many y-lines, fewer blocks than
 * tiles (the tile loop). Seed: the time, printed; give it as the argument
 * to rerun a failure. */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "emulate_gpu.h"

EMU_DEVICE_CODE_BEGIN
/* each cut file closes its include guard, so the full files named by the
 * next one's #include are skipped; apply_gpu.inc goes after deposit_gpu.inc */
#include "gpu_common_device.inc"
#include "transfer_common_device.inc"
#include "deposit_gpu_device.inc"
/* The apply's device part declares only dynamic shared memory, `extern
 * __shared__ double asm_smem[]`: here a block-scope extern declaration of
 * the namespace-scope array defined below (a static __shared__ array would
 * need `static` back). */
#pragma push_macro("__shared__")
#undef __shared__
#define __shared__
#include "apply_gpu_device.inc"
#pragma pop_macro("__shared__")
EMU_DEVICE_CODE_END

/* ---- dynamic shared memory ---- */

constexpr int max2(int a, int b) { return a > b ? a : b; }
template <int M, int N>
constexpr int smem_max()
{
    return max2(max2((int)asm_shape<M, N, 1>::SMEM, (int)asm_shape<M, N, 2>::SMEM),
                (int)asm_shape<M, N, 3>::SMEM);
}
static constexpr int SMEM_MAX = max2(max2(smem_max<1, 1>(), smem_max<1, 2>()),
                                     max2(smem_max<3, 1>(), smem_max<3, 2>()));
static constexpr int GUARD = 256; /* doubles past the largest launch, checked too */
double asm_smem[SMEM_MAX + GUARD];
static const uint64_t JUNK = 0x7ff8dead0000beefull; /* a quiet NaN */

static void smem_fill()
{
    for (double &d : asm_smem)
        memcpy(&d, &JUNK, 8);
}
/* Doubles at or past `used` (the launch's bytes / 8) that were written. */
static int smem_overrun(int used)
{
    int bad = 0;
    for (int i = used; i < SMEM_MAX + GUARD; i++)
        bad += memcmp(&asm_smem[i], &JUNK, 8) != 0;
    return bad;
}

/* ---- launches (the host side of apply_gpu.inc replicated) ---- */

/* launch_assembled: one block per tile of R rows (capped at 32 blocks per
 * SM there: more than any grid here has tiles on a GPU of 4+ SMs), T = R·M
 * threads, A::SMEM doubles of dynamic shared memory; `want` blocks fewer
 * than the tiles run the kernel's tile loop. Returns the doubles written
 * past the launch's bytes. */
template <int M, int N, int D>
static int run_tiles(long long rows, const partile_grid_t &g, const double *storage,
                     const double *x, double *y, unsigned want, unsigned *blocks, int *threads)
{
    typedef asm_shape<M, N, D> A;
    static_assert((int)A::SMEM <= SMEM_MAX, "shared memory array too small");
    const long long tiles = (rows + A::R - 1) / A::R;
    *blocks = want && want < tiles ? want : (unsigned)tiles;
    *threads = A::T;
    smem_fill();
    launch(*blocks, A::T, [&] { k_assembled<M, N, D>((int)rows, g, storage, x, y); });
    return smem_overrun(A::SMEM);
}

template <int M, int N>
static int run_tiles_dim(long long rows, const partile_grid_t &g, const double *storage,
                         const double *x, double *y, unsigned want, unsigned *blocks,
                         int *threads)
{
    return g.dim == 1   ? run_tiles<M, N, 1>(rows, g, storage, x, y, want, blocks, threads)
           : g.dim == 2 ? run_tiles<M, N, 2>(rows, g, storage, x, y, want, blocks, threads)
                        : run_tiles<M, N, 3>(rows, g, storage, x, y, want, blocks, threads);
}

/* gpu_apply_assembled's fallback (no tile: shared memory or more than
 * ASM_MAX_ROWS rows): grid_for(rows·M) blocks of SORT_THREADS (the
 * 32-per-SM cap not reached here), or `want` fewer. */
template <int M>
static void run_direct(long long rows, const partile_grid_t &g, int shape, int offsets,
                       const double *storage, const double *x, double *y, unsigned want,
                       unsigned *blocks)
{
    const long long need = (rows * M + SORT_THREADS - 1) / SORT_THREADS;
    *blocks = want && want < need ? want : (unsigned)need;
    launch(*blocks, SORT_THREADS,
           [&] { k_assembled_direct<M>(rows, g, shape, offsets, storage, x, y); });
}

/* ---- cases ---- */

static int launches; /* emulated, in all */

struct spec {
    int dim;
    int64_t cells[3];
    int periodic[3];
    int tsc;
    double per_cell; /* particles per cell */
    unsigned blocks; /* 0: one per tile (as launched), else fewer: the tile loop */
};

/* One grid and particle set: scalar and tensor, assembled and noise
 * storage. Returns the failures. */
static int run_case(const spec &s, uint64_t seed)
{
    rng_state = seed;
    partile_grid_t g;
    const int64_t ncells = emu_grid(&g, s.dim, s.cells, s.periodic);
    const partile_shape_t shape = s.tsc ? PARTILE_SHAPE_TSC : PARTILE_SHAPE_CIC;
    const size_t n = (size_t)(s.per_cell * (double)ncells + 0.5), n1 = n ? n : 1;
    std::vector<double> pos(3 * n1), q(n1), om(3 * n1);
    for (int a = 0; a < s.dim; a++)
        for (size_t p = 0; p < n; p++) {
            const double L = (double)g.cells[a] * g.spacing[a];
            double c = g.lower[a] + uniform() * L * (1.0 - 1e-12);
            if (g.periodic[a] && p % 7 == 0) /* a few boxes away */
                c += (double)((int64_t)(next() % 7) - 3) * L;
            pos[a * n + p] = c;
        }
    for (size_t p = 0; p < n; p++) {
        q[p] = 0.5 + uniform();
        for (int a = 0; a < 3; a++)
            om[a * n + p] = 2 * uniform() - 1;
    }

    /* the reference: sort, permute, assemble, apply */
    partile_context_t *ref = NULL;
    must(partile_context_create("reference", 0, &ref), "reference context");
    std::vector<int64_t> off(ncells + 1), perm(n1);
    std::vector<double> ps, qs(n1), oms(3 * n1);
    partile_vectors_t spos, somega = { PARTILE_DTYPE_FLOAT64, { 0 } };
    emu_sort(ref, g, n, pos, off, perm, ps, &spos);
    for (size_t i = 0; i < n; i++) {
        for (int a = 0; a < 3; a++)
            oms[a * n + i] = om[a * n + perm[i]];
        qs[i] = q[perm[i]];
    }
    int64_t bad = -1;
    for (int a = 0; a < 3; a++)
        somega.axis[a] = oms.data() + a * n;

    int fails = 0;
    for (int kind = 0; kind < 2; kind++) {
        const int M = kind ? 3 : 1;
        partile_mass_params_t p;
        memset(&p, 0, sizeof p);
        p.grid = &g;
        p.shape = shape;
        p.kind = kind ? PARTILE_MASS_TENSOR : PARTILE_MASS_SCALAR;
        p.sigma = 0.75;
        partile_mass_layout_t L;
        must(partile_mass_layout(&g, shape, p.kind, &L), "layout");
        const long long rows = (long long)L.points;
        std::vector<double> storage(L.entries), x(rows * M);
        must(partile_mass_assemble(ref, &p, n, &spos, off.data(), qs.data(),
                                   kind ? &somega : NULL, storage.data(), &bad),
             "reference assemble");
        for (size_t i = 0; i < x.size(); i++) /* some -0 */
            x[i] = i % 11 == 4 ? -0.0 : 2 * uniform() - 1;
        for (int noise = 0; noise < 2; noise++) {
            if (noise)
                for (double &v : storage)
                    v = 2 * uniform() - 1;
            std::vector<double> want(rows * M);
            must(partile_mass_apply_assembled(ref, &p, storage.data(), x.data(), want.data()),
                 "reference apply");
            /* k_assembled<M, N, D> (launched), then k_assembled_direct<M>
             * (the fallback) */
            for (int kernel = 0; kernel < 2; kernel++) {
                std::vector<double> y(rows * M, NAN);
                const int divergent0 = divergent;
                const long long unwaited0 = async_unwaited;
                const long long syncs0 = block_syncs;
                unsigned blocks = 0;
                int threads = SORT_THREADS, overrun = 0;
                const char *name;
                if (kernel == 1) {
                    name = kind ? "k_assembled_direct<3>" : "k_assembled_direct<1>";
                    if (kind)
                        run_direct<3>(rows, g, (int)shape, L.offsets, storage.data(), x.data(),
                                      y.data(), s.blocks, &blocks);
                    else
                        run_direct<1>(rows, g, (int)shape, L.offsets, storage.data(), x.data(),
                                      y.data(), s.blocks, &blocks);
                } else if (!kind) {
                    name = "k_assembled<1>";
                    overrun = s.tsc ? run_tiles_dim<1, 2>(rows, g, storage.data(), x.data(),
                                                          y.data(), s.blocks, &blocks, &threads)
                                    : run_tiles_dim<1, 1>(rows, g, storage.data(), x.data(),
                                                          y.data(), s.blocks, &blocks, &threads);
                } else {
                    name = "k_assembled<3>";
                    overrun = s.tsc ? run_tiles_dim<3, 2>(rows, g, storage.data(), x.data(),
                                                          y.data(), s.blocks, &blocks, &threads)
                                    : run_tiles_dim<3, 1>(rows, g, storage.data(), x.data(),
                                                          y.data(), s.blocks, &blocks, &threads);
                }
                int64_t first;
                const int64_t differ = emu_differ(want.data(), y.data(), rows * M, &first);
                char what[200];
                snprintf(what, sizeof what, "%s %s n %zu %s storage, %u blocks of %d", name,
                         emu_grid_name(g, s.tsc).s, n, noise ? "noise" : "assembled", blocks,
                         threads);
                launches++;
                const long long unwaited = async_unwaited - unwaited0;
                if (differ || overrun || divergent != divergent0 || unwaited) {
                    printf("FAIL %s: %lld of %lld values differ, first row %lld component %lld: "
                           "want %.17g got %.17g; %d shared doubles written past the launch's "
                           "bytes; %d divergent barriers; %lld async copies not waited for\n",
                           what, (long long)differ, (long long)(rows * M), (long long)(first / M),
                           (long long)(first % M), want[first], y[first], overrun,
                           divergent - divergent0, unwaited);
                    fails++;
                } else {
                    printf("ok %s: %lld rows, %lld barriers\n", what, rows,
                           block_syncs - syncs0);
                }
            }
        }
    }
    must(partile_context_destroy(ref), "context destroy");
    return fails;
}

/* Periodic axes at the minimum (3 CIC, 5 TSC: 2N + 1 points, one wrap) and
 * longer; non-periodic axes (cells + 3 points); 150-cell x-lines (longer
 * than a tile: 128 rows CIC, 64 TSC, 32 tensor); narrow grids whose tiles
 * span many y-lines (and z-planes); fewer blocks than tiles; x-lines of
 * 32 and 64 points, periodic and not, so that each warp's rows fill one
 * line whose x neighbours wrap at both ends. */
static const spec cases[] = {
    /* CIC */
    { 1, { 150 }, { 1 }, 0, 3.0, 0 },
    { 1, { 150 }, { 0 }, 0, 3.0, 1 },
    { 1, { 3 }, { 1 }, 0, 4.0, 0 },
    { 1, { 1 }, { 0 }, 0, 5.0, 0 },
    { 2, { 150, 3 }, { 1, 1 }, 0, 2.0, 0 },
    { 2, { 150, 4 }, { 0, 1 }, 0, 2.0, 2 },
    { 2, { 3, 3 }, { 1, 1 }, 0, 4.0, 0 },
    { 2, { 9, 20 }, { 1, 0 }, 0, 2.0, 0 },
    { 2, { 13, 30 }, { 0, 0 }, 0, 1.0, 1 },
    { 3, { 3, 3, 3 }, { 1, 1, 1 }, 0, 3.0, 0 },
    { 3, { 6, 5, 4 }, { 0, 0, 0 }, 0, 2.0, 0 },
    { 3, { 150, 3, 3 }, { 1, 1, 0 }, 0, 1.0, 3 },
    { 3, { 4, 5, 6 }, { 0, 1, 1 }, 0, 2.0, 0 },
    { 3, { 7, 3, 5 }, { 1, 0, 1 }, 0, 2.0, 2 },
    { 3, { 64, 3, 4 }, { 1, 1, 1 }, 0, 1.0, 0 },
    { 2, { 29, 5 }, { 0, 1 }, 0, 2.0, 1 },
    /* TSC */
    { 1, { 150 }, { 1 }, 1, 3.0, 0 },
    { 1, { 150 }, { 0 }, 1, 3.0, 2 },
    { 1, { 5 }, { 1 }, 1, 4.0, 0 },
    { 1, { 2 }, { 0 }, 1, 5.0, 0 },
    { 2, { 150, 5 }, { 1, 1 }, 1, 1.0, 0 },
    { 2, { 5, 5 }, { 1, 1 }, 1, 4.0, 0 },
    { 2, { 7, 12 }, { 0, 1 }, 1, 2.0, 1 },
    { 2, { 6, 9 }, { 1, 0 }, 1, 2.0, 0 },
    { 3, { 5, 5, 5 }, { 1, 1, 1 }, 1, 2.0, 0 },
    { 3, { 4, 3, 5 }, { 0, 0, 0 }, 1, 2.0, 0 },
    { 3, { 150, 5, 5 }, { 1, 0, 1 }, 1, 0.5, 5 },
    { 3, { 5, 6, 7 }, { 1, 0, 1 }, 1, 2.0, 3 },
    { 3, { 64, 5, 5 }, { 1, 1, 1 }, 1, 0.5, 3 },
    { 3, { 32, 5, 6 }, { 1, 1, 0 }, 1, 1.0, 0 },
    { 2, { 61, 6 }, { 0, 1 }, 1, 2.0, 0 },
};

int main(int argc, char **argv)
{
    const uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : test_seed();
    printf("# seed %llu\n", (unsigned long long)seed);
    int fails = 0, index = 0;
    for (const spec &s : cases)
        fails += run_case(s, seed * 1000003u + (uint64_t)(6 * index++));
    printf("# %d emulated launches, %d not bitwise equal to the reference\n", launches, fails);
    return fails != 0;
}
