#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/check_particles.h"

static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform(uint64_t *s) { return (double)(next_u64(s) >> 11) * 0x1p-53; }

#define TRY(call)                                                              \
    do {                                                                       \
        if ((st = (call)) < 0)                                                 \
            goto done;                                                         \
    } while (0)

/* Host buffer → new context buffer (poisoned if host is NULL). */
static int stage(partile_context_t *ctx, const void *host, size_t bytes, void **dev)
{
    int st = partile_malloc(ctx, bytes ? bytes : 8, dev);
    if (st < 0)
        return st;
    if (host && bytes)
        return partile_memcpy(ctx, *dev, host, bytes, PARTILE_COPY_HOST_TO_DEVICE);
    return partile_memset(ctx, *dev, 0xab, bytes ? bytes : 8);
}

static int fetch(partile_context_t *ctx, void *host, const void *dev, size_t bytes)
{
    return bytes ? partile_memcpy(ctx, host, dev, bytes, PARTILE_COPY_DEVICE_TO_HOST) : 0;
}

/* First differing 8-byte element, or -1. */
static long long first_diff(const void *a, const void *b, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (memcmp((const char *)a + 8 * i, (const char *)b + 8 * i, 8) != 0)
            return (long long)i;
    return -1;
}

static partile_grid_t make_grid(int dim, int periodic, double ppc, size_t n)
{
    partile_grid_t g;
    memset(&g, 0, sizeof g);
    g.dim = dim;
    int64_t side = (int64_t)ceil(pow((double)n / ppc, 1.0 / dim));
    side = side < 3 ? 3 : side;
    for (int a = 0; a < 3; a++) {
        g.cells[a] = a < dim ? side + a : 1;
        g.lower[a] = -0.5 * a;
        g.spacing[a] = 1.0 / (double)g.cells[a];
        g.periodic[a] = periodic;
    }
    return g;
}

/* x as a position of the staged type: FP32 rounds it (stage_positions), and
 * a value within half a float ulp of the upper bound rounds onto it, which
 * is outside a non-periodic grid; such a value (or one that rounded below
 * lo) moves one float step back inside [lo, hi). FP64: x unchanged. */
static double as_position(double x, int f32, double lo, double hi)
{
    if (!f32)
        return x;
    float f = (float)x;
    if ((double)f >= hi)
        f = nextafterf(f, -INFINITY);
    if ((double)f < lo)
        f = nextafterf(f, INFINITY);
    return (double)f;
}

/* One particle set, staged on both contexts. */
typedef struct staged {
    partile_vectors_t pos;
    void *axis[3];
} staged;

static int stage_positions(partile_context_t *ctx, const partile_grid_t *g, const double *x,
                           size_t n, int f32, staged *s)
{
    memset(s, 0, sizeof *s);
    s->pos.type = f32 ? PARTILE_DTYPE_FLOAT32 : PARTILE_DTYPE_FLOAT64;
    for (int a = 0; a < g->dim; a++) {
        int st;
        if (f32) {
            float *t = malloc((n ? n : 1) * sizeof *t);
            if (!t)
                return PARTILE_ERROR_OUT_OF_MEMORY;
            for (size_t p = 0; p < n; p++)
                t[p] = (float)x[a * n + p];
            st = stage(ctx, t, n * 4, &s->axis[a]);
            free(t);
        } else {
            st = stage(ctx, x + a * n, n * 8, &s->axis[a]);
        }
        if (st < 0)
            return st;
        s->pos.axis[a] = s->axis[a];
    }
    return 0;
}

static void free_positions(partile_context_t *ctx, staged *s)
{
    for (int a = 0; a < 3; a++)
        partile_free(ctx, s->axis[a]);
}

typedef struct sort_out {
    int64_t *off, *perm, *cell;
} sort_out;

/* sort (or re-sort from old) on ctx; host copies in out. */
static int run_sort(partile_context_t *ctx, const partile_grid_t *g, const double *x, size_t n,
                    int f32, const sort_out *old, sort_out *out)
{
    int64_t ncells;
    partile_grid_cell_count(g, &ncells);
    staged s;
    void *d_off = NULL, *d_perm = NULL, *d_cell = NULL, *o_off = NULL, *o_cell = NULL;
    int st;
    TRY(stage_positions(ctx, g, x, n, f32, &s));
    TRY(stage(ctx, NULL, (size_t)(ncells + 1) * 8, &d_off));
    TRY(stage(ctx, NULL, n * 8, &d_perm));
    TRY(stage(ctx, NULL, n * 8, &d_cell));
    if (old) {
        TRY(stage(ctx, old->off, (size_t)(ncells + 1) * 8, &o_off));
        TRY(stage(ctx, old->cell, n * 8, &o_cell));
        TRY(partile_resort(ctx, g, n, &s.pos, o_off, o_cell, d_off, d_perm, d_cell, NULL));
    } else {
        TRY(partile_sort(ctx, g, n, &s.pos, d_off, d_perm, d_cell, NULL));
    }
    TRY(fetch(ctx, out->off, d_off, (size_t)(ncells + 1) * 8));
    TRY(fetch(ctx, out->perm, d_perm, n * 8));
    TRY(fetch(ctx, out->cell, d_cell, n * 8));
done:
    free_positions(ctx, &s);
    partile_free(ctx, d_off), partile_free(ctx, d_perm), partile_free(ctx, d_cell);
    partile_free(ctx, o_off), partile_free(ctx, o_cell);
    return st;
}

static int alloc_out(sort_out *o, int64_t ncells, size_t n)
{
    o->off = malloc((size_t)(ncells + 1) * 8);
    o->perm = malloc(n * 8 + 8);
    o->cell = malloc(n * 8 + 8);
    return o->off && o->perm && o->cell ? 0 : PARTILE_ERROR_OUT_OF_MEMORY;
}

static void free_out(sort_out *o) { free(o->off), free(o->perm), free(o->cell); }

/* Compares; describes the first difference; 1 if equal. */
static int same_sort(const sort_out *a, const sort_out *b, int64_t ncells, size_t n, FILE *log,
                     const char *what)
{
    long long d;
    if ((d = first_diff(a->off, b->off, (size_t)ncells + 1)) >= 0)
        fprintf(log, "    %s: offsets[%lld] = %lld, reference %lld\n", what, d,
                (long long)a->off[d], (long long)b->off[d]);
    else if ((d = first_diff(a->perm, b->perm, n)) >= 0)
        fprintf(log, "    %s: perm[%lld] = %lld, reference %lld\n", what, d,
                (long long)a->perm[d], (long long)b->perm[d]);
    else if ((d = first_diff(a->cell, b->cell, n)) >= 0)
        fprintf(log, "    %s: sorted cell[%lld] = %lld, reference %lld\n", what, d,
                (long long)a->cell[d], (long long)b->cell[d]);
    return d < 0;
}

int partile_check_sort(partile_context_t *ctx, uint64_t seed, FILE *log,
                       partile_particle_check_t *r)
{
    memset(r, 0, sizeof *r);
    partile_context_t *ref = NULL;
    int st = partile_context_create("reference", 0, &ref);
    if (st < 0)
        return st;
    uint64_t rng = seed ^ 0x50f7ull;
    const size_t n = 40009;
    const double ppcs[2] = { 0.5, 12.0 };
    for (int dim = 1; dim <= 3 && st >= 0; dim++)
        for (int periodic = 0; periodic < 2 && st >= 0; periodic++)
            for (int k = 0; k < 2 && st >= 0; k++) {
                const int f32 = (dim + k) % 2;
                partile_grid_t g = make_grid(dim, periodic, ppcs[k], n);
                int64_t ncells;
                partile_grid_cell_count(&g, &ncells);
                double *x = malloc(3 * n * sizeof *x), *y = malloc(3 * n * sizeof *y);
                sort_out got, want, got2, want2;
                memset(&got, 0, sizeof got), memset(&want, 0, sizeof want);
                memset(&got2, 0, sizeof got2), memset(&want2, 0, sizeof want2);
                if (!x || !y || alloc_out(&got, ncells, n) || alloc_out(&want, ncells, n) ||
                    alloc_out(&got2, ncells, n) || alloc_out(&want2, ncells, n)) {
                    st = PARTILE_ERROR_OUT_OF_MEMORY;
                } else {
                    for (int a = 0; a < dim; a++)
                        for (size_t p = 0; p < n; p++)
                            x[a * n + p] = as_position(g.lower[a] + uniform(&rng) * (1 - 1e-12),
                                                       f32, g.lower[a], g.lower[a] + 1.0);
                    st = run_sort(ctx, &g, x, n, f32, NULL, &got);
                    if (st >= 0)
                        st = run_sort(ref, &g, x, n, f32, NULL, &want);
                    if (st >= 0) {
                        r->cases++;
                        r->mismatches += !same_sort(&got, &want, ncells, n, log, "sort");
                        /* reorder, move by up to 0.1 cell (reflected), re-sort */
                        for (int a = 0; a < dim; a++)
                            for (size_t i = 0; i < n; i++) {
                                double v = x[a * n + want.perm[i]] +
                                           (2 * uniform(&rng) - 1) * 0.1 * g.spacing[a];
                                double lo = g.lower[a], hi = lo + 1.0;
                                if (!periodic)
                                    v = v < lo ? lo + (lo - v) : v >= hi ? hi - (v - hi) - 1e-12 : v;
                                y[a * n + i] = as_position(v, f32, lo, hi);
                            }
                        st = run_sort(ctx, &g, y, n, f32, &want, &got2);
                        if (st >= 0)
                            st = run_sort(ref, &g, y, n, f32, &want, &want2);
                        if (st >= 0) {
                            r->cases++;
                            r->mismatches += !same_sort(&got2, &want2, ncells, n, log, "re-sort");
                        }
                    }
                }
                free(x), free(y);
                free_out(&got), free_out(&want), free_out(&got2), free_out(&want2);
            }
    partile_context_destroy(ref);
    return st;
}

/* Deposit (sorted: bitwise; unsorted: tolerance) and gather (bitwise). */
/* Random particles (x: 3 × n, SoA) sorted by cell on the reference; so holds
 * that sort (offsets for the cell list). */
static int sorted_particles(partile_context_t *ref, const partile_grid_t *g, size_t n,
                            uint64_t *rng, double *x, sort_out *so)
{
    for (int a = 0; a < g->dim; a++)
        for (size_t p = 0; p < n; p++)
            x[a * n + p] = g->lower[a] + uniform(rng) * (double)g->cells[a] * g->spacing[a] * (1 - 1e-12);
    int st = run_sort(ref, g, x, n, 0, NULL, so);
    if (st < 0)
        return st;
    double *xs = malloc(3 * n * 8);
    if (!xs)
        return PARTILE_ERROR_OUT_OF_MEMORY;
    for (int a = 0; a < g->dim; a++)
        for (size_t i = 0; i < n; i++)
            xs[a * n + i] = x[a * n + so->perm[i]];
    memcpy(x, xs, 3 * n * 8);
    free(xs);
    return 0;
}

static int transfer_case(partile_context_t *ctx, partile_context_t *ref, const partile_grid_t *g,
                         partile_shape_t shape, partile_centering_t cent, int m, size_t n,
                         uint64_t *rng, FILE *log, partile_particle_check_t *r)
{
    int64_t pts[3], total, ncells;
    partile_field_shape(g, cent, pts, &total);
    partile_grid_cell_count(g, &ncells);
    const size_t fb = (size_t)total * m * 8, vb = n * m * 8;
    double *x = malloc(3 * n * 8), *v = malloc(vb), *sz = malloc(n * 8), *f0 = malloc(fb);
    double *fr = malloc(fb), *fg = malloc(fb), *gr = malloc(vb), *gg = malloc(vb), *fu = malloc(fb);
    double *fcr = malloc(fb), *fcg = malloc(fb); /* sorted, in the by-cell order */
    sort_out so;
    memset(&so, 0, sizeof so);
    int st = 0;
    if (!x || !v || !sz || !f0 || !fr || !fg || !gr || !gg || !fu || !fcr || !fcg ||
        alloc_out(&so, ncells, n)) {
        st = PARTILE_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    if ((st = sorted_particles(ref, g, n, rng, x, &so)) < 0)
        goto out;
    for (size_t i = 0; i < n * m; i++)
        v[i] = 2 * uniform(rng) - 1;
    double hmin = g->spacing[0];
    for (int a = 1; a < g->dim; a++)
        hmin = g->spacing[a] < hmin ? g->spacing[a] : hmin;
    for (size_t p = 0; p < n; p++) /* OVERLAP: 0 < d_p <= every spacing */
        sz[p] = hmin * (0.1 + 0.9 * uniform(rng));
    for (size_t i = 0; i < (size_t)total * m; i++)
        f0[i] = uniform(rng);
    for (int pass = 0; pass < 2; pass++) { /* 0: the backend, 1: the reference */
        partile_context_t *c = pass ? ref : ctx;
        staged s;
        void *dv = NULL, *dsz = NULL, *dfield = NULL, *doff = NULL, *dout = NULL;
        double *fsorted = pass ? fr : fg, *gath = pass ? gr : gg;
        TRY(stage_positions(c, g, x, n, 0, &s));
        TRY(stage(c, v, vb, &dv));
        TRY(stage(c, sz, n * 8, &dsz));
        TRY(stage(c, f0, fb, &dfield));
        TRY(stage(c, so.off, (size_t)(ncells + 1) * 8, &doff));
        TRY(stage(c, NULL, vb, &dout));
        partile_transfer_t t = { g, shape, cent, m, shape == PARTILE_SHAPE_OVERLAP ? dsz : NULL, PARTILE_ORDER_BY_POINT };
        TRY(partile_deposit(c, &t, n, &s.pos, dv, doff, dfield, NULL));
        TRY(fetch(c, fsorted, dfield, fb));
        TRY(partile_gather(c, &t, n, &s.pos, dfield, dout, NULL));
        TRY(fetch(c, gath, dout, vb));
        {
            partile_transfer_t tc = t;
            tc.order = PARTILE_ORDER_BY_CELL;
            TRY(partile_memcpy(c, dfield, f0, fb, PARTILE_COPY_HOST_TO_DEVICE));
            TRY(partile_deposit(c, &tc, n, &s.pos, dv, doff, dfield, NULL));
            TRY(fetch(c, pass ? fcr : fcg, dfield, fb));
        }
        if (pass == 0) { /* the unsorted (any-order) deposit on the backend */
            TRY(partile_memcpy(c, dfield, f0, fb, PARTILE_COPY_HOST_TO_DEVICE));
            TRY(partile_deposit(c, &t, n, &s.pos, dv, NULL, dfield, NULL));
            TRY(fetch(c, fu, dfield, fb));
        }
    done:
        free_positions(c, &s);
        partile_free(c, dv), partile_free(c, dsz), partile_free(c, dfield);
        partile_free(c, doff), partile_free(c, dout);
        if (st < 0)
            goto out;
    }
    long long d;
    r->cases++;
    if ((d = first_diff(fg, fr, (size_t)total * m)) >= 0) {
        r->mismatches++;
        fprintf(log, "    deposit (sorted) shape %d centering %d dim %d: field[%lld] = %a, reference %a\n",
                (int)shape, (int)cent, g->dim, d, fg[d], fr[d]);
    }
    r->cases++;
    if ((d = first_diff(fcg, fcr, (size_t)total * m)) >= 0) {
        r->mismatches++;
        fprintf(log, "    deposit (sorted, by cell) shape %d centering %d dim %d: field[%lld] = %a, "
                     "reference %a\n", (int)shape, (int)cent, g->dim, d, fcg[d], fcr[d]);
    }
    /* any order: within 1e-12 of |f0| + Σ|v| (a bound on Σ W|v|) */
    r->cases++;
    double vsum[PARTILE_MAX_COMPONENTS] = { 0 };
    for (size_t p = 0; p < n; p++)
        for (int j = 0; j < m; j++)
            vsum[j] += fabs(v[p * m + j]);
    for (long long i = 0; i < (long long)total * m; i++)
        if (!(fabs(fu[i] - fr[i]) <= 1e-12 * (fabs(f0[i]) + vsum[i % m]))) {
            r->mismatches++;
            fprintf(log, "    deposit (any order) shape %d centering %d dim %d: field[%lld] = %.17g, "
                         "reference %.17g\n", (int)shape, (int)cent, g->dim, i, fu[i], fr[i]);
            break;
        }
    r->cases++;
    if ((d = first_diff(gg, gr, n * m)) >= 0) {
        r->mismatches++;
        fprintf(log, "    gather shape %d centering %d dim %d: value[%lld] = %a, reference %a\n",
                (int)shape, (int)cent, g->dim, d, gg[d], gr[d]);
    }
out:
    free(x), free(v), free(sz), free(f0), free(fr), free(fg), free(gr), free(gg), free(fu);
    free(fcr), free(fcg);
    free_out(&so);
    return st;
}

int partile_check_transfer(partile_context_t *ctx, uint64_t seed, FILE *log,
                           partile_particle_check_t *r)
{
    memset(r, 0, sizeof *r);
    partile_context_t *ref = NULL;
    int st = partile_context_create("reference", 0, &ref);
    if (st < 0)
        return st;
    uint64_t rng = seed ^ 0xde905ull;
    for (int dim = 1; dim <= 3 && st >= 0; dim++)
        for (int shape = 0; shape < 4 && st >= 0; shape++)
            for (int cent = 0; cent < 2 && st >= 0; cent++) {
                partile_grid_t g = make_grid(dim, (shape + cent) % 2, 6.0, 3000);
                st = transfer_case(ctx, ref, &g, (partile_shape_t)shape, (partile_centering_t)cent,
                                   dim == 2 ? 3 : 1, 3000, &rng, log, r);
            }
    partile_context_destroy(ref);
    return st;
}

/* Charges in [-0.5, 1.5) and ω in [-2, 2)^3 (SoA) per particle. */
static void random_charges(size_t n, uint64_t *rng, double *q, double *w)
{
    for (size_t p = 0; p < n; p++) {
        q[p] = 2 * uniform(rng) - 0.5;
        for (int a = 0; a < 3; a++)
            w[a * n + p] = 4 * uniform(rng) - 2;
    }
}

/* A mass-matrix case's parameters: σ = 0.75, every other field its default. */
static partile_mass_params_t case_params(const partile_grid_t *g, partile_shape_t shape,
                                         partile_mass_kind_t kind)
{
    partile_mass_params_t p;
    memset(&p, 0, sizeof p);
    p.grid = g;
    p.shape = shape;
    p.kind = kind;
    p.sigma = 0.75;
    return p;
}

/* One mass-matrix case: bitwise mode (the tile kernel and the FMA-per-cell
 * kernel) equal to the reference to the bit, relaxed mode within 1e-12 of
 * the largest entry. */
static int mass_case(partile_context_t *ctx, partile_context_t *ref, const partile_grid_t *g,
                     partile_shape_t shape, partile_mass_kind_t kind, size_t n, uint64_t *rng,
                     FILE *log, partile_particle_check_t *r)
{
    int64_t ncells;
    partile_grid_cell_count(g, &ncells);
    partile_mass_layout_t L;
    int st = partile_mass_layout(g, shape, kind, &L);
    if (st < 0)
        return st;
    const size_t sb = L.entries * 8;
    double *x = malloc(3 * n * 8), *q = malloc(n * 8), *w = malloc(3 * n * 8);
    double *want = malloc(sb), *got = malloc(sb), *relaxed = malloc(sb), *fma_cell = malloc(sb);
    sort_out so;
    memset(&so, 0, sizeof so);
    if (!x || !q || !w || !want || !got || !relaxed || !fma_cell || alloc_out(&so, ncells, n)) {
        st = PARTILE_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    if ((st = sorted_particles(ref, g, n, rng, x, &so)) < 0)
        goto out;
    random_charges(n, rng, q, w);
    /* the backend: tiles bitwise, tiles relaxed, FMA per cell; then the reference */
    double *const result[4] = { got, relaxed, fma_cell, want };
    for (int pass = 0; pass < 4; pass++) {
        partile_context_t *c = pass == 3 ? ref : ctx;
        staged s;
        void *dq = NULL, *dw = NULL, *doff = NULL, *dS = NULL;
        TRY(stage_positions(c, g, x, n, 0, &s));
        TRY(stage(c, q, n * 8, &dq));
        TRY(stage(c, w, 3 * n * 8, &dw));
        TRY(stage(c, so.off, (size_t)(ncells + 1) * 8, &doff));
        TRY(stage(c, NULL, sb, &dS));
        partile_vectors_t om = { PARTILE_DTYPE_FLOAT64,
                                 { dw, (double *)dw + n, (double *)dw + 2 * n } };
        partile_mass_params_t p = case_params(g, shape, kind);
        p.mode = pass == 1 ? PARTILE_MASS_RELAXED : PARTILE_MASS_BITWISE;
        p.algorithm = pass == 2 ? PARTILE_MASS_FMA_PER_CELL : PARTILE_MASS_TILES;
        TRY(partile_mass_assemble(c, &p, n, &s.pos, doff, dq, &om, dS, NULL));
        TRY(fetch(c, result[pass], dS, sb));
    done:
        free_positions(c, &s);
        partile_free(c, dq), partile_free(c, dw), partile_free(c, doff), partile_free(c, dS);
        if (st < 0)
            goto out;
    }
    long long d;
    r->cases++;
    if ((d = first_diff(got, want, L.entries)) >= 0) {
        r->mismatches++;
        fprintf(log, "    mass (bitwise) shape %d kind %d dim %d: storage[%lld] = %a, reference %a\n",
                (int)shape, (int)kind, g->dim, d, got[d], want[d]);
    }
    r->cases++;
    if ((d = first_diff(fma_cell, want, L.entries)) >= 0) {
        r->mismatches++;
        fprintf(log, "    mass (FMA per cell) shape %d kind %d dim %d: storage[%lld] = %a, "
                     "reference %a\n", (int)shape, (int)kind, g->dim, d, fma_cell[d], want[d]);
    }
    r->cases++;
    double peak = 0;
    for (size_t e = 0; e < L.entries; e++)
        peak = fabs(want[e]) > peak ? fabs(want[e]) : peak;
    for (size_t e = 0; e < L.entries; e++)
        if (!(fabs(relaxed[e] - want[e]) <= 1e-12 * peak)) {
            r->mismatches++;
            fprintf(log, "    mass (relaxed) shape %d kind %d dim %d: storage[%zu] = %.17g, "
                         "reference %.17g\n", (int)shape, (int)kind, g->dim, e, relaxed[e], want[e]);
            break;
        }
out:
    free(x), free(q), free(w), free(want), free(got), free(relaxed), free(fma_cell);
    free_out(&so);
    return st;
}

typedef int (*mass_case_fn)(partile_context_t *ctx, partile_context_t *ref,
                            const partile_grid_t *g, partile_shape_t shape,
                            partile_mass_kind_t kind, size_t n, uint64_t *rng, FILE *log,
                            partile_particle_check_t *r);

/* A mass-matrix group: case_fn on 1–3-D grids, CIC and TSC, scalar and
 * tensor, with 2000 fresh particles each (salt: the group's random stream). */
static int run_mass_grids(partile_context_t *ctx, uint64_t seed, uint64_t salt, mass_case_fn case_fn,
                          FILE *log, partile_particle_check_t *r)
{
    memset(r, 0, sizeof *r);
    partile_context_t *ref = NULL;
    int st = partile_context_create("reference", 0, &ref);
    if (st < 0)
        return st;
    uint64_t rng = seed ^ salt;
    for (int dim = 1; dim <= 3 && st >= 0; dim++)
        for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC && st >= 0; shape++)
            for (int kind = 0; kind < 2 && st >= 0; kind++) {
                /* TSC on a periodic axis needs 5 cells: 40 particles per cell keeps that */
                partile_grid_t g = make_grid(dim, (dim + kind) % 2, 10.0, 2000);
                st = case_fn(ctx, ref, &g, (partile_shape_t)shape, (partile_mass_kind_t)kind, 2000,
                             &rng, log, r);
            }
    partile_context_destroy(ref);
    return st;
}

int partile_check_mass(partile_context_t *ctx, uint64_t seed, FILE *log,
                       partile_particle_check_t *r)
{
    return run_mass_grids(ctx, seed, 0x3a55ull, mass_case, log, r);
}

/* One mass-matrix apply case (include/partile/apply.h): matrix-free FP64 in
 * both orders, assembled from the reference's storage, and matrix-free
 * FP32, each equal to the reference to the bit. */
static int apply_case(partile_context_t *ctx, partile_context_t *ref, const partile_grid_t *g,
                      partile_shape_t shape, partile_mass_kind_t kind, size_t n, uint64_t *rng,
                      FILE *log, partile_particle_check_t *r)
{
    int64_t ncells;
    partile_grid_cell_count(g, &ncells);
    partile_mass_layout_t L;
    int st = partile_mass_layout(g, shape, kind, &L);
    if (st < 0)
        return st;
    const int m = kind == PARTILE_MASS_TENSOR ? 3 : 1;
    const size_t sb = L.entries * 8, yn = (size_t)L.points * m;
    enum { POINT, CELL, ASSEMBLED, OUTS };
    static const char *const what[OUTS] = { "matrix-free by point", "matrix-free by cell",
                                            "assembled" };
    double *x = malloc(3 * n * 8), *q = malloc(n * 8), *w = malloc(3 * n * 8), *S = malloc(sb);
    double *xv = malloc(yn * 8), *y[2] = { malloc(OUTS * yn * 8), malloc(OUTS * yn * 8) };
    float *qf = malloc(n * 4), *wf = malloc(3 * n * 4), *xvf = malloc(yn * 4);
    float *yf[2] = { malloc(yn * 4), malloc(yn * 4) };
    sort_out so;
    memset(&so, 0, sizeof so);
    if (!x || !q || !w || !S || !xv || !y[0] || !y[1] || !qf || !wf || !xvf || !yf[0] ||
        !yf[1] || alloc_out(&so, ncells, n)) {
        st = PARTILE_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    if ((st = sorted_particles(ref, g, n, rng, x, &so)) < 0)
        goto out;
    random_charges(n, rng, q, w);
    for (size_t p = 0; p < n; p++)
        qf[p] = (float)q[p];
    for (size_t e = 0; e < 3 * n; e++)
        wf[e] = (float)w[e];
    for (size_t e = 0; e < yn; e++) {
        xv[e] = 2 * uniform(rng) - 1;
        xvf[e] = (float)xv[e];
    }
    partile_mass_params_t p = case_params(g, shape, kind);
    {
        partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { x, x + n, x + 2 * n } };
        partile_vectors_t om = { PARTILE_DTYPE_FLOAT64, { w, w + n, w + 2 * n } };
        if ((st = partile_mass_assemble(ref, &p, n, &pos, so.off, q, &om, S, NULL)) < 0)
            goto out;
    }
    /* the backend (0), then the reference (1) */
    for (int pass = 0; pass < 2; pass++) {
        partile_context_t *c = pass ? ref : ctx;
        staged s;
        void *dq = NULL, *dw = NULL, *doff = NULL, *dS = NULL, *dx = NULL, *dy = NULL;
        void *dqf = NULL, *dwf = NULL, *dxf = NULL, *dyf = NULL;
        TRY(stage_positions(c, g, x, n, 0, &s));
        TRY(stage(c, q, n * 8, &dq));
        TRY(stage(c, w, 3 * n * 8, &dw));
        TRY(stage(c, so.off, (size_t)(ncells + 1) * 8, &doff));
        TRY(stage(c, S, sb, &dS));
        TRY(stage(c, xv, yn * 8, &dx));
        TRY(stage(c, NULL, yn * 8, &dy));
        TRY(stage(c, qf, n * 4, &dqf));
        TRY(stage(c, wf, 3 * n * 4, &dwf));
        TRY(stage(c, xvf, yn * 4, &dxf));
        TRY(stage(c, NULL, yn * 4, &dyf));
        partile_vectors_t om = { PARTILE_DTYPE_FLOAT64,
                                 { dw, (double *)dw + n, (double *)dw + 2 * n } };
        partile_vectors_t omf = { PARTILE_DTYPE_FLOAT32,
                                  { dwf, (float *)dwf + n, (float *)dwf + 2 * n } };
        for (int k = 0; k < OUTS; k++) {
            p.order = k == CELL ? PARTILE_ORDER_BY_CELL : PARTILE_ORDER_BY_POINT;
            if (k == ASSEMBLED)
                TRY(partile_mass_apply_assembled(c, &p, dS, dx, dy));
            else
                TRY(partile_mass_apply_matfree(c, &p, n, &s.pos, doff, dq, &om, dx, dy, NULL));
            TRY(fetch(c, y[pass] + k * yn, dy, yn * 8));
        }
        p.order = PARTILE_ORDER_BY_POINT;
        TRY(partile_mass_apply_matfree_f32(c, &p, n, &s.pos, doff, dqf, &omf, dxf, dyf, NULL));
        TRY(fetch(c, yf[pass], dyf, yn * 4));
    done:
        free_positions(c, &s);
        partile_free(c, dq), partile_free(c, dw), partile_free(c, doff), partile_free(c, dS);
        partile_free(c, dx), partile_free(c, dy), partile_free(c, dqf), partile_free(c, dwf);
        partile_free(c, dxf), partile_free(c, dyf);
        if (st < 0)
            goto out;
    }
    for (int k = 0; k < OUTS; k++) {
        long long d;
        r->cases++;
        if ((d = first_diff(y[0] + k * yn, y[1] + k * yn, yn)) >= 0) {
            r->mismatches++;
            fprintf(log, "    apply (%s) shape %d kind %d dim %d: y[%lld] = %a, reference %a\n",
                    what[k], (int)shape, (int)kind, g->dim, d, y[0][k * yn + d], y[1][k * yn + d]);
        }
    }
    r->cases++;
    if (memcmp(yf[0], yf[1], yn * 4) != 0) {
        size_t e = 0;
        while (memcmp(&yf[0][e], &yf[1][e], 4) == 0)
            e++;
        r->mismatches++;
        fprintf(log, "    apply (matrix-free FP32) shape %d kind %d dim %d: y[%zu] = %a, "
                     "reference %a\n", (int)shape, (int)kind, g->dim, e, yf[0][e], yf[1][e]);
    }
out:
    free(x), free(q), free(w), free(S), free(xv), free(y[0]), free(y[1]);
    free(qf), free(wf), free(xvf), free(yf[0]), free(yf[1]);
    free_out(&so);
    return st;
}

/* 3-D CIC by cell takes the GPUs' corner passes */
int partile_check_apply(partile_context_t *ctx, uint64_t seed, FILE *log,
                        partile_particle_check_t *r)
{
    return run_mass_grids(ctx, seed, 0xa991ull, apply_case, log, r);
}
