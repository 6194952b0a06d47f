/* The GPU unsorted deposit's generic kernel k_deposit_atomic
 * (backends/gpu/deposit_gpu.inc: every shape, centering and component
 * count, a particle spread over lanes by x point and component) run on the
 * CPU against the reference backend's unsorted deposit. Atomics add in any
 * order, so a value may differ from the reference by rounding: each must
 * lie within 1e-12 of the same deposit of |v| (emu_off_rounding: the bound
 * of two orders of a sum), and be exactly 0 where nothing lands. NGP, CIC, TSC and OVERLAP;
 * node- and cell-centred; 1, 2, 3, 5 and 16 components; 1-3 dimensions,
 * periodic (with axes of 1-3 cells, where a stencil wraps onto itself, and
 * particles boxes away) or not; behind a closed gate nothing is written.
 * Where the library takes them (CIC, TSC; 1 or 3 components), also the
 * fraction-stencil kernels, node- and cell-centred: k_deposit_atomic_nodes
 * to rounding, and the gather k_gather_nodes bit for bit; and the
 * 128-bit runs of doubles the gather reads rows with (load_double_run).
 * Seed: the time, printed; give it as the argument to rerun a failure. */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "emulate_gpu.h"

EMU_DEVICE_CODE_BEGIN
#include "gpu_common_device.inc"
#include "transfer_common_device.inc"
#include "deposit_gpu_device.inc"
EMU_DEVICE_CODE_END

static const char *shape_name(int shape)
{
    return shape == PARTILE_SHAPE_NGP   ? "NGP"
           : shape == PARTILE_SHAPE_CIC ? "CIC"
           : shape == PARTILE_SHAPE_TSC ? "TSC"
                                        : "OVERLAP";
}

/* One grid, shape, centering and component count. Returns the failures. */
static int run_case(int dim, const int64_t *cells, const int *periodic, int shape, int centering,
                    int M, double per_cell, uint64_t seed)
{
    rng_state = seed;
    partile_grid_t g;
    const int64_t ncells = emu_grid(&g, dim, cells, periodic);
    const size_t n = (size_t)(per_cell * (double)ncells + 0.5), n1 = n ? n : 1;
    std::vector<double> x(3 * n1), sizes(n1), values(n1 * M);
    for (int a = 0; a < dim; a++)
        for (size_t p = 0; p < n; p++) {
            const double L = (double)g.cells[a] * g.spacing[a];
            double c = g.lower[a] + uniform() * L * (1.0 - 1e-12);
            if (next() % 6 == 0) /* on a grid line */
                c = g.lower[a] + (double)(next() % (uint64_t)g.cells[a]) * g.spacing[a];
            if (g.periodic[a] && p % 7 == 0) /* boxes away */
                c += (double)((int64_t)(next() % 7) - 3) * L;
            x[a * n + p] = c;
        }
    double hmin = g.spacing[0];
    for (int a = 1; a < dim; a++)
        hmin = g.spacing[a] < hmin ? g.spacing[a] : hmin;
    for (size_t p = 0; p < n1; p++) /* OVERLAP: 0 < d_p ≤ h on every axis */
        sizes[p] = hmin * (p % 5 == 0 ? 1.0 : 0.05 + 0.95 * uniform());
    for (double &v : values)
        v = 2 * uniform() - 1;
    int64_t pts[3], total;
    must(partile_field_shape(&g, (partile_centering_t)centering, pts, &total), "field shape");

    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { 0 } };
    for (int a = 0; a < dim; a++)
        pos.axis[a] = x.data() + a * n;
    partile_context_t *ref = NULL;
    must(partile_context_create("reference", 0, &ref), "reference context");
    const double *sz = shape == PARTILE_SHAPE_OVERLAP ? sizes.data() : NULL;
    partile_transfer_t tr = { &g, (partile_shape_t)shape, (partile_centering_t)centering, M, sz, PARTILE_ORDER_BY_POINT };
    std::vector<double> want(total * M, 0.0), want_abs(total * M, 0.0), vabs(n1 * M);
    for (size_t i = 0; i < n1 * M; i++)
        vabs[i] = fabs(values[i]);
    int64_t bad = -1;
    must(partile_deposit(ref, &tr, n, &pos, values.data(), NULL, want.data(), &bad),
         "reference deposit");
    must(partile_deposit(ref, &tr, n, &pos, vabs.data(), NULL, want_abs.data(), &bad),
         "reference deposit");
    must(partile_context_destroy(ref), "context destroy");

    transfer_args t = make_transfer(&tr, &pos);
    void (*k)(long long, const transfer_args, const double *, double *) =
        deposit_atomic_kernel(shape, M);
    int fails = 0;
    std::vector<double> got(total * M, 0.0);
    launch(3, 64, [&] { k((long long)n, t, values.data(), got.data()); });
    int64_t first;
    const int64_t off_by =
        emu_off_rounding(got.data(), want.data(), want_abs.data(), total * M, &first);
    if (off_by) {
        printf("FAIL %s %s-centred %dd cells %lldx%lldx%lld periodic %d%d%d M %d n %zu: %lld of "
               "%lld values off the reference, first %lld: want %.17g got %.17g\n",
               shape_name(shape), centering == PARTILE_CENTERING_NODE ? "node" : "cell", dim,
               (long long)g.cells[0], (long long)g.cells[1], (long long)g.cells[2], periodic[0],
               periodic[1], periodic[2], M, n, (long long)off_by, (long long)(total * M),
               (long long)first, want[first], got[first]);
        fails++;
    }
    /* the fraction-stencil kernels where the library takes them (CIC, TSC;
     * 1 or 3 components; periodic axes of at least 2 or 4 cells): the
     * unsorted k_deposit_atomic_nodes to rounding, and the gather
     * k_gather_nodes of the deposited field bit for bit, both index types */
    int fraction_stencil = (shape == PARTILE_SHAPE_CIC || shape == PARTILE_SHAPE_TSC) &&
                           (M == 1 || M == 3);
    for (int a = 0; a < dim; a++)
        fraction_stencil &= !periodic[a] || cells[a] >= (shape == PARTILE_SHAPE_CIC ? 2 : 4);
    if (fraction_stencil) {
        std::vector<double> gathered(n1 * M);
        partile_context_t *r2 = NULL;
        must(partile_context_create("reference", 0, &r2), "reference context");
        must(partile_gather(r2, &tr, n, &pos, want.data(), gathered.data(), &bad),
             "reference gather");
        must(partile_context_destroy(r2), "context destroy");
        for (int wide = 0; wide < 2; wide++) {
            std::vector<double> got(total * M, 0.0), gv(n1 * M, NAN);
            launch(3, 64, [&] {
                deposit_atomic_nodes_kernel(shape, M, centering, !wide)((long long)n, t,
                                                                        values.data(), got.data());
            });
            int64_t first;
            const int64_t off_by =
                emu_off_rounding(got.data(), want.data(), want_abs.data(), total * M, &first);
            launch(3, 64, [&] {
                gather_nodes_kernel(shape, M, centering, !wide)((long long)n, t, want.data(),
                                                                gv.data());
            });
            const int differs = memcmp(gv.data(), gathered.data(), n * M * sizeof(double)) != 0;
            if (off_by || differs) {
                printf("FAIL %s %s-centred %dd cells %lldx%lldx%lld periodic %d%d%d M %d n %zu "
                       "(%s indices): k_deposit_atomic_nodes %lld values off the reference%s\n",
                       shape_name(shape), centering == PARTILE_CENTERING_NODE ? "node" : "cell",
                       dim, (long long)g.cells[0], (long long)g.cells[1], (long long)g.cells[2],
                       periodic[0], periodic[1], periodic[2], M, n, wide ? "64-bit" : "32-bit",
                       (long long)off_by,
                       differs ? "; k_gather_nodes not bitwise equal to the reference gather"
                               : "");
                fails++;
            }
        }
    }
    /* a closed gate: nothing written */
    const ull closed[2] = { NO_BAD, (5ull << 2) | 1 };
    t.gate = closed;
    t.gates = 2;
    std::vector<double> untouched(total * M, -0.0);
    launch(3, 64, [&] { k((long long)n, t, values.data(), untouched.data()); });
    for (int64_t i = 0; i < total * M; i++)
        if (!(untouched[i] == 0.0 && std::signbit(untouched[i]))) {
            printf("FAIL %s M %d: k_deposit_atomic wrote behind a closed gate\n", shape_name(shape),
                   M);
            fails++;
            break;
        }
    return fails;
}

/* load_double_run (gpu_common.inc) against LEN plain loads, for every LEN
 * it takes (3 to 9) at both 16-byte parities, with and without the L2
 * hint. Returns the failures. */
static int check_load_double_run(void)
{
    alignas(16) double src[32];
    for (int i = 0; i < 32; i++)
        src[i] = 1.0 + i * 0.25;
    int fails = 0;
    for (int len = 3; len <= 9; len++)
        for (int at = 0; at < 8; at++) { /* offsets 0-3, without and with the L2 hint */
            double v[9];
            for (double &x : v)
                x = NAN;
            load_double_run(src + at % 4, v, len, at / 4);
            for (int c = 0; c < len; c++)
                if (memcmp(&v[c], &src[at % 4 + c], sizeof(double)) != 0) {
                    printf("FAIL load_double_run LEN %d at %d, hint %d: value %d is %g, not %g\n",
                           len, at % 4, at / 4, c, v[c], src[at % 4 + c]);
                    fails++;
                    break;
                }
        }
    return fails;
}

int main(int argc, char **argv)
{
    const uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : test_seed();
    printf("# seed %llu\n", (unsigned long long)seed);
    struct grid_case {
        int dim;
        int64_t cells[3];
        int periodic[3];
        double per_cell;
    };
    const grid_case grids[] = {
        { 1, { 7, 1, 1 }, { 1, 0, 0 }, 6.0 },   { 1, { 5, 1, 1 }, { 0, 0, 0 }, 6.0 },
        { 1, { 1, 1, 1 }, { 1, 0, 0 }, 20.0 },  { 2, { 6, 5, 1 }, { 1, 0, 0 }, 3.0 },
        { 2, { 2, 3, 1 }, { 1, 1, 0 }, 8.0 },   { 3, { 5, 4, 3 }, { 1, 1, 1 }, 2.0 },
        { 3, { 4, 3, 5 }, { 0, 1, 0 }, 2.0 },   { 3, { 3, 2, 1 }, { 1, 1, 1 }, 6.0 },
        { 3, { 9, 1, 2 }, { 0, 0, 1 }, 3.0 },   { 3, { 4, 5, 6 }, { 1, 1, 0 }, 2.0 },
        { 3, { 6, 4, 4 }, { 1, 1, 1 }, 1.5 },   { 3, { 5, 4, 4 }, { 0, 1, 1 }, 2.0 },
        { 2, { 5, 6, 1 }, { 0, 0, 0 }, 3.0 },
    };
    const int shapes[] = { PARTILE_SHAPE_NGP, PARTILE_SHAPE_CIC, PARTILE_SHAPE_TSC,
                           PARTILE_SHAPE_OVERLAP };
    const int components[] = { 1, 2, 3, 5, 16 };
    int fails = 0, cases = 0;
    for (const grid_case &gc : grids)
        for (int shape : shapes)
            for (int centering = PARTILE_CENTERING_NODE; centering <= PARTILE_CENTERING_CELL;
                 centering++)
                for (int M : components) {
                    fails += run_case(gc.dim, gc.cells, gc.periodic, shape, centering, M,
                                      gc.per_cell, seed + (uint64_t)cases);
                    cases++;
                }
    printf("# %d cases of k_deposit_atomic, %d failed\n", cases, fails);
    const int run_fails = check_load_double_run();
    printf("# load_double_run: %d failed\n", run_fails);
    fails += run_fails;
    return fails ? 1 : 0;
}
