/* partile-demo-harris: the ECSIM tensor mass matrix of a Harris current
 * sheet, assembled on every backend that can run here and checked against
 * the reference bit for bit.
 *
 * Plasma: periodic box [0, Lx) × [−Ly/2, Ly/2) × [0, Lz) of 32³ cells,
 * ~64 particles per cell; density n(y) = n0 sech²(y/λ) + n_b (sampled by
 * inverting its cumulative distribution), equal charges; B = B0 tanh(y/λ) x̂
 * on the nodes; ω_p = (β/c)·B(x_p) gathered with the CIC shape inside the
 * assembly. usage: partile-demo-harris [--cells N] [--ppc P] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "partile/partile.h"

static uint64_t rng = 0x5eed;
static double uniform(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Progress on one line where stdout is a terminal; nothing in a log. */
static int tty;
static void progress(const char *backend, partile_context_t *ctx, const char *what)
{
    if (!tty)
        return;
    printf("\r  %-9s %s: %-14s", backend, partile_context_device(ctx), what);
    fflush(stdout);
}

static int fail(const char *what, int st)
{
    fprintf(stderr, "\npartile-demo-harris: %s: %s: %s\n", what, partile_status_string(st),
            partile_last_error_detail());
    return 1;
}

/* y with density ∝ sech²(y/λ) + nb/n0 on [−L/2, L/2): bisection on the CDF */
static double sample_y(double L, double lambda, double ratio)
{
    const double u = uniform();
    const double total = 2 * lambda * tanh(L / (2 * lambda)) + ratio * L;
    double lo = -L / 2, hi = L / 2;
    for (int it = 0; it < 60; it++) {
        double mid = 0.5 * (lo + hi);
        double cdf = (lambda * (tanh(mid / lambda) + tanh(L / (2 * lambda))) + ratio * (mid + L / 2)) / total;
        if (cdf < u)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

int main(int argc, char **argv)
{
    int cells = 32, ppc = 64;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--cells"))
            cells = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--ppc"))
            ppc = atoi(argv[i + 1]);
    }
    if (cells < 5 || ppc < 1 || cells > 512) {
        fprintf(stderr, "usage: partile-demo-harris [--cells N>=5] [--ppc P>=1]\n");
        return 2;
    }
    const size_t n = (size_t)cells * cells * cells * (size_t)ppc;
    tty = isatty(STDOUT_FILENO);
    const double Lx = 8.0, Ly = 8.0, Lz = 8.0, lambda = 0.5, B0 = 1.0, beta_c = 0.8;
    partile_grid_t grid;
    memset(&grid, 0, sizeof grid);
    grid.dim = 3;
    const double lower[3] = { 0.0, -Ly / 2, 0.0 }, len[3] = { Lx, Ly, Lz };
    for (int a = 0; a < 3; a++) {
        grid.cells[a] = cells;
        grid.lower[a] = lower[a];
        grid.spacing[a] = len[a] / cells;
        grid.periodic[a] = 1;
    }
    printf("Harris current sheet: %d^3 cells, %zu particles (%d per cell), lambda %.2f, "
           "CIC tensor mass matrix\n", cells, n, ppc, lambda);
    double *x = malloc(3 * n * sizeof *x), *q = malloc(n * sizeof *q);
    if (!x || !q)
        return fail("host memory", PARTILE_ERROR_OUT_OF_MEMORY);
    for (size_t p = 0; p < n; p++) {
        x[p] = Lx * uniform();
        x[n + p] = sample_y(Ly, lambda, 0.2);
        x[2 * n + p] = Lz * uniform();
        q[p] = 1.0 / ppc;
    }
    int64_t pts[3], npoints;
    partile_field_shape(&grid, PARTILE_CENTERING_NODE, pts, &npoints);
    double *B = calloc((size_t)npoints * 3, sizeof *B);
    for (int64_t g = 0; g < npoints; g++) {
        int64_t j = g / pts[0] % pts[1];
        B[3 * g] = B0 * tanh((lower[1] + (double)j * grid.spacing[1]) / lambda);
    }
    partile_mass_layout_t L;
    int st = partile_mass_layout(&grid, PARTILE_SHAPE_CIC, PARTILE_MASS_TENSOR, &L);
    if (st < 0)
        return fail("layout", st);
    double *want = NULL;
    int failures = 0;
    const char *backends[] = { "reference", "cuda", "hip" };
    for (int b = 0; b < 3; b++) {
        partile_context_t *ctx = NULL;
        st = partile_context_create(backends[b], 0, &ctx);
        if (st < 0) {
            printf("  %-9s not run: %s\n", backends[b], partile_last_error_detail());
            continue;
        }
        progress(backends[b], ctx, "staging...");
        void *d[8] = { 0 };
        double *out = malloc(L.entries * sizeof *out);
        int64_t ncells;
        partile_grid_cell_count(&grid, &ncells);
        double t0 = 0, t1 = 0;
        do {
            if ((st = partile_malloc(ctx, n * 8, &d[0])) < 0 || (st = partile_malloc(ctx, n * 8, &d[1])) < 0 ||
                (st = partile_malloc(ctx, n * 8, &d[2])) < 0 || (st = partile_malloc(ctx, n * 8, &d[3])) < 0 ||
                (st = partile_malloc(ctx, (size_t)npoints * 24, &d[4])) < 0 ||
                (st = partile_malloc(ctx, (size_t)(ncells + 1) * 8, &d[5])) < 0 ||
                (st = partile_malloc(ctx, n * 8, &d[6])) < 0 ||
                (st = partile_malloc(ctx, L.entries * 8, &d[7])) < 0)
                break;
            for (int a = 0; a < 3; a++)
                if ((st = partile_memcpy(ctx, d[a], x + a * n, n * 8, PARTILE_COPY_HOST_TO_DEVICE)) < 0)
                    break;
            if (st < 0 || (st = partile_memcpy(ctx, d[3], q, n * 8, PARTILE_COPY_HOST_TO_DEVICE)) < 0 ||
                (st = partile_memcpy(ctx, d[4], B, (size_t)npoints * 24, PARTILE_COPY_HOST_TO_DEVICE)) < 0)
                break;
            progress(backends[b], ctx, "sorting...");
            partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { d[0], d[1], d[2] } };
            partile_array_t arrays[4] = { { d[0], PARTILE_DTYPE_FLOAT64 }, { d[1], PARTILE_DTYPE_FLOAT64 },
                                          { d[2], PARTILE_DTYPE_FLOAT64 }, { d[3], PARTILE_DTYPE_FLOAT64 } };
            if ((st = partile_sort(ctx, &grid, n, &pos, d[5], d[6], NULL, NULL)) < 0 ||
                (st = partile_permute(ctx, n, d[6], 4, arrays, NULL, 0)) < 0)
                break;
            progress(backends[b], ctx, "assembling...");
            partile_mass_params_t p = { &grid, PARTILE_SHAPE_CIC, PARTILE_MASS_TENSOR, 1.0, 0,
                                        d[4], beta_c, PARTILE_MASS_BITWISE, PARTILE_MASS_TILES, PARTILE_MASS_FP64, PARTILE_ORDER_BY_POINT };
            t0 = now();
            st = partile_mass_assemble(ctx, &p, n, &pos, d[5], d[3], NULL, d[7], NULL);
            if (st >= 0)
                st = partile_context_synchronize(ctx);
            t1 = now();
            if (st >= 0)
                st = partile_memcpy(ctx, out, d[7], L.entries * 8, PARTILE_COPY_DEVICE_TO_HOST);
        } while (0);
        if (st < 0) {
            printf("%s  %-9s %s: not run: %s: %s\n", tty ? "\r" : "", backends[b], partile_context_device(ctx),
                   partile_status_string(st), partile_last_error_detail());
            if (st != PARTILE_ERROR_UNSUPPORTED)
                failures++;
        } else {
            const char *verdict = "the reference";
            if (!want) {
                want = out;
                out = NULL;
            } else if (memcmp(want, out, L.entries * 8) == 0) {
                verdict = "bitwise equal to the reference";
            } else {
                verdict = "DIFFERS from the reference";
                failures++;
            }
            printf("%s  %-9s %s: %.3g particles/s (%.2f s), %s\n", tty ? "\r" : "", backends[b],
                   partile_context_device(ctx), (double)n / (t1 - t0), t1 - t0, verdict);
        }
        for (int k = 0; k < 8; k++)
            partile_free(ctx, d[k]);
        free(out);
        partile_context_destroy(ctx);
    }
    free(want), free(x), free(q), free(B);
    return failures ? 1 : 0;
}
