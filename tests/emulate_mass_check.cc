/* The test that the GPU mass-matrix pass 1 makes on its way (one pass,
 * backends/gpu/mass_gpu.inc), run on the CPU: mass_particle_fast from the
 * device part of backends/gpu/mass_device.inc (cut by tests/device_part.awk,
 * compiled as host C++ with the shims of tests/emulate_gpu.h) against the
 * reference's own rules, for random particles listed in their own cell or
 * another, with NaN, ±inf, off-grid, face and periods-away coordinates and
 * non-finite ω, on 1-3-D grids, periodic or not, CIC and TSC, scalar and
 * tensor:
 *   - every particle the reference's checks refuse (partile_cell_of fails,
 *     its cell is not the listed one, or ω is not finite) sets the fault;
 *   - a particle inside the box, in its listed cell, with finite ω does
 *     not (only periodic positions a period or more away may set it
 *     needlessly: mass_gpu.inc then runs the separate checks);
 *   - an accepted particle's weights are the reference's, bit for bit
 *     (partile_particle_stencil, partile_mass_point_weights), and its
 *     coefficients q·α (partile_alpha), also where the kernel divides
 *     (spacings of 2^±110, ω components of 1e-130 or 2^55);
 *   - TSC: k_mass_groups' group (mass_group_of) is the one pass 1 finds,
 *     for every input, so that every particle is staged and tested.
 * Under UBSan (scripts/test) this also shows that refused inputs reach no
 * undefined integer conversion.
 * Seed: the time, printed; give it as the argument to rerun. */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "emulate_mass_device.h"

#include "common/binning.h"
#include "common/mass_math.h"
#include "common/shape.h"

/* A coordinate on an axis of `cells` cells from lower with spacing h. */
static double draw_coordinate(double lower, double h, int64_t cells)
{
    const double span = (double)cells * h, u = uniform();
    switch (next() % 16) {
    case 0: return NAN;
    case 1: return next() % 2 ? INFINITY : -INFINITY;
    case 2: return lower + (double)(int64_t)(next() % (uint64_t)(cells + 1)) * h; /* a face */
    case 3: return lower - span * (1.0 + 3.0 * u);                    /* periods below */
    case 4: return lower + span * (1.0 + 3.0 * u);                    /* periods above */
    case 5: return lower + span * (next() % 2 ? 1e17 : -1e17) * u;    /* far */
    case 6: return lower + span - 0x1p-40 * u;                        /* just below the top */
    default: return lower + span * u;                                 /* inside */
    }
}

int main(int argc, char **argv)
{
    rng_state = argc > 1 ? strtoull(argv[1], NULL, 10) : test_seed();
    printf("# seed %llu\n", (unsigned long long)rng_state);
    long long refused = 0, accepted = 0, images = 0, needless = 0, failures = 0;
    for (int trial = 0; trial < 6000; trial++) {
        const int dim = 1 + (int)(next() % 3), tsc = (int)(next() % 2), comps = next() % 2 ? 9 : 1;
        int64_t cells[3];
        int periodic[3];
        for (int a = 0; a < 3; a++) {
            cells[a] = (tsc ? 3 : 2) + (int64_t)(next() % 6);
            periodic[a] = (int)(next() % 2);
        }
        partile_grid_t g;
        const int64_t ncells = emu_grid(&g, dim, cells, periodic);
        if (trial % 8 == 7) /* spacings outside common/division.h's range: quotients by division */
            for (int a = 0; a < 3; a++) {
                const double s = trial % 16 == 7 ? 0x1p-110 : 0x1p110;
                g.lower[a] *= s;
                g.spacing[a] *= s;
            }
        mass_args m;
        memset(&m, 0, sizeof m);
        const partile_transfer_t tr = { &g, tsc ? PARTILE_SHAPE_TSC : PARTILE_SHAPE_CIC,
                                        PARTILE_CENTERING_NODE, 3, NULL, PARTILE_ORDER_BY_POINT };
        const partile_vectors_t no_positions = { PARTILE_DTYPE_FLOAT64, { NULL, NULL, NULL } };
        m.t = make_transfer(&tr, &no_positions); /* the grid and 1/spacing, as mass_gpu.inc */
        m.ngroups = tsc ? 1 << dim : 1;
        mass_set_cell_geometry(&m, &g);
        int npts = 1;
        for (int a = 0; a < dim; a++)
            npts *= tsc ? 3 : 2;
        for (int k = 0; k < 50; k++) {
            mass_raw r;
            memset(&r, 0, sizeof r);
            for (int a = 0; a < dim; a++)
                r.x[a] = draw_coordinate(g.lower[a], g.spacing[a], g.cells[a]);
            r.q = uniform() - 0.4;
            for (int a = 0; a < 3; a++)
                r.w[a] = next() % 64 == 0   ? (next() % 2 ? NAN : -INFINITY)
                         : next() % 32 == 0 ? (next() % 2 ? 1e-130 : 0x1p55) * (uniform() - 0.5)
                                            : 4.0 * uniform() - 2.0; /* tiny, huge: α by division */
            int64_t cell = -1;
            const int code = partile_cell_of(&g, r.x, &cell);
            /* listed in its own cell mostly, else another */
            const long long listed = code == 0 && next() % 4 != 0 ? cell : (long long)(next() % (uint64_t)ncells);
            int omega_ok = 1;
            for (int a = 0; a < 3; a++)
                omega_ok &= std::isfinite(r.w[a]);
            const int ok = code == 0 && cell == listed && (comps == 1 || omega_ok);
            int inside_box = 1; /* no wrapping needed */
            for (int a = 0; a < dim; a++) {
                const double f = std::floor((r.x[a] - g.lower[a]) / g.spacing[a]);
                inside_box &= f >= 0.0 && f < (double)g.cells[a];
            }
            double W[MASS_MAX_NPTS], coef[9];
            int fault = 0;
            int grp = -1;
#define MASS_RUN(NP, CO)                                                             \
    if (npts == (NP) && comps == (CO))                                               \
        grp = mass_particle_fast(&m, &r, listed, 1, W, coef, &fault, (NP), (CO));
            MASS_LOCAL_SIZES(MASS_RUN)
#undef MASS_RUN
            /* k_mass_groups' byte names the group pass 1 stages the particle
             * in, for every input: so every particle is staged, and tested;
             * and both take the quotients from mass_quotients, so the group
             * of the IEEE quotients checks those too */
            int grp_divided = 0;
            for (int a = 0; a < dim; a++) {
                const double q = (r.x[a] - g.lower[a]) / g.spacing[a];
                grp_divided |= partile_mass_group_bit(mass_safe_q(q)) << a;
            }
            if (tsc &&
                (mass_group_of(&m, &r) != grp || grp != grp_divided || grp < 0 ||
                 grp >= m.ngroups) &&
                failures++ < 10)
                printf("FAIL: group %d, k_mass_groups' %d, by division %d (%s, x %a %a %a)\n", grp,
                       mass_group_of(&m, &r), grp_divided, emu_grid_name(g, tsc).s, r.x[0], r.x[1],
                       r.x[2]);
            if (!ok) {
                refused++;
                if (!fault && failures++ < 10)
                    printf("FAIL: refused by the reference (cell status %d, cell %lld, listed "
                           "%lld, omega ok %d) but no fault: %s, comps %d, x %a %a %a\n",
                           code, (long long)cell, listed, omega_ok, emu_grid_name(g, tsc).s,
                           comps, r.x[0], r.x[1], r.x[2]);
                continue;
            }
            accepted++;
            if (!inside_box) {
                images++;
                needless += fault;
                continue;
            }
            if (fault && failures++ < 10)
                printf("FAIL: accepted inside the box but faulted: %s, x %a %a %a\n",
                       emu_grid_name(g, tsc).s, r.x[0], r.x[1], r.x[2]);
            /* the weights and coefficients: the reference's */
            partile_stencil_1d st[3];
            int64_t c2;
            must(partile_particle_stencil(&g, m.t.shape, PARTILE_CENTERING_NODE, r.x, 0.0, st, &c2),
                 "stencil");
            double Wr[MASS_MAX_NPTS];
            partile_mass_point_weights(dim, tsc ? 3 : 2, npts, st, Wr);
            double alpha[9];
            partile_alpha(r.w, alpha);
            for (int i = 0; i < npts; i++)
                if (memcmp(&W[i], &Wr[i], 8) != 0 && failures++ < 10)
                    printf("FAIL: weight %d = %a, reference %a (%s)\n", i, W[i], Wr[i],
                           emu_grid_name(g, tsc).s);
            for (int i = 0; i < comps; i++) {
                const double want = comps == 1 ? r.q : r.q * alpha[i];
                if (memcmp(&coef[i], &want, 8) != 0 && failures++ < 10)
                    printf("FAIL: coefficient %d = %a, reference %a\n", i, coef[i], want);
            }
        }
    }
    printf("%lld refused, %lld accepted (%lld periods away, %lld of them sent to the separate "
           "checks), %lld failures\n",
           refused, accepted, images, needless, failures);
    /* the draw must reach every branch */
    if (refused < 10000 || accepted < 100000 || images < 1000)
        return printf("FAIL: the draw missed a class of particles\n"), 1;
    return failures ? 1 : 0;
}
