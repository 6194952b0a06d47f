/* The GPU pair kernels (backends/gpu/pairs_gpu.inc) run on the CPU against
 * the reference backend's partile_pairs, bit for bit: k_pairs_naive,
 * k_pairs_aism (all-in-sm: its staged path with both walks of a target's
 * rows, as one sequence and row by row, and the unstaged fallback of a
 * sub-box denser than its staged capacity), k_pairs_pencil<…, false>
 * (x-pencil) and k_pairs_pencil<…, true> (x-pencil-reg), FP64 and FP32,
 * LJ (shifted: FP64 only) and SPH density, launched with the geometry of the
 * library's own host side (backends/gpu/pairs_geometry.h, CUDA's shared
 * memory budget). The device part of pairs_gpu.inc, cut at its host-side
 * marker by tests/device_part.awk, compiles as host C++ with the shims of
 * tests/emulate_gpu.h (a pthread per GPU thread, warp shuffles through
 * per-warp barriers). The dynamic shared memory (`extern __shared__ double
 * pairs_smem[]`) is a static array filled with a NaN before each launch
 * (so that reading what was not staged shows) and checked after it:
 * nothing written past the launch's bytes.
 * Cases: 1-3 dimensions, periodic and open boxes, odd grids at about 0.4,
 * 3 and 25 particles per cell (some periodic coordinates boxes away), one
 * particle, a lattice with neighbours at exactly the cutoff, and a cluster
 * cell far denser than all-in-sm's staged capacity (the test checks that
 * some block falls back). Seed: the time, printed; give it as the argument
 * to rerun a failure (and a case's index as the second, to run only it). */
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "emulate_gpu.h"
#include "inside_as_float.h"

EMU_DEVICE_CODE_BEGIN
/* gpu_common's cut file closes its include guard, so the full file that
 * pairs_gpu.inc names is skipped */
#include "gpu_common_device.inc"
#include "pairs_gpu_device.inc"
EMU_DEVICE_CODE_END

#include "backends/gpu/pairs_geometry.h"

/* ---- dynamic shared memory ---- */

/* dialect.h's CUDA PARTILE_MAX_DYNAMIC_SHARED less the static arrays, as
 * pairs_gpu.inc's PAIRS_DYNAMIC_MAX */
static const long long DYNAMIC_MAX = 160 * 1024 - PAIRS_STATIC_SHARED;
static const int GUARD = 256; /* doubles past the largest launch, checked too */
__attribute__((aligned(16))) double pairs_smem[DYNAMIC_MAX / 8 + GUARD];
/* a quiet NaN as a double and as both of its floats */
static const uint64_t JUNK = 0x7ff8beef7ff8deadull;

static void smem_fill()
{
    for (double &d : pairs_smem)
        memcpy(&d, &JUNK, 8);
}
/* Bytes at or past `used` that were written. */
static long long smem_overrun(size_t used)
{
    const unsigned char *b = (const unsigned char *)pairs_smem, *j = (const unsigned char *)&JUNK;
    long long bad = 0;
    for (size_t i = used; i < sizeof pairs_smem; i++)
        bad += b[i] != j[i % 8];
    return bad;
}

/* ---- launches (pairs_launch's, through pairs_geometry.h) ---- */

/* The strategies' names, and one more: all-in-sm with its other walk of
 * the staged rows (k_pairs_aism<…, FLAT>: the library picks one by the
 * density, pairs_aism_flat; both run here on every case). */
static const int AISM_OTHER_WALK = PARTILE_PAIRS_X_PENCIL_REG + 1;
static const char *const strategy_name[] = { "auto", "naive", "all-in-sm", "x-pencil",
                                             "x-pencil-reg", "all-in-sm (other walk)" };

struct launched {
    unsigned blocks;
    size_t smem;
    long long overrun;
    int unstaged; /* all-in-sm blocks whose halo box holds more than cap */
};

/* The all-in-sm blocks that read their sources from global memory: the
 * kernel's staged total (its local cells' counts, wrapped cells counted
 * where they appear) above P.cap. */
static int aism_unstaged(const pairs_dev &P)
{
    int unstaged = 0;
    const int hw[3] = { 1, P.dim > 1, P.dim > 2 };
    for (long long b = 0; b < P.nb[0] * P.nb[1] * P.nb[2]; b++) {
        const long long bq[3] = { b % P.nb[0], (b / P.nb[0]) % P.nb[1], b / (P.nb[0] * P.nb[1]) };
        long long lo[3], hi[3];
        for (int a = 0; a < 3; a++) {
            lo[a] = bq[a] * P.side[a] - hw[a];
            hi[a] = std::min(bq[a] * P.side[a] + P.side[a], P.cells[a]) + hw[a];
        }
        long long total = 0;
        for (long long k2 = lo[2]; k2 < hi[2]; k2++)
            for (long long k1 = lo[1]; k1 < hi[1]; k1++)
                for (long long k0 = lo[0]; k0 < hi[0]; k0++) {
                    const long long w0 = pairs_wrap(P, 0, k0), w1 = pairs_wrap(P, 1, k1),
                                    w2 = pairs_wrap(P, 2, k2);
                    if (w0 < 0 || w1 < 0 || w2 < 0)
                        continue;
                    const long long c = w0 + P.cells[0] * (w1 + P.cells[1] * w2);
                    total += P.off[c + 1] - P.off[c];
                }
        unstaged += total > P.cap;
    }
    return unstaged;
}

template <typename T, bool LJ> static launched run_kernel(pairs_dev P, int strategy, long long ncells)
{
    launched L = { 0, 0, 0, 0 };
    const double ppc = (double)P.n / (double)ncells;
    const size_t esz = sizeof(T);
    smem_fill();
    if (strategy == PARTILE_PAIRS_NAIVE) {
        /* grid_for(n, sms): one thread per particle (fewer than 32 blocks per SM here) */
        L.blocks = (unsigned)((P.n + SORT_THREADS - 1) / SORT_THREADS);
        if (L.blocks < 1)
            L.blocks = 1;
        launch(L.blocks, PAIRS_THREADS, [&] { k_pairs_naive<T, LJ>(P); });
    } else if (strategy == PARTILE_PAIRS_ALL_IN_SM || strategy == AISM_OTHER_WALK) {
        /* the H200's budget (228 KiB per SM) with one SM, so that the
         * small grids here take the grown sub-boxes too */
        const int flat = pairs_aism_flat(ppc) == (strategy == PARTILE_PAIRS_ALL_IN_SM);
        const pairs_geometry G = pairs_aism_geometry(P.dim, P.cells, ppc, pairs_aism_slot(esz, flat), DYNAMIC_MAX,
                                                     pairs_aism_block_budget(228 * 1024),
                                                     PAIRS_AISM_BLOCKS_PER_SM * 1);
        pairs_set_geometry(&P, G);
        L.blocks = pairs_blocks(G.blocks);
        L.smem = G.smem;
        L.unstaged = aism_unstaged(P);
        if ((long long)G.smem > DYNAMIC_MAX) {
            printf("all-in-sm asks %zu bytes of dynamic shared memory\n", G.smem);
            exit(1);
        }
        if (flat)
            launch(L.blocks, PAIRS_THREADS, [&] { k_pairs_aism<T, LJ, true>(P); });
        else
            launch(L.blocks, PAIRS_THREADS, [&] { k_pairs_aism<T, LJ, false>(P); });
    } else {
        const int reg = strategy == PARTILE_PAIRS_X_PENCIL_REG;
        const pairs_geometry G = pairs_pencil_geometry(reg, P.cells, ppc, esz, DYNAMIC_MAX);
        pairs_set_geometry(&P, G);
        L.blocks = pairs_blocks(G.blocks);
        L.smem = G.smem;
        if ((long long)G.smem > DYNAMIC_MAX) {
            printf("x-pencil asks %zu bytes of dynamic shared memory\n", G.smem);
            exit(1);
        }
        if (reg)
            launch(L.blocks, PAIRS_THREADS, [&] { k_pairs_pencil<T, LJ, true>(P); });
        else
            launch(L.blocks, PAIRS_THREADS, [&] { k_pairs_pencil<T, LJ, false>(P); });
    }
    L.overrun = smem_overrun(L.smem);
    return L;
}

/* ---- cases ---- */

enum kind { RANDOM, ONE, LATTICE, CLUSTER };

struct spec {
    int dim;
    int64_t cells[3];
    int periodic;
    kind k;
    double per_cell; /* RANDOM, CLUSTER: background particles per cell */
    int cluster;     /* CLUSTER: particles in one cell */
    int inside;      /* RANDOM: no position boxes away on a periodic axis */
};

/* Positions (FP64, SoA of 3 axes; unused axes 0). */
static std::vector<double> positions(const spec &s, const partile_grid_t &g, int64_t ncells,
                                     size_t *n)
{
    std::vector<double> x;
    if (s.k == ONE) {
        *n = 1;
        x.assign(3, 0.0);
        for (int a = 0; a < s.dim; a++)
            x[a] = g.lower[a] + 0.37 * (double)g.cells[a] * g.spacing[a];
        return x;
    }
    if (s.k == LATTICE) {
        /* step = cutoff = 0.125 on every axis, from lower + 1/16: exact in
         * binary, neighbours at exactly r_c (left out), across periodic x
         * faces too (x cells are 0.125 wide) */
        long long m[3] = { 1, 1, 1 };
        for (int a = 0; a < s.dim; a++)
            m[a] = (long long)ceil(((double)g.cells[a] * g.spacing[a] - 0.0625) / 0.125);
        *n = (size_t)(m[0] * m[1] * m[2]);
        x.assign(3 * *n, 0.0);
        for (size_t i = 0; i < *n; i++) {
            size_t rest = i;
            for (int a = 0; a < s.dim; a++) {
                x[a * *n + i] = g.lower[a] + 0.0625 + 0.125 * (double)(rest % m[a]);
                rest /= m[a];
            }
        }
        return x;
    }
    const size_t nb = (size_t)(s.per_cell * (double)ncells + 0.5);
    *n = nb + (s.k == CLUSTER ? (size_t)s.cluster : 0);
    x.assign(3 * *n, 0.0);
    for (int a = 0; a < s.dim; a++) {
        const double L = (double)g.cells[a] * g.spacing[a];
        for (size_t p = 0; p < *n; p++) {
            double c;
            if (p < nb) {
                c = g.lower[a] + uniform() * L * (1.0 - 1e-12);
                if (!g.periodic[a]) /* the FP32 set's particles inside too */
                    c = su_inside_as_float(c, g.lower[a], g.lower[a] + L);
                if (g.periodic[a] && !s.inside && p % 7 == 0) /* a few boxes away */
                    c += (double)((int64_t)(next() % 7) - 3) * L;
            } else { /* the cluster: cell 1 along each axis */
                c = g.lower[a] + g.spacing[a] * (1.0 + 0.999 * uniform());
            }
            x[a * *n + p] = c;
        }
    }
    return x;
}

/* One grid, particle set and precision: every interaction and strategy.
 * Returns the failures. */
template <typename T>
static int run_set(partile_context_t *ref, const spec &s, const partile_grid_t &g, int64_t ncells,
                   size_t n, const std::vector<double> &x64, int *unstaged_seen)
{
    const int f32 = sizeof(T) == 4;
    const size_t n1 = n ? n : 1;
    /* the reference's sort of the positions in T */
    std::vector<T> raw(3 * n1), xs(3 * n1, (T)0);
    for (size_t i = 0; i < 3 * n; i++)
        raw[i] = (T)x64[i];
    std::vector<int64_t> off(ncells + 1), perm(n1);
    const partile_dtype_t dt = f32 ? PARTILE_DTYPE_FLOAT32 : PARTILE_DTYPE_FLOAT64;
    partile_vectors_t pos = { dt, { 0 } }, spos = { dt, { 0 } };
    for (int a = 0; a < g.dim; a++)
        pos.axis[a] = raw.data() + a * n;
    must(partile_sort(ref, &g, n, &pos, off.data(), perm.data(), NULL, NULL), "sort");
    for (int a = 0; a < g.dim; a++) {
        for (size_t i = 0; i < n; i++)
            xs[a * n + i] = raw[a * n + perm[i]];
        spos.axis[a] = xs.data() + a * n;
    }

    int fails = 0;
    const double rc = 0.125; /* the x cells' width */
    for (int inter = 0; inter < 3; inter++) {
        if (inter == 1 && f32)
            continue; /* the shift is host arithmetic: FP64 checks the kernels' use of it */
        partile_pair_params_t pp;
        memset(&pp, 0, sizeof pp);
        pp.cutoff = rc;
        if (inter < 2) {
            pp.interaction = PARTILE_PAIRS_LJ;
            pp.epsilon = 1.25;
            /* FP32: a smaller σ keeps (σ/r)^12 of close random pairs in range */
            pp.sigma = f32 ? 0.004 : 0.03;
            pp.shifted = inter;
        } else {
            pp.interaction = PARTILE_PAIRS_SPH_DENSITY;
            pp.h = rc / 2;
            pp.mass = 1.3;
        }
        const int lj = inter < 2;
        const int nout = (lj ? g.dim : 0) + 1; /* force axes, then the scalar */
        /* the reference, outputs as [axis][particle], the scalar last */
        std::vector<T> want(nout * n1), got(nout * n1);
        partile_vectors_t fw = { dt, { 0 } }, fg = { dt, { 0 } };
        for (int a = 0; lj && a < g.dim; a++) {
            fw.axis[a] = want.data() + a * n;
            fg.axis[a] = got.data() + a * n;
        }
        T *sw = want.data() + (nout - 1) * n, *sg = got.data() + (nout - 1) * n;
        int64_t bad = -1;
        must(partile_pairs(ref, &g, &pp, n, &spos, off.data(), lj ? &fw : NULL, sw, NULL, &bad),
             "reference pairs");

        /* pairs_dev as gpu_pairs builds it */
        pairs_dev P;
        memset(&P, 0, sizeof P);
        P.grid = g;
        P.pos = spos;
        P.dim = g.dim;
        P.n = (long long)n;
        P.off = off.data();
        P.s = sg;
        for (int a = 0; a < 3; a++) {
            P.cells[a] = a < g.dim ? g.cells[a] : 1;
            P.periodic[a] = a < g.dim && g.periodic[a];
            P.x[a] = a < g.dim ? spos.axis[a] : NULL;
            P.f[a] = lj && a < g.dim ? (void *)fg.axis[a] : NULL;
            P.side[a] = 1;
            P.nb[a] = 1;
        }
        pairs_constants<T>(&P, &g, &pp);

        for (int strategy = PARTILE_PAIRS_NAIVE; strategy <= AISM_OTHER_WALK; strategy++) {
            memset(got.data(), 0xff, got.size() * sizeof(T)); /* NaN: unwritten shows */
            const int divergent0 = divergent;
            timespec w0, w1;
            clock_gettime(CLOCK_MONOTONIC, &w0);
            const launched L = lj ? run_kernel<T, true>(P, strategy, ncells)
                                  : run_kernel<T, false>(P, strategy, ncells);
            clock_gettime(CLOCK_MONOTONIC, &w1);
            const double secs = (double)(w1.tv_sec - w0.tv_sec) + 1e-9 * (double)(w1.tv_nsec - w0.tv_nsec);
            if (strategy == PARTILE_PAIRS_ALL_IN_SM || strategy == AISM_OTHER_WALK)
                *unstaged_seen += L.unstaged;
            long long differ = 0, first = -1;
            for (size_t i = 0; i < (size_t)nout * n; i++)
                if (memcmp(&want[i], &got[i], sizeof(T)) != 0 && differ++ == 0)
                    first = (long long)i;
            char what[240];
            snprintf(what, sizeof what,
                     "%s %s %s %dd cells %lldx%lldx%lld periodic %d n %zu (%s): %u blocks, %zu "
                     "shared bytes%s",
                     strategy_name[strategy], f32 ? "FP32" : "FP64",
                     inter == 2 ? "SPH" : inter ? "LJ shifted" : "LJ", g.dim,
                     (long long)g.cells[0], (long long)g.cells[1], (long long)g.cells[2],
                     s.periodic, n,
                     s.k == RANDOM    ? "random"
                     : s.k == ONE     ? "one particle"
                     : s.k == LATTICE ? "lattice at the cutoff"
                                      : "cluster",
                     L.blocks, L.smem, L.unstaged ? " (some unstaged)" : "");
            if (differ || L.overrun || divergent != divergent0) {
                fails++;
                printf("FAIL %s: %lld of %lld values differ", what, differ, (long long)nout * (long long)n);
                if (differ) {
                    const long long out = first / (long long)n, i = first % (long long)n;
                    printf(", first particle %lld %s: want %.17g (%a) got %.17g (%a)", i,
                           out == nout - 1 ? (lj ? "energy" : "density")
                           : out == 0      ? "force x"
                           : out == 1      ? "force y"
                                           : "force z",
                           (double)want[first], (double)want[first], (double)got[first],
                           (double)got[first]);
                }
                printf("; %lld shared bytes written past the launch's; %d divergent blocks\n",
                       L.overrun, divergent - divergent0);
            } else {
                printf("ok %s, %.3f s\n", what, secs);
            }
        }
        /* a closed gate (the check flagged something; the kernel runs
         * before the host has read its words): nothing written */
        const ull closed[3] = { NO_BAD, 0, NO_BAD };
        pairs_dev PG = P;
        PG.gate = closed;
        for (int strategy = PARTILE_PAIRS_NAIVE; strategy <= AISM_OTHER_WALK; strategy++) {
            memset(got.data(), 0xab, got.size() * sizeof(T));
            if (lj)
                run_kernel<T, true>(PG, strategy, ncells);
            else
                run_kernel<T, false>(PG, strategy, ncells);
            const unsigned char *b = (const unsigned char *)got.data();
            size_t written = 0;
            for (size_t i = 0; i < got.size() * sizeof(T); i++)
                written += b[i] != 0xab;
            if (written) {
                fails++;
                printf("FAIL %s %s: %zu bytes written behind a closed gate\n",
                       strategy_name[strategy], f32 ? "FP32" : "FP64", written);
            }
        }
    }
    return fails;
}

static int run_case(partile_context_t *ref, const spec &s, uint64_t seed, int *unstaged_seen)
{
    rng_state = seed;
    partile_grid_t g;
    const int per[3] = { s.periodic, s.periodic, s.periodic };
    const int64_t ncells = emu_grid(&g, s.dim, s.cells, per);
    size_t n;
    const std::vector<double> x = positions(s, g, ncells, &n);
    return run_set<double>(ref, s, g, ncells, n, x, unstaged_seen) +
           run_set<float>(ref, s, g, ncells, n, x, unstaged_seen);
}

/* Pencil launches cost a block per (y, z) row and barriers per neighbour
 * row, so the 3-D grids are narrow in y and z. */
static const spec cases[] = {
    /* random, odd grids: sparse, moderate, dense */
    { 1, { 23, 1, 1 }, 0, RANDOM, 0.4, 0, 0 },
    { 1, { 23, 1, 1 }, 1, RANDOM, 3.0, 0, 0 },
    { 1, { 9, 1, 1 }, 1, RANDOM, 25.0, 0, 0 },
    { 1, { 9, 1, 1 }, 0, RANDOM, 25.0, 0, 0 },
    /* sub-boxes wider than 32 cells (test_pairs_gpu's grids) */
    { 1, { 301, 1, 1 }, 1, RANDOM, 0.4, 0, 1 },
    { 2, { 37, 23, 1 }, 1, RANDOM, 0.4, 0, 1 },
    { 2, { 7, 5, 1 }, 1, RANDOM, 0.4, 0, 0 },
    { 2, { 7, 5, 1 }, 0, RANDOM, 3.0, 0, 0 },
    { 2, { 7, 5, 1 }, 1, RANDOM, 25.0, 0, 0 },
    { 3, { 7, 3, 3 }, 0, RANDOM, 0.4, 0, 0 },
    { 3, { 7, 3, 3 }, 1, RANDOM, 3.0, 0, 0 },
    { 3, { 5, 3, 3 }, 1, RANDOM, 25.0, 0, 0 },
    { 3, { 3, 3, 2 }, 0, RANDOM, 25.0, 0, 0 },
    /* periodic, with all-in-sm blocks whose halo does not wrap (all positions in the box or not) */
    { 2, { 9, 10, 1 }, 1, RANDOM, 25.0, 0, 0 },
    { 2, { 9, 10, 1 }, 1, RANDOM, 25.0, 0, 1 },
    { 3, { 6, 5, 5 }, 1, RANDOM, 25.0, 0, 1 },
    /* one particle */
    { 1, { 5, 1, 1 }, 1, ONE, 0, 0, 0 },
    { 2, { 5, 3, 1 }, 0, ONE, 0, 0, 0 },
    { 3, { 3, 3, 3 }, 1, ONE, 0, 0, 0 },
    /* neighbours at exactly the cutoff */
    { 1, { 11, 1, 1 }, 1, LATTICE, 0, 0, 0 },
    { 2, { 7, 5, 1 }, 0, LATTICE, 0, 0, 0 },
    { 2, { 7, 5, 1 }, 1, LATTICE, 0, 0, 0 },
    { 3, { 5, 3, 3 }, 1, LATTICE, 0, 0, 0 },
    /* a cell far denser than all-in-sm's staged capacity */
    { 1, { 60, 1, 1 }, 1, CLUSTER, 25.0, 2000, 0 },
    { 2, { 7, 5, 1 }, 0, CLUSTER, 25.0, 1500, 0 },
    { 3, { 7, 4, 4 }, 1, CLUSTER, 0.4, 2500, 0 },
};

/* pairs_div against division over the device helper's whole range: for
 * d < 2^11 every n < 2^16; for larger d the n where an estimate from above
 * would show, each multiple of d and the number before it. */
static int check_divisor(void)
{
    int fails = 0;
    for (int d = 1; d < 65536; d++) {
        const pairs_divisor v = pairs_divisor_of(d);
        for (int n = 0; n < 65536; n += d < 2048 ? 1 : (n % d == 0 ? d - 1 : 1))
            if (pairs_div(n, v) != n / d && fails++ < 5)
                printf("FAIL pairs_div(%d, %d) = %d, not %d\n", n, d, pairs_div(n, v), n / d);
    }
    return fails;
}

/* pairs_aism_geometry over densities far beyond the cases above (up to
 * 10⁴ per cell, where the ~512-target side rounds to 0) and budgets (none,
 * the H200's, one too small for any room): a side of at least 1 within the
 * grid, staged room for at least the mean or the dynamic limit, blocks
 * covering the grid. */
static int check_geometry(void)
{
    int fails = 0;
    static const double ppcs[] = { 1e-3, 0.4, 1, 3, 8, 25, 100, 600, 1e4 };
    static const long long budgets[] = { 0, 40 * 1024, 2 * 1024 };
    static const long long grids[4][3] = { { 0 }, { 301, 1, 1 }, { 37, 23, 1 }, { 13, 11, 9 } };
    for (int dim = 1; dim <= 3; dim++)
        for (double ppc : ppcs)
            for (long long budget : budgets)
                for (long long slot : { 12LL, 16LL, 24LL })
                    for (long long wave : { 4LL, 528LL }) {
                        const pairs_geometry G =
                            pairs_aism_geometry(dim, grids[dim], ppc, slot, DYNAMIC_MAX, budget, wave);
                        long long local = 1, covered = 1;
                        bool ok = G.cap >= 1 && (long long)G.smem <= DYNAMIC_MAX;
                        for (int a = 0; a < 3; a++) {
                            const long long cells = a < dim ? grids[dim][a] : 1;
                            ok = ok && G.side[a] >= 1 && G.side[a] <= cells && G.nb[a] * G.side[a] >= cells;
                            local *= G.side[a] + (a < dim ? 2 : 0);
                            covered *= G.nb[a];
                        }
                        const long long most = DYNAMIC_MAX / slot;
                        ok = ok && covered == G.blocks &&
                             (G.cap >= (long long)(ppc * (double)local) || G.cap == most);
                        if (!ok && fails++ < 5)
                            printf("FAIL geometry %dd ppc %g budget %lld slot %lld wave %lld: side %d, "
                                   "cap %d, %zu bytes\n",
                                   dim, ppc, budget, slot, wave, G.side[0], G.cap, G.smem);
                    }
    return fails;
}

int main(int argc, char **argv)
{
    const uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : test_seed();
    const long only = argc > 2 ? strtol(argv[2], NULL, 0) : -1; /* one case, by index */
    printf("seed %llu\n", (unsigned long long)seed);
    partile_context_t *ref = NULL;
    must(partile_context_create("reference", 0, &ref), "reference context");
    int fails = check_divisor() + check_geometry(), cluster_unstaged = 0;
    const clock_t t0 = clock();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (only >= 0 && (long)c != only)
            continue;
        int unstaged = 0;
        fails += run_case(ref, cases[c], seed + c, &unstaged);
        if (cases[c].k == CLUSTER) {
            cluster_unstaged += unstaged;
            if (!unstaged) {
                printf("FAIL cluster case %zu: no all-in-sm block fell back to global memory\n", c);
                fails++;
            }
        }
    }
    must(partile_context_destroy(ref), "context destroy");
    printf("%d failures; %lld barriers; %d unstaged all-in-sm blocks in the clusters; %.1f s CPU\n",
           fails, block_syncs, cluster_unstaged, (double)(clock() - t0) / CLOCKS_PER_SEC);
    return fails ? 1 : 0;
}
