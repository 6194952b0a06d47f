/* Random, often bad, input to every particle operation of the C API (sort,
 * bin, resort, permute, sort interval, deposit, gather, the mass matrix and
 * its applies and export, pairs and pairs_select; the tile interface has
 * its own conformance check, `partile check`): grids with zero, negative,
 * NaN, infinite, subnormal and huge corners and spacings; positions,
 * charges, ω, B, OVERLAP sizes and field values with NaN, ±inf, ±0,
 * subnormals and extremes, on and just below the upper bound; unknown enum
 * values; cell lists the positions do not follow; permutations with an
 * entry out of range or repeated. Every call must return (no crash; in the
 * sanitize build, no report), and a failure must come with a detail and
 * leave the outputs (poisoned before; permute's arrays: as they were)
 * untouched.
 *
 * Without an argument it runs on the reference backend. With a backend
 * name (test_api_fuzz cuda) it runs each call on that backend and on the
 * reference, all arrays in context memory, and also requires the same
 * status and bad particle from both (a GPU may answer UNSUPPORTED where the
 * reference runs, and run what the reference does not: the unsorted atomic
 * assembly), and where both succeed on finite input values, the same
 * bits wherever the API promises them: sort, binning, permute, gathers, the
 * sorted deposit, the bitwise FP64 mass matrix, both applies and FP64 pair
 * interactions (NaN equals NaN, payloads aside). Exit 77 where that backend
 * cannot run. A fixed seed, so that every run repeats;
 * PARTILE_FUZZ_ITERATIONS (3000 cases, 1000 with a backend) and
 * PARTILE_FUZZ_SEED change both; PARTILE_FUZZ_REPORT_ALL lists every broken
 * promise instead of stopping at the first. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "partile/partile.h"
#include "tests/sort_util.h"

/* ---- random draws ---- */

static uint64_t rng_state;
static double uniform(void) { return su_uniform(&rng_state); }
static int pick(int n) { return (int)(su_next(&rng_state) % (uint64_t)n); }
static int rarely(int n) { return pick(n) == 0; } /* true once in n draws */

static double special_value(void)
{
    static const double v[] = { NAN,     INFINITY, -INFINITY, 0.0,    -0.0,   5e-324,
                                -5e-324, DBL_MAX,  -DBL_MAX,  1e300,  -1e300, 1e-300,
                                0x1p52,  0x1p53,   -0x1p63,   1.0,    0.5 };
    return v[pick((int)(sizeof v / sizeof v[0]))];
}
/* plain, or once in n draws a special value */
static double mostly(double plain, int n) { return rarely(n) ? special_value() : plain; }

/* Bits are compared only where every input value is finite: the bitwise
 * promise is for numbers, and a GPU may multiply an infinite input by a
 * zero the reference never forms (padding of a tile, say). */
static int finite_doubles(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}
static int finite_floats(const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}

/* ---- context memory ---- */

#define POISON 0x5a
#define MAX_BUFFERS 24

/* A call's buffers in one context's memory, freed together. */
typedef struct arena {
    partile_context_t *ctx;
    void *ptr[MAX_BUFFERS];
    int count;
} arena;

static void *arena_alloc(arena *A, size_t bytes)
{
    void *p = NULL;
    assert_true(A->count < MAX_BUFFERS);
    assert_int_equal(partile_malloc(A->ctx, bytes + 16, &p), PARTILE_SUCCESS);
    A->ptr[A->count++] = p;
    return p;
}
/* A context copy of bytes of host (NULL: NULL). */
static void *upload(arena *A, const void *host, size_t bytes)
{
    if (!host)
        return NULL;
    void *p = arena_alloc(A, bytes);
    if (bytes)
        assert_int_equal(partile_memcpy(A->ctx, p, host, bytes, PARTILE_COPY_HOST_TO_DEVICE), 0);
    return p;
}
static void *poisoned(arena *A, size_t bytes)
{
    void *p = arena_alloc(A, bytes);
    assert_int_equal(partile_memset(A->ctx, p, POISON, bytes + 16), PARTILE_SUCCESS);
    return p;
}
static void arena_free(arena *A)
{
    for (int i = 0; i < A->count; i++)
        partile_free(A->ctx, A->ptr[i]);
    A->count = 0;
}

/* ---- outcomes ---- */

enum { EXACT, DOUBLES, FLOATS }; /* how two results compare */
#define MAX_OUTPUTS 5

/* One call on one backend: its status, bad particle, detail, and its
 * outputs copied to the host. */
typedef struct outcome {
    int status;
    int64_t bad;
    char detail[256];
    int outputs;
    unsigned char *out[MAX_OUTPUTS];
    size_t bytes[MAX_OUTPUTS];
    int kind[MAX_OUTPUTS];
    int comparable; /* the API promises the same bits for these outputs */
    int in_place;   /* the outputs held input (permute checks them itself), not poison */
} outcome;

static void begin(outcome *o) { memset(o, 0, sizeof *o), o->bad = -1; }

static void finish(outcome *o, int status, int64_t bad)
{
    o->status = status;
    o->bad = bad;
    snprintf(o->detail, sizeof o->detail, "%s", partile_last_error_detail());
}

/* Copies output dev (context memory) back into o. */
static void keep_output(outcome *o, partile_context_t *ctx, const void *dev, size_t bytes,
                        int kind)
{
    assert_true(o->outputs < MAX_OUTPUTS);
    unsigned char *h = malloc(bytes + 1);
    assert_non_null(h);
    if (bytes)
        assert_int_equal(partile_memcpy(ctx, h, dev, bytes, PARTILE_COPY_DEVICE_TO_HOST), 0);
    o->out[o->outputs] = h, o->bytes[o->outputs] = bytes, o->kind[o->outputs] = kind;
    o->outputs++;
}

static void drop(outcome *o)
{
    for (int i = 0; i < o->outputs; i++)
        free(o->out[i]);
    o->outputs = 0;
}

typedef struct tally {
    long long calls, succeeded, compared;
} tally;
static tally total;

/* A broken promise: fails the test at once or, with PARTILE_FUZZ_REPORT_ALL
 * set, is printed and counted and the test fails at its end, so that one
 * run (one device call) lists every kind of difference. */
static long long problems;
static int report_all;
static void problem(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static void problem(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!report_all)
        fail_msg("%s", msg);
    if (++problems <= 500)
        printf("PROBLEM: %s\n", msg);
}

/* The promises of one outcome alone. */
static void judge(const char *op, const char *backend, int iteration, const outcome *o)
{
    total.calls++;
    if (o->status >= 0) {
        total.succeeded++;
        return;
    }
    if (!o->detail[0])
        problem("iteration %d, %s on %s: status %d (%s) without a detail", iteration, op, backend,
                o->status, partile_status_string(o->status));
    for (int i = 0; i < o->outputs && !o->in_place; i++)
        for (size_t b = 0; b < o->bytes[i]; b++)
            if (o->out[i][b] != POISON) {
                problem("iteration %d, %s on %s: status %d (%s) but output %d was written",
                        iteration, op, backend, o->status, o->detail, i);
                break;
            }
}

static int same_value(const unsigned char *a, const unsigned char *b, size_t at, int kind)
{
    if (kind == DOUBLES) {
        double x, y;
        memcpy(&x, a + at, 8), memcpy(&y, b + at, 8);
        return (isnan(x) && isnan(y)) || memcmp(&x, &y, 8) == 0;
    }
    if (kind == FLOATS) {
        float x, y;
        memcpy(&x, a + at, 4), memcpy(&y, b + at, 4);
        return (isnan(x) && isnan(y)) || memcmp(&x, &y, 4) == 0;
    }
    return a[at] == b[at];
}

/* A backend's outcome against the reference's for the same call. */
static void compare(const char *op, const char *backend, int iteration, const outcome *g,
                    const outcome *r)
{
    if (g->status == PARTILE_ERROR_UNSUPPORTED && r->status >= 0)
        return; /* the backend lacks what the reference runs */
    if (r->status == PARTILE_ERROR_UNSUPPORTED && g->status != PARTILE_ERROR_UNSUPPORTED)
        return; /* and the other way: the unsorted atomic assembly, which the reference
                 * lacks (judge has checked the backend's own promises) */
    if ((g->status >= 0) != (r->status >= 0) || (g->status < 0 && g->status != r->status)) {
        problem("iteration %d, %s: %s says %d (%s), the reference %d (%s)", iteration, op, backend,
                g->status, g->detail, r->status, r->detail);
        return;
    }
    if (g->status < 0) {
        if (g->bad != r->bad)
            problem("iteration %d, %s: %s names particle %lld, the reference %lld (%s)",
                    iteration, op, backend, (long long)g->bad, (long long)r->bad, r->detail);
        return;
    }
    if (!g->comparable || !r->comparable)
        return;
    total.compared++;
    for (int i = 0; i < g->outputs; i++) {
        const size_t step = g->kind[i] == DOUBLES ? 8 : g->kind[i] == FLOATS ? 4 : 1;
        for (size_t at = 0; at < g->bytes[i]; at += step)
            if (!same_value(g->out[i], r->out[i], at, g->kind[i])) {
                problem("iteration %d, %s: output %d differs from the reference's at byte %zu",
                        iteration, op, i, at);
                break;
            }
    }
}

/* ---- a case: grid and particles on the host ---- */

typedef struct fuzz_case {
    partile_grid_t g;
    int64_t cells;
    size_t n;
    double *x[3];          /* positions as drawn */
    partile_dtype_t type;  /* how they are read (FLOAT32 reads the doubles' bytes) */
    double *sx[3];         /* in the reference's sorted order (as drawn if it failed) */
    int64_t *off, *cell;   /* the reference's cell list and sorted cells */
    int sorted;            /* the reference's sort succeeded */
} fuzz_case;

static int draw_case(fuzz_case *c)
{
    static const int64_t counts[] = { 1, 2, 3, 4, 5, 6, 8, 13 };
    partile_grid_t *g = &c->g;
    g->dim = rarely(40) ? (pick(2) ? 0 : 4) : 1 + pick(3);
    c->cells = 1;
    for (int a = 0; a < 3; a++) {
        g->cells[a] = rarely(50) ? (pick(2) ? 0 : -3) : counts[pick(8)];
        g->periodic[a] = pick(2);
        g->lower[a] = mostly(uniform() * 4 - 2, 8);
        g->spacing[a] = mostly(0.1 + uniform(), 8);
        if (a < g->dim && g->cells[a] > 0)
            c->cells *= g->cells[a];
    }
    if (c->cells > 100000)
        return 0;
    c->n = rarely(4) ? 0 : 1 + (size_t)pick(60);
    for (int a = 0; a < 3; a++) {
        c->x[a] = malloc((c->n + 1) * sizeof(double));
        c->sx[a] = malloc((c->n + 1) * sizeof(double));
        const double L = (double)g->cells[a] * g->spacing[a];
        for (size_t i = 0; i < c->n; i++)
            c->x[a][i] = !rarely(30) ? g->lower[a] + uniform() * L
                         : pick(2)   ? special_value()
                                     : g->lower[a] + (pick(2) ? L : nextafter(L, -INFINITY));
    }
    c->type = rarely(30) ? (partile_dtype_t)pick(5) : PARTILE_DTYPE_FLOAT64;
    c->off = malloc((size_t)(c->cells + 1) * sizeof(int64_t));
    c->cell = malloc((c->n + 1) * sizeof(int64_t));
    return 1;
}

static void free_case(fuzz_case *c)
{
    for (int a = 0; a < 3; a++)
        free(c->x[a]), free(c->sx[a]);
    free(c->off), free(c->cell);
}

/* Positions (as drawn, or sorted) in A's context. */
static partile_vectors_t positions(arena *A, const fuzz_case *c, int sorted)
{
    partile_vectors_t v = { c->type, { NULL, NULL, NULL } };
    for (int a = 0; a < 3; a++)
        v.axis[a] = upload(A, sorted ? c->sx[a] : c->x[a], c->n * sizeof(double));
    return v;
}

/* ---- the operations ---- */

static void op_sort(partile_context_t *ctx, const fuzz_case *c, outcome *o)
{
    arena A = { ctx, { 0 }, 0 };
    const partile_vectors_t pos = positions(&A, c, 0);
    const size_t ob = (size_t)(c->cells + 1) * 8, pb = c->n * 8;
    int64_t *off = poisoned(&A, ob), *perm = poisoned(&A, pb), *cell = poisoned(&A, pb), bad = -1;
    finish(o, partile_sort(ctx, &c->g, c->n, &pos, off, perm, cell, &bad), bad);
    keep_output(o, ctx, perm, pb, EXACT);
    keep_output(o, ctx, cell, pb, EXACT);
    keep_output(o, ctx, off, ob, EXACT);
    o->comparable = 1;
    arena_free(&A);
}

static void op_bin(partile_context_t *ctx, const fuzz_case *c, outcome *o)
{
    arena A = { ctx, { 0 }, 0 };
    const partile_vectors_t pos = positions(&A, c, 0);
    int64_t *bins = poisoned(&A, c->n * 8), bad = -1;
    finish(o, partile_bin(ctx, &c->g, c->n, &pos, bins, &bad), bad);
    keep_output(o, ctx, bins, c->n * 8, EXACT);
    o->comparable = 1;
    arena_free(&A);
}

/* old_cell: the reference's sorted cells, one of them broken if asked */
static void op_resort(partile_context_t *ctx, const fuzz_case *c, const int64_t *old_cell,
                      outcome *o)
{
    arena A = { ctx, { 0 }, 0 };
    const partile_vectors_t pos = positions(&A, c, 1);
    const size_t ob = (size_t)(c->cells + 1) * 8, pb = c->n * 8;
    const int64_t *old_off = upload(&A, c->off, ob), *oc = upload(&A, old_cell, pb);
    int64_t *off = poisoned(&A, ob), *perm = poisoned(&A, pb), bad = -1;
    finish(o, partile_resort(ctx, &c->g, c->n, &pos, old_off, oc, off, perm, NULL, &bad), bad);
    keep_output(o, ctx, perm, pb, EXACT);
    keep_output(o, ctx, off, ob, EXACT);
    o->comparable = 1;
    arena_free(&A);
}

static void op_interval(partile_context_t *ctx, const fuzz_case *c, double alpha, double dt,
                        outcome *o)
{
    arena A = { ctx, { 0 }, 0 };
    const partile_vectors_t vel = positions(&A, c, 0);
    partile_sort_advice_t advice;
    memset(&advice, POISON, sizeof advice);
    finish(o, partile_sort_interval(ctx, &c->g, c->n, &vel, alpha, dt, &advice), -1);
    o->out[0] = malloc(sizeof advice);
    memcpy(o->out[0], &advice, sizeof advice);
    o->bytes[0] = sizeof advice, o->kind[0] = EXACT, o->outputs = 1;
    o->comparable = 1;
    arena_free(&A);
}

/* A transfer's draw: t (grid and sizes set by the op), values, field. */
typedef struct transfer_draw {
    partile_transfer_t t;
    int64_t npoints;
    double *sizes, *values, *field;
    int with_sizes, with_offsets;
} transfer_draw;

static int draw_transfer(const fuzz_case *c, transfer_draw *d)
{
    memset(d, 0, sizeof *d);
    d->t.shape = (partile_shape_t)(rarely(40) ? 5 + pick(3) : pick(4));
    d->t.centering = (partile_centering_t)pick(2);
    d->t.components = rarely(40) ? (pick(2) ? 0 : PARTILE_MAX_COMPONENTS + 1)
                                 : 1 + pick(PARTILE_MAX_COMPONENTS);
    d->t.order = (partile_deposit_order_t)(rarely(10) ? 7 : pick(2));
    d->with_sizes = !rarely(10);
    d->with_offsets = c->sorted && pick(3);
    int64_t points[3];
    if (partile_field_shape(&c->g, d->t.centering, points, &d->npoints) < 0 ||
        d->npoints > 1000000 || d->t.components < 1 || d->t.components > PARTILE_MAX_COMPONENTS)
        return 0;
    const size_t m = (size_t)d->t.components;
    d->sizes = malloc((c->n + 1) * 8);
    d->values = malloc((c->n * m + 1) * 8);
    d->field = malloc(((size_t)d->npoints * m + 1) * 8);
    for (size_t i = 0; i < c->n; i++)
        d->sizes[i] = mostly(0.05 + 0.05 * uniform(), 10);
    for (size_t i = 0; i < c->n * m; i++)
        d->values[i] = mostly(uniform(), 20);
    for (size_t i = 0; i < (size_t)d->npoints * m; i++)
        d->field[i] = mostly(uniform(), 20);
    return 1;
}

static void free_transfer(transfer_draw *d) { free(d->sizes), free(d->values), free(d->field); }

/* The transfer of d on c's grid, its sizes and the sorted positions in A. */
static partile_transfer_t transfer_inputs(arena *A, const fuzz_case *c, const transfer_draw *d,
                                          partile_vectors_t *pos)
{
    *pos = positions(A, c, 1);
    partile_transfer_t t = d->t;
    t.grid = &c->g;
    t.sizes = d->with_sizes ? upload(A, d->sizes, c->n * 8) : NULL;
    return t;
}

static void op_deposit(partile_context_t *ctx, const fuzz_case *c, const transfer_draw *d,
                       outcome *o)
{
    arena A = { ctx, { 0 }, 0 };
    partile_vectors_t pos;
    const partile_transfer_t t = transfer_inputs(&A, c, d, &pos);
    const size_t fb = (size_t)d->npoints * (size_t)t.components * 8;
    const double *values = upload(&A, d->values, c->n * (size_t)t.components * 8);
    const int64_t *off = d->with_offsets ? upload(&A, c->off, (size_t)(c->cells + 1) * 8) : NULL;
    double *field = poisoned(&A, fb);
    int64_t bad = -1;
    finish(o, partile_deposit(ctx, &t, c->n, &pos, values, off, field, &bad), bad);
    keep_output(o, ctx, field, fb, DOUBLES);
    /* unsorted: atomics on a GPU, equal to rounding only */
    o->comparable = off != NULL && finite_doubles(d->values, c->n * (size_t)t.components) &&
                    (!t.sizes || finite_doubles(d->sizes, c->n));
    arena_free(&A);
}

static void op_gather(partile_context_t *ctx, const fuzz_case *c, const transfer_draw *d,
                      outcome *o)
{
    arena A = { ctx, { 0 }, 0 };
    partile_vectors_t pos;
    const partile_transfer_t t = transfer_inputs(&A, c, d, &pos);
    const size_t m = (size_t)t.components;
    const double *field = upload(&A, d->field, (size_t)d->npoints * m * 8);
    double *back = poisoned(&A, c->n * m * 8);
    int64_t bad = -1;
    finish(o, partile_gather(ctx, &t, c->n, &pos, field, back, &bad), bad);
    keep_output(o, ctx, back, c->n * m * 8, DOUBLES);
    o->comparable = finite_doubles(d->field, (size_t)d->npoints * m) &&
                    (!t.sizes || finite_doubles(d->sizes, c->n));
    arena_free(&A);
}

/* The mass matrix's draw: params (grid and B set by the op), its inputs. */
typedef struct mass_draw {
    partile_mass_params_t p;
    partile_mass_layout_t L;
    double *q, *w[3], *B, *x, *storage;
    float *qf, *wf[3], *xf;
    int with_B;
} mass_draw;

static int draw_mass(const fuzz_case *c, mass_draw *d)
{
    memset(d, 0, sizeof *d);
    partile_mass_params_t *p = &d->p;
    p->shape = (partile_shape_t)(rarely(10) ? pick(5) : 1 + pick(2));
    p->kind = (partile_mass_kind_t)(rarely(10) ? 3 : pick(2));
    p->sigma = mostly(uniform(), 10);
    p->mode = (partile_mass_mode_t)(rarely(10) ? 5 : pick(2));
    p->algorithm = (partile_mass_algorithm_t)(rarely(10) ? 9 : pick(3));
    p->precision = (partile_mass_precision_t)(rarely(10) ? 4 : pick(2));
    p->order = (partile_deposit_order_t)(rarely(10) ? 3 : pick(2));
    p->beta_over_c = mostly(uniform(), 10);
    d->with_B = rarely(3);
    if (partile_mass_layout(&c->g, p->shape, p->kind, &d->L) < 0 || d->L.entries > 20000000 ||
        d->L.points > 1000000)
        return 0;
    /* x and y: 3 values per point for the tensor, 1 for the scalar */
    const size_t n = c->n, xs = (size_t)d->L.points * (d->p.kind == PARTILE_MASS_TENSOR ? 3 : 1);
    d->q = malloc((n + 1) * 8), d->qf = malloc((n + 1) * 4);
    d->B = malloc(((size_t)d->L.points * 3 + 1) * 8);
    d->x = malloc((xs + 1) * 8), d->xf = malloc((xs + 1) * 4);
    d->storage = malloc((d->L.entries + 1) * 8);
    for (int a = 0; a < 3; a++) {
        d->w[a] = malloc((n + 1) * 8), d->wf[a] = malloc((n + 1) * 4);
        for (size_t i = 0; i < n; i++)
            d->w[a][i] = mostly(uniform(), 60), d->wf[a][i] = (float)d->w[a][i];
    }
    for (size_t i = 0; i < n; i++)
        d->q[i] = mostly(uniform(), 20), d->qf[i] = (float)d->q[i];
    for (int64_t i = 0; i < d->L.points * 3; i++)
        d->B[i] = mostly(uniform(), 50);
    for (size_t i = 0; i < xs; i++)
        d->x[i] = mostly(uniform(), 30), d->xf[i] = (float)d->x[i];
    for (size_t e = 0; e < d->L.entries; e++)
        d->storage[e] = uniform();
    return 1;
}

static void free_mass(mass_draw *d)
{
    for (int a = 0; a < 3; a++)
        free(d->w[a]), free(d->wf[a]);
    free(d->q), free(d->qf), free(d->B), free(d->x), free(d->xf), free(d->storage);
}

/* op 0 assemble, 1 matrix-free, 2 assembled apply, 3 FP32 matrix-free */
static void op_mass(partile_context_t *ctx, const fuzz_case *c, const mass_draw *d, int op,
                    outcome *o)
{
    arena A = { ctx, { 0 }, 0 };
    /* x and y: 3 values per point for the tensor, 1 for the scalar */
    const size_t n = c->n, xs = (size_t)d->L.points * (d->p.kind == PARTILE_MASS_TENSOR ? 3 : 1);
    partile_mass_params_t p = d->p;
    p.grid = &c->g;
    p.bfield = d->with_B ? upload(&A, d->B, (size_t)d->L.points * 24) : NULL;
    const int64_t *off = c->sorted ? upload(&A, c->off, (size_t)(c->cells + 1) * 8) : NULL;
    int64_t bad = -1;
    /* every input finite (see finite_doubles) */
    const int field_finite = !d->with_B || (finite_doubles(d->B, (size_t)d->L.points * 3) &&
                                            isfinite(p.beta_over_c));
    const int finite64 = isfinite(p.sigma) && field_finite && finite_doubles(d->q, n) &&
                         finite_doubles(d->x, xs);
    if (op == 3) {
        const partile_vectors_t pos = positions(&A, c, 1);
        partile_vectors_t om = { PARTILE_DTYPE_FLOAT32, { NULL, NULL, NULL } };
        for (int a = 0; a < 3; a++)
            om.axis[a] = upload(&A, d->wf[a], n * 4);
        const float *q = upload(&A, d->qf, n * 4), *x = upload(&A, d->xf, xs * 4);
        float *y = poisoned(&A, xs * 4);
        finish(o, partile_mass_apply_matfree_f32(ctx, &p, n, &pos, off, q, d->with_B ? NULL : &om,
                                                 x, y, &bad),
               bad);
        keep_output(o, ctx, y, xs * 4, FLOATS);
        /* every backend gives the same bits (apply.h) */
        o->comparable = isfinite((float)p.sigma) && field_finite && finite_floats(d->qf, n) &&
                        finite_floats(d->xf, xs);
        arena_free(&A);
        return;
    }
    if (op == 2) {
        const double *storage = upload(&A, d->storage, d->L.entries * 8);
        const double *x = upload(&A, d->x, xs * 8);
        double *y = poisoned(&A, xs * 8);
        finish(o, partile_mass_apply_assembled(ctx, &p, storage, x, y), -1);
        keep_output(o, ctx, y, xs * 8, DOUBLES);
        o->comparable = finite_doubles(d->storage, d->L.entries) && finite_doubles(d->x, xs);
        arena_free(&A);
        return;
    }
    const partile_vectors_t pos = positions(&A, c, 1);
    partile_vectors_t om = { PARTILE_DTYPE_FLOAT64, { NULL, NULL, NULL } };
    for (int a = 0; a < 3; a++)
        om.axis[a] = upload(&A, d->w[a], n * 8);
    const double *q = upload(&A, d->q, n * 8);
    if (op == 0) {
        double *storage = poisoned(&A, d->L.entries * 8);
        finish(o, partile_mass_assemble(ctx, &p, n, &pos, off, q, d->with_B ? NULL : &om, storage,
                                        &bad),
               bad);
        keep_output(o, ctx, storage, d->L.entries * 8, DOUBLES);
        o->comparable =
            p.mode == PARTILE_MASS_BITWISE && p.precision == PARTILE_MASS_FP64 && finite64;
    } else {
        const double *x = upload(&A, d->x, xs * 8);
        double *y = poisoned(&A, xs * 8);
        finish(o, partile_mass_apply_matfree(ctx, &p, n, &pos, off, q, d->with_B ? NULL : &om, x, y,
                                             &bad),
               bad);
        keep_output(o, ctx, y, xs * 8, DOUBLES);
        o->comparable = finite64;
    }
    arena_free(&A);
}

static void draw_pairs(partile_pair_params_t *p, int *with_force)
{
    memset(p, 0, sizeof *p);
    p->interaction = (partile_interaction_t)(rarely(10) ? 4 : pick(2));
    p->cutoff = mostly(0.1 + uniform() * 0.5, 5);
    p->epsilon = mostly(uniform(), 10);
    p->sigma = mostly(0.05 + 0.1 * uniform(), 10);
    p->shifted = pick(2);
    p->h = mostly(0.05 + 0.1 * uniform(), 10);
    p->mass = mostly(uniform(), 10);
    p->strategy = rarely(10) ? 9 : pick(PARTILE_PAIRS_STRATEGIES);
    *with_force = p->interaction == PARTILE_PAIRS_LJ && pick(2);
}

/* partile_pairs, or with select partile_pairs_select (which times every
 * strategy and keeps the same results). */
static void op_pairs(partile_context_t *ctx, const fuzz_case *c, const partile_pair_params_t *p,
                     int with_force, int select, outcome *o)
{
    arena A = { ctx, { 0 }, 0 };
    const partile_vectors_t pos = positions(&A, c, 1);
    const size_t es = c->type == PARTILE_DTYPE_FLOAT32 ? 4 : 8, bytes = c->n * es;
    const int64_t *off = c->sorted ? upload(&A, c->off, (size_t)(c->cells + 1) * 8) : NULL;
    partile_vectors_t force = { c->type, { NULL, NULL, NULL } };
    for (int a = 0; a < 3; a++)
        force.axis[a] = poisoned(&A, bytes);
    void *scalar = poisoned(&A, bytes);
    partile_vectors_t *f = with_force ? &force : NULL;
    const double untouched = -1234.5; /* pairs' total is an output too */
    double sum = untouched;
    if (select) {
        int strategy = -1;
        double times[PARTILE_PAIRS_STRATEGIES];
        for (int s = 0; s < PARTILE_PAIRS_STRATEGIES; s++)
            times[s] = -1.0;
        finish(o, partile_pairs_select(ctx, &c->g, p, c->n, &pos, off, f, scalar, &strategy, times),
               -1);
        if (o->status >= 0 && (strategy < 1 || strategy >= PARTILE_PAIRS_STRATEGIES))
            problem("pairs_select on %s chose strategy %d", partile_context_backend(ctx), strategy);
        int times_kept = 1; /* a failed selection leaves its outputs (the results aside) */
        for (int s = 0; s < PARTILE_PAIRS_STRATEGIES; s++)
            times_kept &= times[s] == -1.0;
        if (o->status < 0 && (strategy != -1 || !times_kept))
            problem("pairs_select on %s failed (%s) but set its strategy (%d) or times",
                    partile_context_backend(ctx), partile_status_string(o->status), strategy);
    } else {
        int64_t bad = -1;
        finish(o, partile_pairs(ctx, &c->g, p, c->n, &pos, off, f, scalar, &sum, &bad), bad);
        if (o->status < 0 && !(sum == untouched))
            problem("pairs on %s failed (%s) but changed the total to %.17g",
                    partile_context_backend(ctx), partile_status_string(o->status), sum);
    }
    const int kind = es == 4 ? FLOATS : DOUBLES;
    keep_output(o, ctx, scalar, bytes, kind);
    if (!select && o->status >= 0) { /* the total: the kept scalars summed in FP64, in order */
        const unsigned char *h = o->out[o->outputs - 1];
        double want = 0.0;
        for (size_t i = 0; i < c->n; i++)
            want += es == 4 ? (double)((const float *)h)[i] : ((const double *)h)[i];
        if (memcmp(&want, &sum, sizeof want) != 0 && !(isnan(want) && isnan(sum)))
            problem("pairs on %s: total %.17g, the scalars sum to %.17g",
                    partile_context_backend(ctx), sum, want);
    }
    for (int a = 0; a < 3; a++)
        keep_output(o, ctx, force.axis[a], bytes, kind);
    /* FP64 bitwise on every strategy; FP32 not promised */
    o->comparable = c->type == PARTILE_DTYPE_FLOAT64 && isfinite(p->epsilon) &&
                    isfinite(p->sigma) && isfinite(p->h) && isfinite(p->mass);
    arena_free(&A);
}

/* Permute's draw: arrays of random bytes, a permutation (at times with an
 * entry out of range or repeated), scratch or not. */
typedef struct permute_draw {
    int count, type[3], scratch; /* scratch: 0 none, 1 enough, 2 too small */
    int64_t *perm;
    unsigned char *data[3];
} permute_draw;

static void draw_permute(const fuzz_case *c, permute_draw *d)
{
    static const partile_dtype_t types[] = { PARTILE_DTYPE_FLOAT64, PARTILE_DTYPE_FLOAT32,
                                             PARTILE_DTYPE_INT32, PARTILE_DTYPE_INT64 };
    memset(d, 0, sizeof *d);
    d->count = rarely(30) ? -1 : pick(4);
    d->scratch = rarely(10) ? 2 : pick(2);
    d->perm = malloc((c->n + 1) * 8);
    for (size_t i = 0; i < c->n; i++)
        d->perm[i] = (int64_t)i;
    for (size_t i = c->n; i > 1; i--) { /* Fisher–Yates */
        const size_t j = (size_t)pick((int)i);
        const int64_t t = d->perm[i - 1];
        d->perm[i - 1] = d->perm[j], d->perm[j] = t;
    }
    if (c->n && rarely(5))
        d->perm[pick((int)c->n)] = pick(2) ? -1 : (int64_t)c->n + pick(3);
    if (c->n > 1 && rarely(5))
        d->perm[pick((int)c->n)] = d->perm[pick((int)c->n)];
    for (int a = 0; a < 3; a++) {
        d->type[a] = rarely(40) ? 7 : (int)types[pick(4)];
        d->data[a] = malloc(c->n * 8 + 1);
        for (size_t b = 0; b < c->n * 8; b++)
            d->data[a][b] = (unsigned char)pick(256);
    }
}

static void free_permute(permute_draw *d)
{
    free(d->perm);
    for (int a = 0; a < 3; a++)
        free(d->data[a]);
}

/* permute's arrays are its outputs: a failure must leave them as they
 * were, a success must give new[i] = old[perm[i]]. */
static void op_permute(partile_context_t *ctx, const fuzz_case *c, const permute_draw *d,
                       int iteration, outcome *o)
{
    arena A = { ctx, { 0 }, 0 };
    partile_array_t arrays[3];
    for (int a = 0; a < 3; a++) {
        arrays[a].data = upload(&A, d->data[a], c->n * 8);
        arrays[a].type = (partile_dtype_t)d->type[a];
    }
    const int64_t *perm = upload(&A, d->perm, c->n * 8);
    void *scratch = d->scratch ? arena_alloc(&A, d->scratch == 1 ? c->n * 8 : c->n * 2) : NULL;
    const size_t scratch_bytes = d->scratch == 1 ? c->n * 8 : c->n * 2;
    finish(o, partile_permute(ctx, c->n, perm, d->count, arrays, scratch, scratch_bytes), -1);
    o->in_place = 1;
    for (int a = 0; a < 3; a++) {
        keep_output(o, ctx, arrays[a].data, c->n * 8, EXACT);
        const size_t es = partile_dtype_size(arrays[a].type);
        for (size_t i = 0; i < c->n; i++) {
            const int moved = o->status >= 0 && a < d->count;
            const unsigned char *want = d->data[a] + (moved ? (size_t)d->perm[i] * es : i * es);
            if (es && memcmp(o->out[a] + i * es, want, es) != 0) {
                problem("iteration %d, permute on %s: status %d, array %d element %zu is not %s",
                        iteration, partile_context_backend(ctx), o->status, a, i,
                        moved ? "old[perm[i]]" : "as it was");
                break;
            }
        }
    }
    o->comparable = 1;
    arena_free(&A);
}


/* ---- the run ---- */

typedef struct runner {
    partile_context_t *ctx, *ref; /* ref: NULL on the reference alone */
    const char *name;
    int iteration;
} runner;

#define RUN(R, OP, CALL)                                                                           \
    do {                                                                                           \
        outcome g_, r_;                                                                            \
        begin(&g_);                                                                                \
        { partile_context_t *ctx_ = (R)->ctx; outcome *o_ = &g_; CALL; }                           \
        judge(OP, (R)->name, (R)->iteration, &g_);                                                 \
        if ((R)->ref) {                                                                            \
            begin(&r_);                                                                            \
            { partile_context_t *ctx_ = (R)->ref; outcome *o_ = &r_; CALL; }                       \
            judge(OP, "reference", (R)->iteration, &r_);                                           \
            compare(OP, (R)->name, (R)->iteration, &g_, &r_);                                      \
            drop(&r_);                                                                             \
        }                                                                                          \
        drop(&g_);                                                                                 \
    } while (0)

/* The reference's sort on the host gives every later call its order. */
static void reference_sort(partile_context_t *ref, fuzz_case *c)
{
    int64_t *perm = malloc((c->n + 1) * 8), bad;
    partile_vectors_t pos = { c->type, { c->x[0], c->x[1], c->x[2] } };
    c->sorted = partile_sort(ref, &c->g, c->n, &pos, c->off, perm, c->cell, &bad) >= 0;
    for (size_t i = 0; i < c->n; i++)
        for (int a = 0; a < 3; a++)
            c->sx[a][i] = c->x[a][c->sorted ? perm[i] : (int64_t)i];
    if (c->sorted && c->n > 1 && rarely(6)) { /* a list the positions no longer follow */
        const double t = c->sx[0][0];
        c->sx[0][0] = c->sx[0][c->n - 1];
        c->sx[0][c->n - 1] = t;
    }
    free(perm);
}

static void run_case(runner *R, partile_context_t *host_ref, fuzz_case *c)
{
    RUN(R, "sort", op_sort(ctx_, c, o_));
    RUN(R, "bin", op_bin(ctx_, c, o_));
    reference_sort(host_ref, c);
    if (c->sorted && c->n) {
        int64_t *old_cell = malloc(c->n * 8);
        memcpy(old_cell, c->cell, c->n * 8);
        if (rarely(3))
            old_cell[pick((int)c->n)] = pick(2) ? -5 : c->cells + 3;
        RUN(R, "resort", op_resort(ctx_, c, old_cell, o_));
        free(old_cell);
    }
    const double alpha = mostly(0.25 + 0.25 * uniform(), 5), dt = mostly(uniform(), 5);
    RUN(R, "sort_interval", op_interval(ctx_, c, alpha, dt, o_));
    transfer_draw td;
    if (draw_transfer(c, &td)) {
        RUN(R, "deposit", op_deposit(ctx_, c, &td, o_));
        RUN(R, "gather", op_gather(ctx_, c, &td, o_));
    }
    free_transfer(&td);
    mass_draw md;
    if (draw_mass(c, &md)) {
        RUN(R, "mass_assemble", op_mass(ctx_, c, &md, 0, o_));
        RUN(R, "mass_apply_matfree", op_mass(ctx_, c, &md, 1, o_));
        RUN(R, "mass_apply_assembled", op_mass(ctx_, c, &md, 2, o_));
        RUN(R, "mass_apply_matfree_f32", op_mass(ctx_, c, &md, 3, o_));
    }
    free_mass(&md);
    partile_pair_params_t pp;
    int with_force;
    draw_pairs(&pp, &with_force);
    RUN(R, "pairs", op_pairs(ctx_, c, &pp, with_force, 0, o_));
    if (rarely(10)) /* it times every strategy: slow on a GPU */
        RUN(R, "pairs_select", op_pairs(ctx_, c, &pp, with_force, 1, o_));
    permute_draw pd;
    draw_permute(c, &pd);
    RUN(R, "permute", op_permute(ctx_, c, &pd, R->iteration, o_));
    free_permute(&pd);
}

static const char *backend_arg; /* NULL: the reference alone */

static void test_random_calls(void **state)
{
    (void)state;
    const char *env_it = getenv("PARTILE_FUZZ_ITERATIONS"), *env_seed = getenv("PARTILE_FUZZ_SEED");
    /* a GPU call allocates and copies each array: fewer cases there */
    const int iterations = env_it ? atoi(env_it) : backend_arg ? 1000 : 3000;
    report_all = getenv("PARTILE_FUZZ_REPORT_ALL") != NULL;
    const uint64_t seed = env_seed ? strtoull(env_seed, NULL, 10) : 20261204;
    rng_state = seed * 2654435761ull + 1;
    printf("# %s, %d iterations, seed %llu\n", backend_arg ? backend_arg : "reference", iterations,
           (unsigned long long)seed);
    partile_context_t *ref = NULL, *ctx = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ref), PARTILE_SUCCESS);
    if (backend_arg)
        assert_int_equal(partile_context_create(backend_arg, 0, &ctx), PARTILE_SUCCESS);
    runner R = { backend_arg ? ctx : ref, backend_arg ? ref : NULL,
                 backend_arg ? backend_arg : "reference", 0 };
    for (int it = 0; it < iterations; it++) {
        fuzz_case c;
        memset(&c, 0, sizeof c);
        R.iteration = it;
        if (draw_case(&c))
            run_case(&R, ref, &c);
        free_case(&c);
    }
    partile_context_destroy(ctx);
    partile_context_destroy(ref);
    printf("# %lld calls, %lld succeeded, %lld compared with the reference\n", total.calls,
           total.succeeded, total.compared);
    if (problems)
        fail_msg("%lld broken promises (the first 500 printed above)", problems);
    /* the draws reach the successful paths too, not only the refusals */
    assert_true(total.succeeded > total.calls / 5);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        backend_arg = argv[1];
        partile_context_t *ctx = NULL;
        const int st = partile_context_create(backend_arg, 0, &ctx);
        if (st == PARTILE_ERROR_NOT_COMPILED || st == PARTILE_ERROR_NO_DEVICE) {
            printf("SKIP: %s: %s\n", backend_arg, partile_last_error_detail());
            return 77;
        }
        partile_context_destroy(ctx);
    }
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_random_calls) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
