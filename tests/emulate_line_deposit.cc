/* The GPU sorted deposit k_deposit_lines (backends/gpu/deposit_gpu.inc) run
 * on the CPU against the reference backend's sorted deposit, bit for bit, so
 * that its summation order is checked where there is no GPU; the same for
 * node TSC's k_deposit_tiles, the per-point deposit k_deposit_points (the
 * cell-centred one), the generic k_deposit_sorted, and the gather
 * k_gather_nodes; the unsorted k_deposit_atomic_nodes (atomics:
 * any order) within a bound of the rounding. The device
 * parts of the GPU sources (cut at their host-side markers by
 * tests/device_part.awk) compile here as host C++: a thread per GPU thread
 * of a block, __syncthreads a barrier, __shared__ arrays static, the blocks
 * of a launch in turn. The fractions come from the real k_check_particles;
 * its instantiation without a cell list flags what the reference's check
 * flags on the faces of the domain (check_without_list).
 * CIC node-centred for the line kernel (its only case), TSC node-centred
 * for the tile kernel, CIC and TSC, node-
 * and cell-centred, for the others;
 * ADD = 1 (the deposit) and ADD = 0 (the apply's σ·(0 + F)); grids of 1-3
 * dimensions, periodic or
 * not, rows longer than one staged chunk, empty cells, particles boxes away.
 * Seed: the time, printed; give it as the argument to rerun a failure. */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "domain_faces.h"
#include "emulate_gpu.h"

EMU_DEVICE_CODE_BEGIN
/* each cut file closes its include guard, so the full files named by the
 * next one's #include are skipped */
#include "gpu_common_device.inc"
#include "transfer_common_device.inc"
#include "deposit_gpu_device.inc"
EMU_DEVICE_CODE_END

/* The dynamic shared memory of k_deposit_lines and k_deposit_tiles
 * (`extern __shared__ double line_smem[]`, a block-scope extern declaration
 * here): the larger of their largest launches (lines: PER 4 x 2 batches of
 * 128 threads, 2 weights and 3 components per particle; tiles: PER 4 of 128
 * threads, 9 weights, 3 components and a byte), and a guard. Filled with a
 * quiet NaN before each launch; words at or past the launch's
 * line_shared_bytes or tile_shared_bytes that changed are counted in
 * smem_overruns. */
static constexpr size_t LINE_SMEM_LINES = 4 * 2 * 128 * (2 + 3),
                        LINE_SMEM_TILES = 4 * 128 * (9 + 3) + 4 * 128 / 8;
static constexpr size_t LINE_SMEM =
    (LINE_SMEM_LINES > LINE_SMEM_TILES ? LINE_SMEM_LINES : LINE_SMEM_TILES) + 256;
double line_smem[LINE_SMEM];
static const uint64_t LINE_JUNK = 0x7ff8dead0000beefull;
static long long smem_overruns;
static int corner_cases; /* runs of the by-cell corner passes */
static int apply_corner_runs; /* runs of the apply's corner passes (V_p formed in the first) */

/* Before a launch: every word of line_smem the junk NaN. */
static void smem_poison()
{
    for (double &d : line_smem)
        memcpy(&d, &LINE_JUNK, 8);
}

/* After a launch of `bytes` of dynamic shared memory: the words past them
 * that changed. */
static void smem_count_overruns(size_t bytes)
{
    for (size_t i = (bytes + 7) / 8; i < LINE_SMEM; i++)
        smem_overruns += memcmp(&line_smem[i], &LINE_JUNK, 8) != 0;
}

/* ---- cases ---- */

enum {
    BOXES_AWAY = 1, /* every 7th periodic coordinate a few boxes away */
    LOW_HALF = 2,   /* x in the lower half only: empty cells above */
    ON_NODES = 4,   /* every 5th coordinate on a grid line: fraction 0 */
    ONE_CELL = 8,   /* all particles in one or two cells */
    FAR_AWAY = 16,  /* every 11th periodic coordinate up to 1000 boxes away */
    /* lower 0, every 9th periodic coordinate just below it (q in (−1e-16, 0):
     * cell-centred s = q − ½ rounds to −½, so a TSC particle's first point is
     * its own cell, wrapped, not the one below; its last weight is 0), and
     * every 9th particle's first value +inf, so that a kernel which skips a
     * weight-0 term differs (0 · inf is NaN) */
    JUST_BELOW = 32,
};

struct spec {
    int dim;
    int64_t cells[3];
    int periodic[3];
    int W, M;
    double per_cell; /* particles per cell */
    int mode;
    unsigned blocks; /* 0: one per line (as launched), else fewer: the grid-stride loop */
};

template <int M, int PER, int BATCHES>
static void run_lines(int add, unsigned blocks, int threads, int xchunks, long long lines,
                      const transfer_args &t, const int64_t *off, const double *frac,
                      long long n, const double *v, double sigma, double *y)
{
    smem_poison();
    launch(blocks, (unsigned)threads, [&] {
        if (add)
            k_deposit_lines<double, M, 1, PER, BATCHES>(lines, xchunks, t, off, frac, n, v, 1.0,
                                                        y);
        else
            k_deposit_lines<double, M, 0, PER, BATCHES>(lines, xchunks, t, off, frac, n, v, sigma,
                                                        y);
    });
    smem_count_overruns(line_shared_bytes(PER, BATCHES, threads, M, sizeof(double)));
}

/* k_deposit_tiles (node TSC), launched as the library does at `ppc`
 * particles per cell (its tile shape: planes, or bricks on 3-D grids from
 * TSC_BRICK_PPC). */
template <int M, int PER>
static void run_tiles(int add, double ppc, unsigned max_blocks, const transfer_args &t,
                      const int64_t *off, const double *frac, long long n, const double *v,
                      double sigma, double *y)
{
    const tsc_tiles tl = tile_launch(&t.grid, ppc);
    const unsigned blocks = max_blocks && max_blocks < tl.tiles ? max_blocks : (unsigned)tl.tiles;
    smem_poison();
    launch(blocks, (unsigned)(tl.bx * tl.by * tl.bz), [&] {
        if (add)
            k_deposit_tiles<double, M, 1, PER>(tl, t, off, frac, n, v, 1.0, y);
        else
            k_deposit_tiles<double, M, 0, PER>(tl, t, off, frac, n, v, sigma, y);
    });
    smem_count_overruns(tile_shared_bytes(PER, tl.bx * tl.by * tl.bz, M, sizeof(double)));
}

/* k_deposit_points, a thread per grid point: three blocks of 64 threads, so
 * that its grid-stride loop visits every point. */
template <int SHAPE, int CENT>
static void run_points(int M, int add, long long points, const transfer_args &t,
                       const int64_t *off, const double *frac, const unsigned char *offs,
                       long long n, const double *v, double sigma, double *y)
{
    launch(3, 64, [&] {
        if (M == 1 && add)
            k_deposit_points<double, 1, SHAPE, CENT, 1>(points, t, off, frac, offs, v, 1.0, n, y);
        else if (M == 1)
            k_deposit_points<double, 1, SHAPE, CENT, 0>(points, t, off, frac, offs, v, sigma, n,
                                                        y);
        else if (add)
            k_deposit_points<double, 3, SHAPE, CENT, 1>(points, t, off, frac, offs, v, 1.0, n, y);
        else
            k_deposit_points<double, 3, SHAPE, CENT, 0>(points, t, off, frac, offs, v, sigma, n,
                                                        y);
    });
}

static void run_points_any(int shape, int cent, int M, int add, long long points,
                           const transfer_args &t, const int64_t *off, const double *frac,
                           const unsigned char *offs, long long n, const double *v, double sigma,
                           double *y)
{
    const int cic = shape == PARTILE_SHAPE_CIC, node = cent == PARTILE_CENTERING_NODE;
    if (cic && node)
        run_points<PARTILE_SHAPE_CIC, PARTILE_CENTERING_NODE>(M, add, points, t, off, frac, offs,
                                                              n, v, sigma, y);
    else if (node)
        run_points<PARTILE_SHAPE_TSC, PARTILE_CENTERING_NODE>(M, add, points, t, off, frac, offs,
                                                              n, v, sigma, y);
    else if (cic)
        run_points<PARTILE_SHAPE_CIC, PARTILE_CENTERING_CELL>(M, add, points, t, off, frac, offs,
                                                              n, v, sigma, y);
    else
        run_points<PARTILE_SHAPE_TSC, PARTILE_CENTERING_CELL>(M, add, points, t, off, frac, offs,
                                                              n, v, sigma, y);
}

/* k_check_particles without a cell list (LIST 0: the gathers' and the
 * unsorted deposit's check, which decides most positions by a product,
 * partile_position_status) against the reference's check (its gather's
 * status and particle): the case's positions; particle n/3 on the first
 * double past axis a's upper face (non-periodic) or 2^53 cells away
 * (periodic), out of the domain, and particle 2n/3 NaN; particle n/3 on
 * the last double below that face instead (inside); and on the double
 * below the lower face (out of the domain unless periodic). */
static int check_without_list(const partile_grid_t &g, const partile_transfer_t &tr,
                              const std::vector<double> &xs, size_t n, int node, int a)
{
    if (n < 3)
        return 0;
    partile_context_t *ref = NULL;
    must(partile_context_create("reference", 0, &ref), "reference context");
    int64_t pts[3], total;
    must(partile_field_shape(&g, tr.centering, pts, &total), "field shape");
    std::vector<double> field(total * tr.components, 0.0), values(n * tr.components);
    const size_t p1 = n / 3, p2 = 2 * n / 3;
    const double lower = g.lower[a], h = g.spacing[a];
    double in, edge; /* the last double inside a non-periodic axis, the first out */
    domain_upper_face(lower, h, g.cells[a], &in, &edge);
    int fails = 0;
    for (int variant = 0; variant < 4; variant++) {
        std::vector<double> xb(xs);
        if (variant == 1) {
            xb[a * n + p1] = g.periodic[a] ? lower + 0x1p53 * h : edge;
            xb[((a + 1) % g.dim) * n + p2] = NAN;
        } else if (variant == 2) {
            xb[a * n + p1] = in; /* the last double inside */
            xb[((a + 1) % g.dim) * n + p2] = NAN;
        } else if (variant == 3) {
            xb[a * n + p1] = nextafter(lower, -INFINITY);
        }
        partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64,
                                  { xb.data(), xb.data() + n, xb.data() + 2 * n } };
        int64_t want_bad = -1, got_bad = -1;
        const int want = partile_gather(ref, &tr, n, &pos, field.data(), values.data(), &want_bad);
        const transfer_args t = make_transfer(&tr, &pos);
        std::vector<double> frac(3 * n);
        std::vector<unsigned char> offs(n);
        for (int cell_kernel = 0; cell_kernel < (node ? 1 : 2); cell_kernel++) {
            ull flags[2] = { NO_BAD, NO_BAD };
            launch(1, 32, [&] {
                if (cell_kernel) /* cell-centred: fractions and offsets too */
                    k_check_particles<1, 0>((long long)n, t, &flags[0], &flags[1], NULL, NULL,
                                            frac.data(), offs.data());
                else
                    k_check_particles<0, 0>((long long)n, t, &flags[0], &flags[1], NULL, NULL,
                                            NULL, NULL);
            });
            /* the word as check_status decodes it */
            got_bad = -1;
            const int got = bad_word_status(flags[0], &got_bad);
            if (got != want || (want && got_bad != want_bad) || flags[1] != NO_BAD) {
                printf("FAIL check without a cell list (CELL %d), axis %d, variant %d: status %d "
                       "particle %lld, the reference %d particle %lld\n",
                       cell_kernel, a, variant, got, (long long)got_bad, want, (long long)want_bad);
                fails++;
            }
        }
    }
    must(partile_context_destroy(ref), "context destroy");
    return fails;
}

/* One grid, centering and particle set; both ADD values. Returns the
 * failures. */
static int run_case(const spec &s, int cent, uint64_t seed)
{
    rng_state = seed;
    partile_grid_t g;
    const int64_t ncells = emu_grid(&g, s.dim, s.cells, s.periodic);
    if (s.mode & JUST_BELOW)
        for (int a = 0; a < 3; a++)
            g.lower[a] = 0.0;
    const partile_centering_t centering = (partile_centering_t)cent;
    const int node = cent == PARTILE_CENTERING_NODE;
    const int M = s.M;
    const size_t n = (size_t)(s.per_cell * (double)ncells + 0.5), n1 = n ? n : 1;
    std::vector<double> x(3 * n1);
    for (int a = 0; a < s.dim; a++)
        for (size_t p = 0; p < n; p++) {
            const double L = (double)g.cells[a] * g.spacing[a];
            double u = uniform();
            if ((s.mode & LOW_HALF) && a == 0)
                u *= 0.5;
            if (s.mode & ONE_CELL)
                u = (a == 0 ? 0.37 : 0.61) + 0.001 * u;
            double c = g.lower[a] + u * L * (1.0 - 1e-12);
            if ((s.mode & ON_NODES) && next() % 5 == 0)
                c = g.lower[a] + (double)(next() % (uint64_t)g.cells[a]) * g.spacing[a];
            if (g.periodic[a] && (s.mode & BOXES_AWAY) && p % 7 == 0)
                c += (double)((int64_t)(next() % 7) - 3) * L;
            if (g.periodic[a] && (s.mode & FAR_AWAY) && p % 11 == 0)
                c += (double)((int64_t)(next() % 2001) - 1000) * L;
            if (g.periodic[a] && (s.mode & JUST_BELOW) && p % 9 == 0)
                c = -(double)(1 + next() % 1000) * 1e-20;
            x[a * n + p] = c;
        }
    std::vector<double> values(n1 * M);
    for (double &v : values)
        v = 2 * uniform() - 1;
    if (s.mode & JUST_BELOW) /* weight-0 terms then show: 0 · inf is NaN */
        for (size_t p = 0; p < n; p += 9)
            values[p * M] = INFINITY;
    int64_t pts[3], total;
    must(partile_field_shape(&g, centering, pts, &total), "field shape");
    std::vector<double> y0(total * M);
    for (size_t i = 0; i < y0.size(); i++) /* some -0: y + 0 is +0 */
        y0[i] = i % 13 == 5 ? -0.0 : 2 * uniform() - 1;

    /* the reference: sort, permute, sorted deposit into y0 and into zeros */
    partile_context_t *ref = NULL;
    must(partile_context_create("reference", 0, &ref), "reference context");
    std::vector<int64_t> off(ncells + 1), perm(n1);
    std::vector<double> xs, vs(n1 * M);
    partile_vectors_t spos;
    emu_sort(ref, g, n, x, off, perm, xs, &spos);
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < M; j++)
            vs[i * M + j] = values[perm[i] * M + j];
    int64_t bad = -1;
    /* W 1: NGP, the generic kernels only */
    const partile_shape_t shape =
        s.W == 1 ? PARTILE_SHAPE_NGP : s.W == 2 ? PARTILE_SHAPE_CIC : PARTILE_SHAPE_TSC;
    const int fractions = s.W != 1;
    const char *shape_name = s.W == 1 ? "NGP" : s.W == 2 ? "CIC" : "TSC";
    partile_transfer_t tr = { &g, shape, centering, M, NULL, PARTILE_ORDER_BY_POINT };
    std::vector<double> added = y0, alone(total * M, 0.0);
    must(partile_deposit(ref, &tr, n, &spos, vs.data(), off.data(), added.data(), &bad),
         "reference deposit");
    must(partile_deposit(ref, &tr, n, &spos, vs.data(), off.data(), alone.data(), &bad),
         "reference deposit");
    /* the same deposit of |v|: the bound of the unsorted deposit's rounding */
    std::vector<double> vabs(n1 * M), alone_abs(total * M, 0.0);
    for (size_t i = 0; i < n1 * M; i++)
        vabs[i] = fabs(vs[i]);
    must(partile_deposit(ref, &tr, n, &spos, vabs.data(), off.data(), alone_abs.data(), &bad),
         "reference deposit");
    /* the by-cell order (PARTILE_ORDER_BY_CELL) into y0 */
    partile_transfer_t tr_cell = tr;
    tr_cell.order = PARTILE_ORDER_BY_CELL;
    std::vector<double> added_by_cell = y0, alone_by_cell(total * M, 0.0);
    must(partile_deposit(ref, &tr_cell, n, &spos, vs.data(), off.data(), added_by_cell.data(),
                         &bad),
         "reference deposit by cell");
    must(partile_deposit(ref, &tr_cell, n, &spos, vs.data(), off.data(), alone_by_cell.data(),
                         &bad),
         "reference deposit by cell");
    /* the matrix-free apply by cell (node CIC in 3-D, 1 or 3 components,
     * grids the mass matrix takes): the reference's y with ω from arrays
     * and from a B field */
    std::vector<double> ax, aq, aw, aB, want_apply[2];
    partile_mass_params_t mp;
    memset(&mp, 0, sizeof mp);
    int apply_cases = 0;
    if (s.W == 2 && node && s.dim == 3 && (M == 1 || M == 3)) {
        mp.grid = &g;
        mp.shape = PARTILE_SHAPE_CIC;
        mp.kind = M == 3 ? PARTILE_MASS_TENSOR : PARTILE_MASS_SCALAR;
        mp.sigma = 0.5 + uniform();
        mp.order = PARTILE_ORDER_BY_CELL;
        partile_mass_layout_t L;
        if (partile_mass_layout(&g, mp.shape, mp.kind, &L) == 0) {
            ax.resize(total * M), aq.resize(n1), aw.resize(3 * n1), aB.resize(total * 3);
            for (double &v : ax)
                v = 2 * uniform() - 1;
            for (double &v : aq)
                v = 0.5 + uniform();
            for (double &v : aw)
                v = 3 * uniform() - 1.5;
            for (double &v : aB)
                v = 4 * uniform() - 2;
            partile_vectors_t om = { PARTILE_DTYPE_FLOAT64,
                                     { aw.data(), aw.data() + n1, aw.data() + 2 * n1 } };
            apply_cases = M == 3 ? 2 : 1;
            for (int b = 0; b < apply_cases; b++) {
                want_apply[b].resize(total * M);
                mp.bfield = b ? aB.data() : NULL;
                mp.beta_over_c = b ? 0.7 : 0.0;
                must(partile_mass_apply_matfree(ref, &mp, n, &spos, off.data(), aq.data(),
                                                b ? NULL : &om, ax.data(), want_apply[b].data(),
                                                &bad),
                     "reference apply by cell");
            }
        }
    }
    std::vector<double> gathered(n1 * M); /* the reference gather of `added` */
    must(partile_gather(ref, &tr, n, &spos, added.data(), gathered.data(), &bad),
         "reference gather");
    must(partile_context_destroy(ref), "context destroy");

    /* the check pass: the fractions, and no particle flagged */
    const transfer_args t = make_transfer(&tr, &spos);
    std::vector<double> frac(3 * n1, NAN);
    std::vector<unsigned char> offs(n1, 0xee); /* cell-centred only */
    ull flags[3] = { NO_BAD, NO_BAD, NO_BAD };
    launch(1, 32, [&] {
        if (node)
            k_check_particles<0, 1>((long long)n, t, &flags[0], &flags[1], off.data(), &flags[2],
                                 fractions ? frac.data() : NULL, NULL);
        else
            k_check_particles<1, 1>((long long)n, t, &flags[0], &flags[1], off.data(), &flags[2],
                                 fractions ? frac.data() : NULL, offs.data());
    });
    if (flags[0] != NO_BAD || flags[1] != NO_BAD || flags[2] != NO_BAD) {
        printf("k_check_particles flagged %llx %llx %llx\n", flags[0], flags[1], flags[2]);
        exit(2);
    }
    int fails = check_without_list(g, tr, xs, n, node, (int)(seed % (uint64_t)s.dim));

    int by_points = 1; /* deposit_by_fractions: no cell of a point's window repeats */
    for (int a = 0; a < s.dim; a++)
        by_points &= fractions && (!g.periodic[a] || g.cells[a] >= (s.W == 4 ? 4 : node ? 2 : 3));
    int threads, xchunks;
    long long lines;
    line_launch(&g, &threads, &xchunks, &lines);
    const unsigned blocks = s.blocks && s.blocks < lines ? s.blocks : (unsigned)lines;
    for (int add = 1; add >= 0; add--) {
        const double sigma = 0.5 + uniform();
        /* each kernel's starting field: ADD = 0 overwrites */
        const std::vector<double> start = add ? y0 : std::vector<double>(total * M, NAN);
        std::vector<double> y = start, want(total * M);
        for (int64_t i = 0; i < total * M; i++)
            want[i] = add ? added[i] : sigma * (0.0 + alone[i]);
        const int divergent0 = divergent;
        const long long syncs0 = block_syncs;
        const long long nn = (long long)n;
        if (s.W != 2 || !node) /* the line kernel is node CIC only: the others check the rest */
            y = want;
        /* two of the chunk sizes the library launches (PER 4 x 2 batches for
         * dense rows, 1 x 1 for sparse ones), one per ADD so that every case
         * checks both; the third (4 x 1) below */
        else if (M == 1 && add)
            run_lines<1, 4, 2>(add, blocks, threads, xchunks, lines, t, off.data(), frac.data(),
                               nn, vs.data(), sigma, y.data());
        else if (M == 1)
            run_lines<1, 1, 1>(add, blocks, threads, xchunks, lines, t, off.data(), frac.data(),
                               nn, vs.data(), sigma, y.data());
        else if (add)
            run_lines<3, 4, 2>(add, blocks, threads, xchunks, lines, t, off.data(), frac.data(),
                               nn, vs.data(), sigma, y.data());
        else
            run_lines<3, 1, 1>(add, blocks, threads, xchunks, lines, t, off.data(), frac.data(),
                               nn, vs.data(), sigma, y.data());
        int64_t first;
        const int64_t differ = emu_differ(want.data(), y.data(), total * M, &first);
        char what[160];
        snprintf(what, sizeof what, "%s%s %s-centred M %d n %zu mode %d", shape_name,
                 emu_grid_name(g, 0).s + 3, node ? "node" : "cell", M, n, s.mode);
        if (!fractions) {
        } else if (differ || divergent != divergent0) {
            const int64_t q = first / M;
            printf("FAIL %s blocks %u ADD %d: %lld of %lld values differ, first point "
                   "(%lld,%lld,%lld) component %lld: want %.17g got %.17g; %d divergent barriers\n",
                   what, blocks, add, (long long)differ, (long long)(total * M),
                   (long long)(q % pts[0]), (long long)(q / pts[0] % pts[1]),
                   (long long)(q / pts[0] / pts[1]), (long long)(first % M), want[first], y[first],
                   divergent - divergent0);
            fails++;
        } else {
            printf("ok %s: %u blocks of %d (%lld lines, %d x chunks) ADD %d PER %s, %lld "
                   "barriers\n",
                   what, blocks, threads, lines, xchunks, add, add ? "4 x 2" : "1 x 1",
                   block_syncs - syncs0);
        }
        /* the line kernel's chunks of one batch of PER = 4 (the library's
         * between the sparse and dense counts) */
        if (fractions && s.W == 2 && node) {
            std::vector<double> y4 = start;
            const int divergent1 = divergent;
            if (M == 1)
                run_lines<1, 4, 1>(add, blocks, threads, xchunks, lines, t, off.data(), frac.data(),
                                   nn, vs.data(), sigma, y4.data());
            else
                run_lines<3, 4, 1>(add, blocks, threads, xchunks, lines, t, off.data(), frac.data(),
                                   nn, vs.data(), sigma, y4.data());
            /* one batch of 8 (the library's for dense FP64 rows of one
             * component; the values by asynchronous copies) */
            std::vector<double> y8 = start;
            if (M == 1)
                run_lines<1, 8, 1>(add, blocks, threads, xchunks, lines, t, off.data(), frac.data(),
                                   nn, vs.data(), sigma, y8.data());
            if (M == 1 && memcmp(want.data(), y8.data(), want.size() * sizeof(double)) != 0) {
                printf("FAIL %s blocks %u: k_deposit_lines PER 8 x 1 ADD %d differs from the "
                       "reference (%lld values)\n",
                       what, blocks, add,
                       (long long)emu_differ(want.data(), y8.data(), total * M, &first));
                fails++;
            }
            if (memcmp(want.data(), y4.data(), want.size() * sizeof(double)) != 0 ||
                divergent != divergent1) {
                printf("FAIL %s blocks %u: k_deposit_lines PER 4 x 1 ADD %d differs from the "
                       "reference (%lld values); %d divergent barriers\n",
                       what, blocks, add,
                       (long long)emu_differ(want.data(), y4.data(), total * M, &first),
                       divergent - divergent1);
                fails++;
            }
        }
        /* the tile kernel (node TSC's from TSC_TILE_PPC), planes and bricks:
         * the library's PER for the deposit, 1 for the apply's ADD = 0
         * (chunks of 32-128 particles: more rows of several chunks) */
        for (int brick = 0; brick < 2 && by_points && s.W == 4 && node; brick++) {
            std::vector<double> yt = start;
            const int divergent1 = divergent;
            const double ppc = brick ? 1e9 : 0.0;
            if (M == 1 && add)
                run_tiles<1, TILE_PER(1)>(add, ppc, s.blocks, t, off.data(), frac.data(), nn,
                                          vs.data(), sigma, yt.data());
            else if (M == 1)
                run_tiles<1, 1>(add, ppc, s.blocks, t, off.data(), frac.data(), nn, vs.data(),
                                sigma, yt.data());
            else if (add)
                run_tiles<3, TILE_PER(3)>(add, ppc, s.blocks, t, off.data(), frac.data(), nn,
                                          vs.data(), sigma, yt.data());
            else
                run_tiles<3, 1>(add, ppc, s.blocks, t, off.data(), frac.data(), nn, vs.data(),
                                sigma, yt.data());
            if (memcmp(want.data(), yt.data(), want.size() * sizeof(double)) != 0 ||
                divergent != divergent1) {
                printf("FAIL %s: k_deposit_tiles (%s) ADD %d differs from the reference (%lld "
                       "values); %d divergent barriers\n",
                       what, brick ? "bricks" : "planes", add,
                       (long long)emu_differ(want.data(), yt.data(), total * M, &first),
                       divergent - divergent1);
                fails++;
            }
        }
        /* the per-point kernel on the same fractions (TSC's and the
         * cell-centred sorted deposit, the apply's TSC half): the same bits,
         * where no cell of a window repeats (deposit_by_fractions) */
        std::vector<double> yp = start;
        if (by_points) {
            run_points_any(shape, cent, M, add, total, t, off.data(), frac.data(),
                           node ? NULL : offs.data(), nn, vs.data(), sigma, yp.data());
            if (memcmp(want.data(), yp.data(), want.size() * sizeof(double)) != 0) {
                printf("FAIL %s: k_deposit_points ADD %d differs from the reference (%lld values)\n",
                       what, add, (long long)emu_differ(want.data(), yp.data(), total * M, &first));
                fails++;
            }
        }
        /* the generic sorted deposit (every other case) */
        if (add) {
            std::vector<double> yg = y0;
            launch(3, 64, [&] { k_deposit_sorted(total, t, off.data(), vs.data(), 0, yg.data()); });
            if (memcmp(want.data(), yg.data(), want.size() * sizeof(double)) != 0) {
                printf("FAIL %s: k_deposit_sorted differs from the reference (%lld values)\n", what,
                       (long long)emu_differ(want.data(), yg.data(), total * M, &first));
                fails++;
            }
        }
    }
    /* the by-cell order: the generic kernel, and node CIC's two corner
     * passes on 3-D grids (deposit_by_corners) */
    {
        int64_t first;
        char what[160];
        snprintf(what, sizeof what, "%s %s-centred %dd M %d n %zu", shape_name,
                 node ? "node" : "cell", s.dim, M, n);
        std::vector<double> yc = y0;
        launch(3, 64, [&] { k_deposit_sorted(total, t, off.data(), vs.data(), 1, yc.data()); });
        if (memcmp(added_by_cell.data(), yc.data(), yc.size() * sizeof(double)) != 0) {
            printf("FAIL %s: k_deposit_sorted by cell differs from the reference (%lld values)\n",
                   what, (long long)emu_differ(added_by_cell.data(), yc.data(), total * M, &first));
            fails++;
        }
        if (s.W == 2 && node && s.dim == 3 && by_points && (M == 1 || M == 3)) {
            /* the first pass in batches per cell, then in compacted rounds
             * (two corners per lane in rounds of 8, corner_first's above
             * CORNER_THREADS_PPC), then another in turn from case to case
             * (one corner per lane in rounds of 16, and 32 for one
             * component; x pairs as the group below says), then a thread
             * per cell with x pairs in warps
             * (corner_first's up to CORNER_THREADS_PPC for values per
             * particle), in one block: its stride of CORNER_THREADS cells
             * steps the lanes' x index across rows */
            const int shape = corner_cases % 2;
            const long long nn = (long long)n;
            for (int pass = 0; pass < 4; pass++) {
                const int rounds = pass == 1 || pass == 2;
                /* the first pass's x pair groups (corner_pair_joined):
                 * the rounds' pairs in corner_first's (two corners per
                 * lane, three components) and with one corner per lane and
                 * one component in rounds of 16 */
                const int group = pass == 3                            ? CORNER_THREADS_GROUP
                                  : pass == 1 && M == 3                ? CORNER_ROUNDS_CELLS
                                  : pass == 2 && M == 1 && shape == 0 ? CORNER_THREADS / 8
                                                                       : 1;
                const char *first_pass = pass == 0   ? "k_cell_corner_sums"
                                         : pass == 1 ? "k_cell_corner_rounds, two corners per lane"
                                         : pass == 2 ? "k_cell_corner_rounds, one corner per lane"
                                                     : "k_cell_corner_threads";
                std::vector<double> corners(8 * (size_t)ncells * M, NAN), yk = y0;
                ull words[4] = { NO_BAD, NO_BAD, NO_BAD, NO_BAD };
                corner_source src;
                memset(&src, 0, sizeof src);
                src.V = vs.data();
                /* batches per cell of 32 and 16 (several per cell at 40 and
                 * 150 per cell), or the rounds */
                launch(pass == 3 ? 1 : 3, CORNER_THREADS, [&] {
                    ull *const lw = &words[2], *const pw = &words[0], *const ow = &words[3];
                    double *const out = corners.data();
                    const int64_t *const o = off.data();
                    if (pass == 3) {
                        /* the deposit's (corner_first), then the other
                         * loading from case to case */
                        if (M == 1 && shape)
                            k_cell_corner_threads<1, 0>(ncells, t, o, nn, src, lw, pw, ow,
                                                        out);
                        else if (M == 1)
                            k_cell_corner_threads<1, 1>(ncells, t, o, nn, src, lw, pw, ow,
                                                        out);
                        else if (shape)
                            k_cell_corner_threads<3, 0>(ncells, t, o, nn, src, lw, pw, ow,
                                                        out);
                        else
                            k_cell_corner_threads<3, 1>(ncells, t, o, nn, src, lw, pw, ow,
                                                        out);
                    } else if (!rounds && M == 1)
                        k_cell_corner_sums<1, 4, CORNER_FROM_V>(ncells, t, o, nn, src, lw, pw, ow,
                                                                out);
                    else if (!rounds)
                        k_cell_corner_sums<3, 2, CORNER_FROM_V>(ncells, t, o, nn, src, lw, pw, ow,
                                                                out);
                    else if (M == 1 && pass == 1)
                        k_cell_corner_rounds<1, 2, 8, CORNER_FROM_V, 0>(
                            ncells, t, o, nn, src, lw, pw, ow, out);
                    else if (M == 1 && shape == 0)
                        k_cell_corner_rounds<1, 1, 16, CORNER_FROM_V, 1>(
                            ncells, t, o, nn, src, lw, pw, ow, out);
                    else if (M == 1)
                        k_cell_corner_rounds<1, 1, 32, CORNER_FROM_V, 0>(
                            ncells, t, o, nn, src, lw, pw, ow, out);
                    else if (pass == 1)
                        k_cell_corner_rounds<3, 2, 8, CORNER_FROM_V, 1>(
                            ncells, t, o, nn, src, lw, pw, ow, out);
                    else
                        k_cell_corner_rounds<3, 1, 16, CORNER_FROM_V, 0>(
                            ncells, t, o, nn, src, lw, pw, ow, out);
                });
                if (words[0] != NO_BAD || words[1] != NO_BAD || words[3] != NO_BAD) {
                    printf("FAIL %s: %s flagged %llx %llx %llx\n", what, first_pass, words[0],
                           words[1], words[3]);
                    fails++;
                }
                launch(3, 64, [&] {
                    if (M == 1)
                        k_point_corner_sums<1, 1>(total, t, corners.data(), ncells, group, 1.0,
                                                  yk.data());
                    else
                        k_point_corner_sums<3, 1>(total, t, corners.data(), ncells, group, 1.0,
                                                  yk.data());
                });
                if (memcmp(added_by_cell.data(), yk.data(), yk.size() * sizeof(double)) != 0) {
                    printf("FAIL %s: the corner passes (%s) differ from the reference by cell "
                           "(%lld values)\n",
                           what, first_pass,
                           (long long)emu_differ(added_by_cell.data(), yk.data(), total * M,
                                                 &first));
                    fails++;
                }
                /* the matrix-free apply's form (ADD = 0): σ·(0 + the sum into zeros) */
                const double sigma = 0.5 + uniform();
                std::vector<double> want0(total * M), y0k(total * M, NAN);
                for (size_t i = 0; i < want0.size(); i++)
                    want0[i] = sigma * (0.0 + alone_by_cell[i]);
                launch(3, 64, [&] {
                    double *const out = y0k.data();
                    if (M == 1)
                        k_point_corner_sums<1, 0>(total, t, corners.data(), ncells, group, sigma,
                                                  out);
                    else
                        k_point_corner_sums<3, 0>(total, t, corners.data(), ncells, group, sigma,
                                                  out);
                });
                if (memcmp(want0.data(), y0k.data(), want0.size() * sizeof(double)) != 0) {
                    printf("FAIL %s: the corner passes (%s, ADD 0) differ from sigma times the "
                           "reference by cell (%lld values)\n",
                           what, first_pass,
                           (long long)emu_differ(want0.data(), y0k.data(), total * M, &first));
                    fails++;
                }
            }
            corner_cases++;
            /* the apply's first pass forming V_p itself (corner_apply_value) */
            /* the batches per cell (the tensor's above
             * CORNER_ROUNDS_TENSOR_PPC), then the rounds (the scalar's
             * shape, the tensor's up to there); three components: ω, then
             * B, in each */
            for (int r = 0; r < 2 * apply_cases; r++) {
                const int b = M == 1 ? 0 : r % 2, in_rounds = M == 1 ? r == 1 : r >= 2;
                corner_source as;
                memset(&as, 0, sizeof as);
                ull aw5[5] = { NO_BAD, NO_BAD, NO_BAD, NO_BAD, NO_BAD };
                as.x = ax.data(), as.q = aq.data(), as.omega_word = &aw5[1];
                as.wx = aw.data(), as.wy = aw.data() + n1, as.wz = aw.data() + 2 * n1;
                as.B = aB.data(), as.beta = 0.7;
                std::vector<double> ac(8 * (size_t)ncells * M, NAN), ay(total * M, NAN);
                launch(3, CORNER_THREADS, [&] {
                    if (M == 1 && in_rounds)
                        k_cell_corner_rounds<1, 2, 8, CORNER_APPLY_SCALAR, 0>(
                            ncells, t, off.data(), nn, as, &aw5[3], &aw5[0], &aw5[4], ac.data());
                    else if (in_rounds && b == 0)
                        k_cell_corner_rounds<3, 2, 8, CORNER_APPLY_OMEGA, 0>(
                            ncells, t, off.data(), nn, as, &aw5[3], &aw5[0], &aw5[4], ac.data());
                    else if (in_rounds)
                        k_cell_corner_rounds<3, 2, 8, CORNER_APPLY_BFIELD, 0>(
                            ncells, t, off.data(), nn, as, &aw5[3], &aw5[0], &aw5[4], ac.data());
                    else if (M == 1)
                        k_cell_corner_sums<1, 4, CORNER_APPLY_SCALAR>(ncells, t, off.data(), nn, as,
                                                                      &aw5[3], &aw5[0], &aw5[4],
                                                                      ac.data());
                    else if (b == 0)
                        k_cell_corner_sums<3, 2, CORNER_APPLY_OMEGA>(ncells, t, off.data(), nn, as,
                                                                     &aw5[3], &aw5[0], &aw5[4],
                                                                     ac.data());
                    else
                        k_cell_corner_sums<3, 1, CORNER_APPLY_BFIELD>(ncells, t, off.data(), nn,
                                                                      as, &aw5[3], &aw5[0],
                                                                      &aw5[4], ac.data());
                });
                launch(3, 64, [&] {
                    if (M == 1)
                        k_point_corner_sums<1, 0>(total, t, ac.data(), ncells, 1, mp.sigma,
                                                  ay.data());
                    else
                        k_point_corner_sums<3, 0>(total, t, ac.data(), ncells, 1, mp.sigma,
                                                  ay.data());
                });
                if (aw5[0] != NO_BAD || aw5[1] != NO_BAD || aw5[4] != NO_BAD ||
                    memcmp(want_apply[b].data(), ay.data(), ay.size() * sizeof(double)) != 0) {
                    printf("FAIL %s: the apply's corner passes (%s) differ from the reference "
                           "apply by cell (%lld values; words %llx %llx %llx)\n",
                           what,
                           M == 1 ? (in_rounds ? "scalar, rounds" : "scalar")
                           : b    ? (in_rounds ? "B field, rounds" : "B field")
                                  : (in_rounds ? "omega, rounds" : "omega"),
                           (long long)emu_differ(want_apply[b].data(), ay.data(), total * M, &first),
                           aw5[0], aw5[1], aw5[4]);
                    fails++;
                }
                apply_corner_runs++;
            }
        }
    }
    /* the gather (any order; here the sorted particles) of the deposited
     * field, with both index types */
    const long long nn = (long long)n;
    for (int wide = 0; wide < 2 && fractions; wide++) {
        std::vector<double> got(n1 * M, NAN);
        void (*k)(long long, const transfer_args, const double *, double *) =
            gather_nodes_kernel(shape, M,
                                centering, !wide);
        launch(3, 64, [&] { k(nn, t, added.data(), got.data()); });
        if (memcmp(gathered.data(), got.data(), n * M * sizeof(double)) != 0) {
            printf("FAIL %s %s-centred %dd n %zu: k_gather_nodes (%s indices) differs from the "
                   "reference gather\n",
                   shape_name, node ? "node" : "cell", s.dim, n,
                   wide ? "64-bit" : "32-bit");
            fails++;
        }
    }
    /* the unsorted deposit's node kernel, both index types, into zeros:
     * the reference's sum up to the order of the additions (|error| at most
     * 1e-12 of the sum of |W·v|, emu_off_rounding), exactly 0 where nothing
     * lands */
    for (int wide = 0; wide < 2 && fractions && !(s.mode & JUST_BELOW); wide++) { /* inf: no bound */
        std::vector<double> got(total * M, 0.0);
        void (*k)(long long, const transfer_args, const double *, double *) =
            deposit_atomic_nodes_kernel(shape, M,
                                        centering, !wide);
        launch(3, 64, [&] { k(nn, t, vs.data(), got.data()); });
        int64_t first;
        const int64_t off_by =
            emu_off_rounding(got.data(), alone.data(), alone_abs.data(), total * M, &first);
        if (off_by) {
            printf("FAIL %s %s-centred %dd n %zu: k_deposit_atomic_nodes (%s indices): %lld of "
                   "%lld values off the reference deposit, first %lld: want %.17g got %.17g\n",
                   shape_name, node ? "node" : "cell", s.dim, n,
                   wide ? "64-bit" : "32-bit",
                   (long long)off_by, (long long)(total * M), (long long)first, alone[first],
                   got[first]);
            fails++;
        }
    }
    /* a closed gate (the check flagged a particle; the kernels run before
     * the host has read its words): nothing written */
    const ull closed[2] = { NO_BAD, (5ull << 2) | 1 };
    transfer_args tg = t;
    tg.gate = closed;
    tg.gates = 2;
    std::vector<double> gv(n1 * M, NAN), yl = y0, yq = y0, ya = y0, ys = y0;
    launch(3, 64, [&] {
        k_deposit_sorted(total, tg, off.data(), vs.data(), 1, ys.data());
        if (s.W == 2 && node && s.dim == 3 && M == 3) {
            std::vector<double> corners(8 * (size_t)ncells * M, 0.0);
            k_point_corner_sums<3, 1>(total, tg, corners.data(), ncells, 1, 1.0, ys.data());
        }
        if (!fractions)
            return;
        gather_nodes_kernel(shape, M, centering, 1)(nn, tg, added.data(), gv.data());
        deposit_atomic_nodes_kernel(shape, M, centering, 1)(nn, tg, vs.data(), ya.data());
    });
    if (s.W == 2 && node && M == 1)
        run_lines<1, 4, 2>(1, blocks, threads, xchunks, lines, tg, off.data(), frac.data(), nn,
                        vs.data(), 1.0, yl.data());
    else if (s.W == 2 && node)
        run_lines<3, 4, 2>(1, blocks, threads, xchunks, lines, tg, off.data(), frac.data(), nn,
                        vs.data(), 1.0, yl.data());
    std::vector<double> yt = y0;
    if (by_points && s.W == 4 && node && M == 1)
        run_tiles<1, TILE_PER(1)>(1, 1e9, s.blocks, tg, off.data(), frac.data(), nn, vs.data(),
                                  1.0, yt.data());
    else if (by_points && s.W == 4 && node)
        run_tiles<3, 1>(1, 0.0, s.blocks, tg, off.data(), frac.data(), nn, vs.data(), 1.0,
                        yt.data());
    if (fractions)
        run_points_any(shape, cent, M, 1, total, tg, off.data(), frac.data(),
                       node ? NULL : offs.data(), nn, vs.data(), 1.0, yq.data());
    int written = memcmp(yl.data(), y0.data(), y0.size() * sizeof(double)) != 0 ||
                  memcmp(yt.data(), y0.data(), y0.size() * sizeof(double)) != 0 ||
                  memcmp(yq.data(), y0.data(), y0.size() * sizeof(double)) != 0 ||
                  memcmp(ya.data(), y0.data(), y0.size() * sizeof(double)) != 0 ||
                  memcmp(ys.data(), y0.data(), y0.size() * sizeof(double)) != 0;
    for (size_t i = 0; i < n * M; i++)
        written |= !std::isnan(gv[i]);
    if (written) {
        printf("FAIL %s %s-centred %dd n %zu: a kernel wrote behind a closed gate\n",
               shape_name, node ? "node" : "cell", s.dim, n);
        fails++;
    }
    return fails;
}

/* A representative subset: the 260-cell line (windows wrapping, three x
 * chunks, non-periodic ghost points), 129/131 cells (two chunks), small
 * periodic axes (2-6 cells: a point's window covers the axis), dense rows
 * (more particles than one staged chunk), sparse and one-cell sets (empty
 * cells and rows), particles boxes away, fewer blocks than lines. */
static const spec cases[] = {
    /* CIC, 1-D */
    { 1, { 260 }, { 1 }, 2, 1, 3.0, BOXES_AWAY, 0 },
    { 1, { 260 }, { 0 }, 2, 3, 12.0, LOW_HALF, 3 },
    { 1, { 260 }, { 1 }, 2, 1, 40.0, BOXES_AWAY, 0 }, /* many chunks per row */
    { 1, { 129 }, { 1 }, 2, 3, 3.0, BOXES_AWAY | FAR_AWAY, 0 },
    { 1, { 2 }, { 1 }, 2, 1, 150.0, BOXES_AWAY, 0 },
    { 1, { 3 }, { 1 }, 2, 3, 40.0, BOXES_AWAY | FAR_AWAY | ON_NODES, 1 },
    { 1, { 5 }, { 0 }, 2, 1, 0.3, ON_NODES, 0 },
    { 1, { 33 }, { 1 }, 2, 1, 40.0, ONE_CELL | BOXES_AWAY, 0 },
    { 1, { 1 }, { 0 }, 2, 3, 40.0, 0, 0 },
    /* CIC, 2-D */
    { 2, { 260, 5 }, { 1, 1 }, 2, 1, 3.0, BOXES_AWAY | FAR_AWAY, 0 },
    { 2, { 260, 5 }, { 1, 0 }, 2, 3, 0.3, ON_NODES | LOW_HALF, 3 },
    { 2, { 2, 2 }, { 1, 1 }, 2, 3, 150.0, BOXES_AWAY, 0 },
    { 2, { 3, 4 }, { 1, 0 }, 2, 1, 40.0, FAR_AWAY | ON_NODES, 1 },
    { 2, { 6, 5 }, { 0, 0 }, 2, 3, 3.0, 0, 0 },
    { 2, { 1, 3 }, { 0, 1 }, 2, 1, 40.0, ONE_CELL | BOXES_AWAY, 0 },
    /* CIC, 3-D */
    { 3, { 2, 3, 4 }, { 1, 1, 1 }, 2, 1, 150.0, BOXES_AWAY, 0 },
    { 3, { 5, 6, 2 }, { 0, 0, 0 }, 2, 3, 3.0, LOW_HALF, 1 },
    { 3, { 4, 4, 4 }, { 1, 0, 1 }, 2, 1, 0.3, ON_NODES | FAR_AWAY | BOXES_AWAY, 0 },
    { 3, { 131, 2, 3 }, { 1, 1, 1 }, 2, 3, 6.0, BOXES_AWAY, 3 },
    { 3, { 260, 5, 4 }, { 0, 1, 0 }, 2, 1, 3.0, BOXES_AWAY, 0 },
    { 3, { 3, 2, 5 }, { 1, 1, 0 }, 2, 3, 40.0, ONE_CELL | BOXES_AWAY, 0 },
    /* one cell along x (non-periodic): the by-cell first pass steps a
     * group's cells by a carry per cell (cic_cell_coords_after) */
    { 3, { 1, 7, 5 }, { 0, 1, 0 }, 2, 1, 6.0, BOXES_AWAY, 0 },
    { 3, { 1, 9, 4 }, { 0, 1, 1 }, 2, 3, 3.0, ON_NODES, 0 },
    /* rows of 20 cells: a warp's cells (a thread per cell, x pairs in
     * groups of a warp) wrap rows, and the block's stride (64 cells) goes
     * more than a row ahead */
    { 3, { 20, 3, 2 }, { 1, 0, 1 }, 2, 3, 6.0, BOXES_AWAY, 0 },
    /* TSC (periodic axes of at least 4 cells) */
    { 1, { 260 }, { 1 }, 4, 1, 3.0, BOXES_AWAY | FAR_AWAY, 0 },
    { 1, { 4 }, { 1 }, 4, 3, 150.0, BOXES_AWAY | ON_NODES, 0 },
    { 1, { 5 }, { 0 }, 4, 1, 40.0, LOW_HALF, 1 },
    { 2, { 129, 4 }, { 1, 1 }, 4, 3, 3.0, BOXES_AWAY, 3 },
    { 2, { 6, 5 }, { 0, 1 }, 4, 1, 40.0, ON_NODES | BOXES_AWAY, 0 },
    { 3, { 4, 5, 6 }, { 1, 0, 1 }, 4, 3, 12.0, BOXES_AWAY | FAR_AWAY, 0 },
    { 3, { 2, 3, 4 }, { 0, 0, 1 }, 4, 1, 0.3, ON_NODES | BOXES_AWAY, 0 },
    /* TSC tiles of 4 lines: y windows that wrap (periodic, 9 and 6 rows:
     * two segments, or the whole axis), ghost rows, a last tile of fewer
     * lines, x chunks, rows longer than a staged chunk (40 ppc), fewer
     * blocks than tiles */
    { 2, { 40, 9 }, { 1, 1 }, 4, 3, 6.0, BOXES_AWAY | FAR_AWAY, 0 },
    { 2, { 35, 7 }, { 1, 0 }, 4, 1, 12.0, ON_NODES | LOW_HALF, 2 },
    { 3, { 33, 6, 5 }, { 1, 1, 0 }, 4, 3, 3.0, BOXES_AWAY, 0 },
    { 3, { 9, 5, 4 }, { 0, 1, 1 }, 4, 1, 40.0, BOXES_AWAY | ON_NODES, 5 },
    { 3, { 6, 10, 4 }, { 1, 1, 1 }, 4, 3, 1.0, ONE_CELL | BOXES_AWAY, 0 },
    /* bricks: z windows that wrap (9 and 7 planes), ghost planes */
    { 3, { 12, 6, 9 }, { 1, 0, 1 }, 4, 1, 3.0, BOXES_AWAY | FAR_AWAY, 0 },
    { 3, { 10, 5, 7 }, { 0, 1, 0 }, 4, 3, 6.0, ON_NODES, 3 },
    /* NGP: the generic kernel only */
    { 1, { 7 }, { 1 }, 1, 1, 3.0, BOXES_AWAY | ON_NODES, 0 },
    { 3, { 4, 3, 5 }, { 1, 0, 1 }, 1, 3, 3.0, BOXES_AWAY, 0 },
    /* lower 0, coordinates just below it */
    { 2, { 5, 3 }, { 1, 1 }, 1, 1, 6.0, JUST_BELOW, 0 },
    { 1, { 7 }, { 1 }, 4, 1, 12.0, JUST_BELOW, 0 },
    { 2, { 5, 4 }, { 1, 1 }, 2, 3, 12.0, JUST_BELOW | BOXES_AWAY, 0 },
    { 3, { 4, 5, 4 }, { 1, 1, 1 }, 4, 3, 6.0, JUST_BELOW, 0 },
};

/* grid_cell_stencil_at (k_prepare's binning and stencil, one division per
 * axis) against what it replaces: partile_cell_of's status and cell,
 * grid_stencil_at's points and weights, stencil_fraction's fractions; bit
 * for bit, for random, node, boundary, wrapped, far and invalid positions
 * on 1-D to 3-D grids, periodic or not per axis, CIC and TSC, int and
 * 64-bit indices. Returns the failures; *checked counts the positions. */
template <int SHAPE, typename I>
static int check_cell_stencil_one(const transfer_args &t, const double x[3])
{
    int64_t cell_old = -7, cell_new = -7;
    I pts_old[3], idx_old[3][3], pts_new[3], idx_new[3][3];
    double w_old[3][3], w_new[3][3], fr_new[3];
    int count_old[3], count_new[3];
    const int st_old = partile_cell_of(&t.grid, x, &cell_old);
    const int st_new =
        grid_cell_stencil_at<SHAPE, I>(&t, x, &cell_new, pts_new, idx_new, w_new, count_new, fr_new);
    if (st_old != st_new)
        return 1;
    if (st_old)
        return 0;
    grid_stencil_at<SHAPE, PARTILE_CENTERING_NODE, I>(&t, x, pts_old, idx_old, w_old, count_old);
    if (cell_old != cell_new)
        return 1;
    for (int a = 0; a < 3; a++) {
        if (count_old[a] != count_new[a] || pts_old[a] != pts_new[a])
            return 1;
        for (int k = 0; k < count_old[a]; k++)
            if (idx_old[a][k] != idx_new[a][k] ||
                memcmp(&w_old[a][k], &w_new[a][k], sizeof(double)) != 0)
                return 1;
        if (a < t.grid.dim) {
            const double fr_old = stencil_fraction(&t, a, x[a]);
            if (memcmp(&fr_old, &fr_new[a], sizeof(double)) != 0)
                return 1;
        }
    }
    return 0;
}

static int check_cell_stencil(uint64_t seed, long long *checked)
{
    rng_state = seed;
    static const int64_t grids[][3] = { { 7, 1, 1 }, { 5, 4, 1 }, { 6, 3, 4 }, { 2, 2, 2 },
                                        { 3, 5, 2 } };
    static const int dims[] = { 1, 2, 3, 3, 3 };
    int fails = 0;
    *checked = 0;
    for (int gi = 0; gi < 5; gi++)
        for (int pmask = 0; pmask < 8; pmask++) {
            const int periodic[3] = { pmask & 1, (pmask >> 1) & 1, (pmask >> 2) & 1 };
            transfer_args t;
            memset(&t, 0, sizeof t);
            emu_grid(&t.grid, dims[gi], grids[gi], periodic);
            t.centering = PARTILE_CENTERING_NODE;
            t.m = 1;
            for (int i = 0; i < 4000; i++) {
                double x[3] = { 0.0, 0.0, 0.0 };
                for (int a = 0; a < t.grid.dim; a++) {
                    const double lower = t.grid.lower[a], h = t.grid.spacing[a];
                    const double L = (double)t.grid.cells[a] * h;
                    double c = lower + uniform() * L;
                    switch (next() % 12) {
                    case 0: c = lower + (double)(next() % (uint64_t)(t.grid.cells[a] + 1)) * h; break;
                    case 1: c += (double)((int64_t)(next() % 7) - 3) * L; break;
                    case 2: c += (double)((int64_t)(next() % 2001) - 1000) * L; break;
                    case 3: c = nextafter(lower, -INFINITY); break;
                    case 4: c = nextafter(lower + L, -INFINITY); break;
                    case 5: c = lower + L; break;
                    case 6: c = -(double)(1 + next() % 1000) * 1e-20 + lower; break;
                    case 7: c = next() % 2 ? NAN : (next() % 2 ? INFINITY : -INFINITY); break;
                    case 8: c = lower + 0x1p53 * h * (next() % 2 ? 1.0 : -1.0); break;
                    default: break;
                    }
                    x[a] = c;
                }
                t.shape = PARTILE_SHAPE_CIC;
                fails += check_cell_stencil_one<PARTILE_SHAPE_CIC, int>(t, x);
                fails += check_cell_stencil_one<PARTILE_SHAPE_CIC, int64_t>(t, x);
                t.shape = PARTILE_SHAPE_TSC;
                fails += check_cell_stencil_one<PARTILE_SHAPE_TSC, int>(t, x);
                fails += check_cell_stencil_one<PARTILE_SHAPE_TSC, int64_t>(t, x);
                *checked += 1;
            }
        }
    return fails;
}

int main(int argc, char **argv)
{
    const uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : test_seed();
    printf("# seed %llu\n", (unsigned long long)seed);
    int fails = 0, runs = 0;
    for (int set = 0; set < 2; set++) /* two particle sets per case */
        for (const spec &s : cases)
            for (int cent = PARTILE_CENTERING_NODE; cent <= PARTILE_CENTERING_CELL; cent++) {
                fails += run_case(s, cent, seed * 1000003u + (uint64_t)runs);
                runs += 2;
            }
    printf("# %d runs, node- and cell-centred (each with the line kernel where it applies, the "
           "per-point and generic kernels; a gather per case), %d not bitwise equal\n",
           runs, fails);
    printf("# %lld words of shared memory written past a line kernel launch's size\n",
           smem_overruns);
    printf("# %d cases of the by-cell corner passes (the first pass in batches per cell, in "
           "two shapes of rounds and a thread per cell), %d runs of the apply's\n",
           corner_cases, apply_corner_runs);
    long long stencil_positions = 0;
    const int stencil_fails = check_cell_stencil(seed ^ 0x5eedu, &stencil_positions);
    printf("# %lld positions: grid_cell_stencil_at against partile_cell_of, grid_stencil_at and "
           "stencil_fraction (CIC, TSC; int and 64-bit indices), %d differ\n",
           stencil_positions, stencil_fails);
    return fails != 0 || smem_overruns != 0 || corner_cases == 0 || apply_corner_runs == 0 ||
           stencil_fails != 0 || stencil_positions == 0;
}
