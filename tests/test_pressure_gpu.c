/* Device memory nearly full, as when a simulation's own arrays take it: every
 * operation either gives the reference's result, bit for bit, or returns
 * PARTILE_ERROR_OUT_OF_MEMORY with a detail and its outputs untouched (never
 * another status, never a crash); once the memory is freed, the same
 * context gives every result again. The inputs and outputs are placed first,
 * then 8 MiB blocks are taken until the device has none left.
 * Each operation's inputs are the test's, never another operation's output.
 * Operations: bin, sort, the sort of clustered particles (half of them in
 * one cell: the GPU's global sort, whose fix-up takes memory of its own),
 * permute (the library's scratch), the sorted deposit (3 components),
 * gather, the scalar CIC mass matrix, the matrix-free apply, the SPH
 * density. Twice: cold (the context's workspace not grown yet, as the
 * first call of a run meets it), then warm (every operation has run once,
 * so only what a call takes beyond the workspace can fail). 2^22 particles
 * on a 64^3 grid; on the reference backend (the CPU suite) 2^18, and
 * nothing is taken, so every operation must succeed: that checks the test
 * itself.
 * usage: test_pressure_gpu [BACKEND]   (exit 77: the backend cannot run here) */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "partile/partile.h"
#include "sort_util.h"
#include "test_seed.h"

enum { SIDE = 64, M = 3, POISON = 0xab };
/* particles: 2^22 on a GPU (16 per cell), 2^18 on the reference */
static size_t N;
#define NCELLS ((int64_t)SIDE * SIDE * SIDE)

static const partile_grid_t grid = { 3, { SIDE, SIDE, SIDE }, { 0, 0, 0 },
                                     { 1.0 / SIDE, 1.0 / SIDE, 1.0 / SIDE }, { 1, 1, 1 } };
static int failures;

static void must(int st, const char *what)
{
    if (st == PARTILE_SUCCESS)
        return;
    printf("FAIL: %s: %s: %s\n", what, partile_status_string(st), partile_last_error_detail());
    exit(1);
}

/* One array of an operation's inputs or outputs: host copy and context copy. */
typedef struct array {
    const char *name;
    size_t bytes;
    void *host, *dev;
} array;

/* The arrays (inputs: sorted positions, offsets, values, charges, x; outputs
 * of each operation), on the reference (host) and on the context. */
enum {
    X0, X1, X2, OFFSETS, VALUES, CHARGES, XGRID, IDENTITY, CX0, CX1, CX2, /* inputs */
    CELL, SORT_OFF, SORT_PERM, CSORT_OFF, CSORT_PERM, PERMUTED, FIELD, GATHERED, STORAGE, Y,
    DENSITY, ARRAYS
};
static array arr[ARRAYS];
static size_t storage_entries;

typedef struct run_args {
    partile_context_t *ctx;
    void *a[ARRAYS]; /* where each array lives for this run */
} run_args;

static partile_vectors_t positions(const run_args *r)
{
    partile_vectors_t p = { PARTILE_DTYPE_FLOAT64, { r->a[X0], r->a[X1], r->a[X2] } };
    return p;
}

/* The operations; each writes only its outputs (index list below). */
static int op_bin(const run_args *r)
{
    const partile_vectors_t p = positions(r);
    return partile_bin(r->ctx, &grid, N, &p, r->a[CELL], NULL);
}
static int op_sort(const run_args *r)
{
    const partile_vectors_t p = positions(r);
    return partile_sort(r->ctx, &grid, N, &p, r->a[SORT_OFF], r->a[SORT_PERM], NULL, NULL);
}
static int op_sort_clustered(const run_args *r)
{
    const partile_vectors_t p = { PARTILE_DTYPE_FLOAT64, { r->a[CX0], r->a[CX1], r->a[CX2] } };
    return partile_sort(r->ctx, &grid, N, &p, r->a[CSORT_OFF], r->a[CSORT_PERM], NULL, NULL);
}
static int op_permute(const run_args *r)
{
    /* PERMUTED holds the charges before; permuted by the identity (an
     * input, not the sort's result, which may have been refused), so a
     * success leaves the charges, and the library's scratch (n doubles) is
     * what is asked of the device */
    const partile_array_t one = { r->a[PERMUTED], PARTILE_DTYPE_FLOAT64 };
    return partile_permute(r->ctx, N, r->a[IDENTITY], 1, &one, NULL, 0);
}
static int op_deposit(const run_args *r)
{
    const partile_vectors_t p = positions(r);
    const partile_transfer_t t = { &grid, PARTILE_SHAPE_CIC, PARTILE_CENTERING_NODE, M, NULL,
                                   PARTILE_ORDER_BY_POINT };
    return partile_deposit(r->ctx, &t, N, &p, r->a[VALUES], r->a[OFFSETS], r->a[FIELD], NULL);
}
static int op_gather(const run_args *r)
{
    const partile_vectors_t p = positions(r);
    const partile_transfer_t t = { &grid, PARTILE_SHAPE_CIC, PARTILE_CENTERING_NODE, 1, NULL,
                                   PARTILE_ORDER_BY_POINT };
    return partile_gather(r->ctx, &t, N, &p, r->a[XGRID], r->a[GATHERED], NULL);
}
static partile_mass_params_t mass_params(void)
{
    partile_mass_params_t mp;
    memset(&mp, 0, sizeof mp);
    mp.grid = &grid, mp.shape = PARTILE_SHAPE_CIC, mp.kind = PARTILE_MASS_SCALAR, mp.sigma = 0.75;
    return mp;
}
static int op_mass(const run_args *r)
{
    const partile_vectors_t p = positions(r);
    const partile_mass_params_t mp = mass_params();
    return partile_mass_assemble(r->ctx, &mp, N, &p, r->a[OFFSETS], r->a[CHARGES], NULL,
                                 r->a[STORAGE], NULL);
}
static int op_apply(const run_args *r)
{
    const partile_vectors_t p = positions(r);
    const partile_mass_params_t mp = mass_params();
    return partile_mass_apply_matfree(r->ctx, &mp, N, &p, r->a[OFFSETS], r->a[CHARGES], NULL,
                                      r->a[XGRID], r->a[Y], NULL);
}
static int op_density(const run_args *r)
{
    const partile_vectors_t p = positions(r);
    partile_pair_params_t pp;
    memset(&pp, 0, sizeof pp);
    pp.interaction = PARTILE_PAIRS_SPH_DENSITY, pp.cutoff = 1.0 / SIDE, pp.h = 0.5 / SIDE;
    pp.mass = 1.0;
    return partile_pairs(r->ctx, &grid, &pp, N, &p, r->a[OFFSETS], NULL, r->a[DENSITY], NULL,
                         NULL);
}

static const struct {
    const char *name;
    int (*run)(const run_args *);
    int outputs[2];
    int before_output; /* PERMUTED starts as the charges; others as POISON */
} ops[] = {
    { "bin", op_bin, { CELL, -1 }, 0 },
    { "sort", op_sort, { SORT_OFF, SORT_PERM }, 0 },
    { "sort, clustered", op_sort_clustered, { CSORT_OFF, CSORT_PERM }, 0 },
    { "permute", op_permute, { PERMUTED, -1 }, 1 },
    { "deposit", op_deposit, { FIELD, -1 }, 0 },
    { "gather", op_gather, { GATHERED, -1 }, 0 },
    { "mass matrix", op_mass, { STORAGE, -1 }, 0 },
    { "matrix-free apply", op_apply, { Y, -1 }, 0 },
    { "SPH density", op_density, { DENSITY, -1 }, 0 },
};
enum { OPS = sizeof ops / sizeof ops[0] };

/* An output's state before its operation: POISON bytes, or the charges. */
static void fill_before(int o, void *host)
{
    if (o == PERMUTED)
        memcpy(host, arr[CHARGES].host, arr[o].bytes);
    else
        memset(host, POISON, arr[o].bytes);
}

/* The inputs on the reference, the expected outputs (the reference's). */
static void make_reference(void)
{
    partile_context_t *ref = NULL;
    must(partile_context_create("reference", 0, &ref), "reference context");
    uint64_t seed = test_seed();
    printf("# seed %llu\n", (unsigned long long)seed);
    partile_mass_layout_t layout;
    must(partile_mass_layout(&grid, PARTILE_SHAPE_CIC, PARTILE_MASS_SCALAR, &layout), "layout");
    storage_entries = layout.entries;
    const size_t sizes[ARRAYS] = {
        [X0] = N * 8, [X1] = N * 8, [X2] = N * 8, [OFFSETS] = (NCELLS + 1) * 8,
        [VALUES] = N * M * 8, [CHARGES] = N * 8, [XGRID] = NCELLS * 8, [IDENTITY] = N * 8,
        [CX0] = N * 8, [CX1] = N * 8, [CX2] = N * 8, [CELL] = N * 8,
        [SORT_OFF] = (NCELLS + 1) * 8, [SORT_PERM] = N * 8, [CSORT_OFF] = (NCELLS + 1) * 8,
        [CSORT_PERM] = N * 8, [PERMUTED] = N * 8,
        [FIELD] = NCELLS * M * 8, [GATHERED] = N * 8, [STORAGE] = 0, [Y] = NCELLS * 8,
        [DENSITY] = N * 8,
    };
    static const char *names[ARRAYS] = {
        "x", "y", "z", "offsets", "values", "charges", "x field", "identity", "clustered x",
        "clustered y", "clustered z", "cells", "sort offsets", "sort perm",
        "clustered sort offsets", "clustered sort perm", "permuted", "field", "gathered",
        "storage", "y", "density"
    };
    for (int i = 0; i < ARRAYS; i++) {
        arr[i].name = names[i];
        arr[i].bytes = i == STORAGE ? storage_entries * 8 : sizes[i];
        arr[i].host = malloc(arr[i].bytes);
        if (!arr[i].host)
            exit(1);
    }
    /* random positions, sorted by cell on the reference, with their list */
    double *x[3] = { arr[X0].host, arr[X1].host, arr[X2].host };
    for (int a = 0; a < 3; a++)
        for (size_t p = 0; p < N; p++)
            x[a][p] = su_uniform(&seed);
    const partile_vectors_t hp = { PARTILE_DTYPE_FLOAT64, { x[0], x[1], x[2] } };
    int64_t *perm = malloc(N * 8);
    if (!perm)
        exit(1);
    must(partile_sort(ref, &grid, N, &hp, arr[OFFSETS].host, perm, NULL, NULL), "reference sort");
    const partile_array_t xa[3] = { { x[0], PARTILE_DTYPE_FLOAT64 },
                                    { x[1], PARTILE_DTYPE_FLOAT64 },
                                    { x[2], PARTILE_DTYPE_FLOAT64 } };
    must(partile_permute(ref, N, perm, 3, xa, NULL, 0), "reference permute");
    free(perm);
    double *v = arr[VALUES].host, *q = arr[CHARGES].host, *xg = arr[XGRID].host;
    for (size_t i = 0; i < N * M; i++)
        v[i] = su_uniform(&seed) - 0.5;
    for (size_t i = 0; i < N; i++)
        q[i] = su_uniform(&seed);
    for (int64_t g = 0; g < NCELLS; g++)
        xg[g] = su_uniform(&seed) - 0.25;
    int64_t *identity = arr[IDENTITY].host;
    for (size_t i = 0; i < N; i++)
        identity[i] = (int64_t)i;
    /* clustered: every other particle in the cell at (0.5, 0.5, 0.5), the
     * rest uniform, in no order */
    double *cx[3] = { arr[CX0].host, arr[CX1].host, arr[CX2].host };
    for (size_t p = 0; p < N; p++)
        for (int a = 0; a < 3; a++)
            cx[a][p] = p % 2 ? su_uniform(&seed) : 0.5 + su_uniform(&seed) * 0.5 / SIDE;
    /* the expected outputs */
    run_args r = { ref, { NULL } };
    for (int i = 0; i < ARRAYS; i++)
        r.a[i] = arr[i].host;
    for (int k = 0; k < OPS; k++) {
        for (int j = 0; j < 2; j++)
            if (ops[k].outputs[j] >= 0)
                fill_before(ops[k].outputs[j], arr[ops[k].outputs[j]].host);
        must(ops[k].run(&r), ops[k].name);
    }
    partile_context_destroy(ref);
}

/* The run of every operation on ctx with outputs reset first: each result
 * equal to the reference's, or (may_fail) OUT_OF_MEMORY with the outputs
 * as they were. Returns the number of OUT_OF_MEMORY answers. */
static int run_all(partile_context_t *ctx, void *const dev[ARRAYS], int may_fail)
{
    run_args r = { ctx, { NULL } };
    for (int i = 0; i < ARRAYS; i++)
        r.a[i] = dev[i];
    int refused = 0;
    for (int k = 0; k < OPS; k++) {
        for (int j = 0; j < 2; j++) {
            const int o = ops[k].outputs[j];
            if (o < 0)
                continue;
            void *h = malloc(arr[o].bytes);
            if (!h)
                exit(1);
            fill_before(o, h);
            must(partile_memcpy(ctx, dev[o], h, arr[o].bytes, PARTILE_COPY_HOST_TO_DEVICE),
                 "reset an output");
            free(h);
        }
        const int st = ops[k].run(&r);
        if (st != PARTILE_SUCCESS && !(may_fail && st == PARTILE_ERROR_OUT_OF_MEMORY)) {
            printf("FAIL: %s: %s: %s\n", ops[k].name, partile_status_string(st),
                   partile_last_error_detail());
            failures++;
            continue;
        }
        if (st != PARTILE_SUCCESS) {
            refused++;
            printf("# %s: out of memory (%s)\n", ops[k].name, partile_last_error_detail());
            if (!partile_last_error_detail()[0]) {
                printf("FAIL: %s: OUT_OF_MEMORY without a detail\n", ops[k].name);
                failures++;
            }
        }
        for (int j = 0; j < 2; j++) {
            const int o = ops[k].outputs[j];
            if (o < 0)
                continue;
            void *got = malloc(arr[o].bytes), *want = malloc(arr[o].bytes);
            if (!got || !want)
                exit(1);
            must(partile_memcpy(ctx, got, dev[o], arr[o].bytes, PARTILE_COPY_DEVICE_TO_HOST),
                 "download an output");
            if (st == PARTILE_SUCCESS)
                memcpy(want, arr[o].host, arr[o].bytes);
            else
                fill_before(o, want);
            if (memcmp(got, want, arr[o].bytes) != 0) {
                printf("FAIL: %s: %s %s\n", ops[k].name, arr[o].name,
                       st == PARTILE_SUCCESS ? "differs from the reference's"
                                             : "changed although the call failed");
                failures++;
            }
            free(got);
            free(want);
        }
    }
    return refused;
}

/* Takes the rest of the device (not the host's memory on the reference) in
 * 8 MiB blocks, runs every operation (each may answer OUT_OF_MEMORY), gives
 * the memory back and runs them all again (each must succeed); returns the
 * number refused. */
static int pressed_run(partile_context_t *ctx, void *const dev[ARRAYS], int host,
                       const char *backend, const char *when)
{
    size_t held = 0, cap = 1 << 16, count = 0;
    void **hog = malloc(cap * sizeof *hog);
    if (!hog)
        exit(1);
    while (!host) {
        void *p = NULL;
        const int hs = partile_malloc(ctx, 8u << 20, &p);
        if (hs == PARTILE_ERROR_OUT_OF_MEMORY)
            break;
        must(hs, "taking the device's memory");
        if (count == cap && !(hog = realloc(hog, (cap *= 2) * sizeof *hog)))
            exit(1);
        hog[count++] = p;
        held += 8u << 20;
    }
    printf("# %s (%s), %s: %zu MiB taken, then the operations\n", backend,
           partile_context_device(ctx), when, held >> 20);
    const int refused = run_all(ctx, dev, !host);
    for (size_t i = 0; i < count; i++)
        must(partile_free(ctx, hog[i]), "free");
    free(hog);
    printf("# memory freed: %d operations had been refused; again\n", refused);
    run_all(ctx, dev, 0);
    return refused;
}

int main(int argc, char **argv)
{
    const char *backend = argc > 1 ? argv[1] : "cuda";
    partile_context_t *ctx = NULL;
    const int st = partile_context_create(backend, 0, &ctx);
    if (st == PARTILE_ERROR_NOT_COMPILED || st == PARTILE_ERROR_NO_DEVICE) {
        printf("SKIP: %s: %s\n", backend, partile_last_error_detail());
        return 77;
    }
    must(st, "context");
    const int host = strcmp(partile_context_backend(ctx), "reference") == 0;
    N = host ? (size_t)1 << 18 : (size_t)1 << 22;
    make_reference();
    void *dev[ARRAYS];
    for (int i = 0; i < ARRAYS; i++) {
        must(partile_malloc(ctx, arr[i].bytes, &dev[i]), "malloc");
        if (i < CELL)
            must(partile_memcpy(ctx, dev[i], arr[i].host, arr[i].bytes,
                                PARTILE_COPY_HOST_TO_DEVICE),
                 "upload");
    }
    /* cold: the context's workspace as a fresh context has it */
    const int cold = pressed_run(ctx, dev, host, backend, "cold");
    /* warm: every operation has run, so its workspace is there */
    const int warm = pressed_run(ctx, dev, host, backend, "warm");
    for (int i = 0; i < ARRAYS; i++) {
        partile_free(ctx, dev[i]);
        free(arr[i].host);
    }
    partile_context_destroy(ctx);
    if (failures) {
        printf("FAIL: %d\n", failures);
        return 1;
    }
    printf("%s: under memory pressure every operation gave the reference's result or "
           "OUT_OF_MEMORY with its outputs untouched (%d of %d refused cold, %d warm); then "
           "all %d again\n",
           backend, cold, OPS, warm, OPS);
    return 0;
}
