/* The GPU mass matrix's pass 2 (mass_reduce_one_* and the CIC scalar's
 * mass_reduce_coupling_cic1_*, the bodies of the k_mass_reduce_* kernels of
 * backends/gpu/mass_reduce_index.inc, which backends/gpu/mass_device.inc
 * includes; cut by tests/device_part.awk and compiled as host C++) run on
 * the CPU against a brute-force sum: every (cell, group, forward local
 * pair) of the scratch, in increasing cell and then group index, added to
 * the stored coupling that mass_local_target names for it — the order of
 * mass.h, which the reduction must reproduce bit for bit.
 *   - 1-3-D, CIC and TSC, scalar and tensor, periodic axes or not; each
 *     kernel in int and in 64-bit indices;
 *   - one chunk that finishes the storage (σ·sum, or storage + σ·sum with
 *     accumulate, over every stored plane), and several chunks of whole
 *     cell planes summed into a buffer, over mass_reduce_range's planes,
 *     as backends/gpu/mass_gpu.inc launches them;
 *   - scratch values of random signs and exponents, so that another order
 *     of the additions, a missed or a doubled entry changes the bits.
 * Seed: the time, printed; give it as the argument to rerun. */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "emulate_mass_device.h"

#include "partile/mass.h"

/* A value whose sum with others depends on their order: random sign, and an
 * exponent from −20 to 20. */
static double draw_value()
{
    return std::ldexp(uniform() - 0.5, (int)(next() % 41) - 20);
}

int main(int argc, char **argv)
{
    rng_state = argc > 1 ? strtoull(argv[1], NULL, 10) : test_seed();
    printf("# seed %llu\n", (unsigned long long)rng_state);
    long long cases = 0, entries = 0, failures = 0, narrow_runs = 0, wide_runs = 0;
    for (int trial = 0; trial < 400; trial++) {
        const int dim = 1 + (int)(next() % 3), tsc = (int)(next() % 2), comps = next() % 2 ? 9 : 1;
        int64_t cells[3];
        int periodic[3];
        for (int a = 0; a < 3; a++) {
            periodic[a] = (int)(next() % 2);
            /* a periodic axis needs 2n + 1 cells (common/mass.c) */
            cells[a] = (periodic[a] ? (tsc ? 5 : 3) : 1) + (int64_t)(next() % (dim == 3 ? 3 : 6));
        }
        partile_grid_t g;
        const int64_t ncells = emu_grid(&g, dim, cells, periodic);
        const partile_shape_t shape = tsc ? PARTILE_SHAPE_TSC : PARTILE_SHAPE_CIC;
        partile_mass_layout_t L;
        if (partile_mass_layout(&g, shape, comps == 1 ? PARTILE_MASS_SCALAR : PARTILE_MASS_TENSOR,
                                &L) != 0) {
            printf("FAIL: partile_mass_layout refused %s\n", emu_grid_name(g, tsc).s);
            return 1;
        }
        mass_args m;
        memset(&m, 0, sizeof m);
        m.t.grid = g;
        m.t.shape = shape;
        mass_set_local_sizes(&m, (int)shape, dim, comps, L.offsets);

        /* the whole scratch (every cell), and the sums it should give */
        const size_t cell_values = (size_t)m.ngroups * m.pairs * comps;
        std::vector<double> scratch(cell_values * (size_t)ncells);
        for (double &v : scratch)
            v = draw_value();
        std::vector<double> want(L.entries, 0.0);
        m.cells = ncells; /* mass_local_target reads only the grid and shape */
        for (long long c = 0; c < ncells; c++)
            for (int grp = 0; grp < m.ngroups; grp++)
                for (int fi = 0; fi < m.pairs; fi++) {
                    long long row;
                    int slot;
                    mass_local_target(&m, c, grp, m.pair_a[fi], m.pair_b[fi], &row, &slot);
                    for (int k = 0; k < comps; k++)
                        want[((size_t)row * m.slots + slot) * comps + k] +=
                            scratch[((size_t)c * m.ngroups + grp) * m.pairs * comps +
                                    (size_t)mass_local_entry(fi, k, comps)];
                }

        const long long planes = g.cells[dim - 1], plane_cells = ncells / planes;
        std::vector<double> got(L.entries);
        int mode = (int)(next() % 3); /* 0: finish, 1: finish with accumulate, 2: chunks */
        const int wide = (int)(next() % 2); /* the 64-bit kernels (else int) */
        int narrow = 1; /* every chunk ran in int */
        if (planes == 1)
            mode = (int)(next() % 2);
        const double sigma = 0.75 + uniform();
        std::vector<double> storage(L.entries);
        for (double &v : storage)
            v = draw_value();
        if (mode < 2) { /* one chunk: pass 2 writes the storage over every stored plane */
            got = storage;
            m.cell0 = 0;
            m.cells = ncells;
            m.scratch = scratch.data();
            m.finish = 1;
            m.accumulate = mode;
            m.sigma = sigma;
            long long plane0;
            const long long total = mass_reduce_range(&m, 0, planes, &plane0);
            narrow &= run_reduce(m, tsc, plane0, total, ncells, (long long)L.entries,
                                 got.data(), wide);
            for (size_t e = 0; e < want.size(); e++)
                want[e] = mode ? storage[e] + sigma * want[e] : sigma * want[e];
        } else { /* chunks of whole planes into zeroed sums, as mass_gpu.inc */
            std::fill(got.begin(), got.end(), 0.0);
            const long long chunk_planes = 1 + (long long)(next() % (uint64_t)(planes - 1));
            for (long long z0 = 0; z0 < planes; z0 += chunk_planes) {
                const long long z1 = z0 + chunk_planes < planes ? z0 + chunk_planes : planes;
                m.cell0 = z0 * plane_cells;
                m.cells = (z1 - z0) * plane_cells;
                m.scratch = scratch.data() + (size_t)m.cell0 * cell_values;
                long long plane0;
                const long long total = mass_reduce_range(&m, z0, z1, &plane0);
                narrow &= run_reduce(m, tsc, plane0, total, ncells, (long long)L.entries,
                                     got.data(), wide);
            }
        }
        /* these grids are small: int indices fit wherever they are asked for */
        if (narrow != !wide && failures++ < 10)
            printf("FAIL: %s, %s: pass 2 %s int indices\n", emu_grid_name(g, tsc).s,
                   comps == 1 ? "scalar" : "tensor", wide ? "ran in" : "refused");
        narrow_runs += narrow;
        wide_runs += !narrow;
        int64_t first = -1;
        const int64_t bad = emu_differ(want.data(), got.data(), (int64_t)want.size(), &first);
        cases++;
        entries += (long long)want.size();
        if (bad && failures++ < 10)
            printf("FAIL: %s, %s%s, mode %d: %lld of %zu entries differ, first %lld: %a, want %a\n",
                   emu_grid_name(g, tsc).s, comps == 1 ? "scalar" : "tensor",
                   wide ? " (64-bit)" : " (int)", mode,
                   (long long)bad, want.size(), (long long)first, got[(size_t)first],
                   want[(size_t)first]);
    }
    printf("%lld cases (%lld in int indices, %lld in 64-bit), %lld stored entries, %lld failed\n",
           cases, narrow_runs, wide_runs, entries, failures);
    return failures ? 1 : 0;
}
