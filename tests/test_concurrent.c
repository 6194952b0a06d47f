/* Contexts used from several threads at once (include/partile/context.h):
 * each of THREADS threads opens its own context on the backend named by the
 * argument (default "reference") and runs, ROUNDS times, a sort, a permute,
 * a sorted deposit, a scalar CIC mass matrix and a gather, every array in
 * its context's memory; each round's bits must equal those of the same
 * calls made by the main thread alone before. Every thread also makes a
 * call that fails on a NaN of its own particle, all of them before a
 * barrier, and then reads the failure's detail: it must name that thread's
 * particle (the detail is per thread). Exit 77 where the backend is not
 * compiled or has no device. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "partile/partile.h"
#include "sort_util.h"
#include "test_seed.h"

enum { THREADS = 4, ROUNDS = 3, CELLS = 16, N = 20000 };

static const char *backend = "reference";
static const partile_grid_t grid = { 3, { CELLS, CELLS, CELLS }, { 0, 0, 0 },
                                     { 1.0 / CELLS, 1.0 / CELLS, 1.0 / CELLS }, { 1, 1, 1 } };
static double *xyz[3], *charges;
static pthread_barrier_t errors_made;

/* What one run of the calls leaves, on the host. */
typedef struct results {
    int64_t offsets[CELLS * CELLS * CELLS + 1], perm[N];
    double field[CELLS * CELLS * CELLS], gathered[N];
    double *storage; /* the mass matrix's entries */
    size_t entries;
} results;

/* A thread's verdict: 0, or the first thing that went wrong. */
typedef struct verdict {
    int thread;
    char failure[256];
} verdict;

#define TRY(call, what)                                                                            \
    do {                                                                                           \
        const int st_ = (call);                                                                    \
        if (st_ != PARTILE_SUCCESS) {                                                              \
            snprintf(failure, 256, "%s: %s: %s", what, partile_status_string(st_),              \
                     partile_last_error_detail());                                                 \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* The calls on ctx, into r (storage allocated here); 0, or a message in
 * failure (256 bytes). */
static int run_calls(partile_context_t *ctx, results *r, char *failure)
{
    const int64_t cells = CELLS * CELLS * CELLS;
    /* the context's buffers */
    enum { X0, X1, X2, CHARGES, OFFSETS, PERM, FIELD, GATHERED, STORAGE, BUFFERS };
    void *d[BUFFERS] = { NULL };
    int used = 0, ok = 0;
    partile_mass_layout_t layout;
    TRY(partile_mass_layout(&grid, PARTILE_SHAPE_CIC, PARTILE_MASS_SCALAR, &layout), "layout");
    r->entries = layout.entries;
    r->storage = (double *)malloc(layout.entries * sizeof(double));
    if (!r->storage) {
        snprintf(failure, 256, "out of host memory");
        return -1;
    }
    const size_t sizes[BUFFERS] = {
        [X0] = N * 8,   [X1] = N * 8,        [X2] = N * 8,       [CHARGES] = N * 8,
        [OFFSETS] = (cells + 1) * 8,         [PERM] = N * 8,     [FIELD] = cells * 8,
        [GATHERED] = N * 8,                  [STORAGE] = layout.entries * 8,
    };
    for (; used < BUFFERS; used++)
        TRY(partile_malloc(ctx, sizes[used], &d[used]), "malloc");
    for (int a = 0; a < 3; a++)
        TRY(partile_memcpy(ctx, d[X0 + a], xyz[a], N * 8, PARTILE_COPY_HOST_TO_DEVICE), "upload");
    TRY(partile_memcpy(ctx, d[CHARGES], charges, N * 8, PARTILE_COPY_HOST_TO_DEVICE), "upload");
    TRY(partile_memset(ctx, d[FIELD], 0, cells * 8), "memset");
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { d[X0], d[X1], d[X2] } };
    TRY(partile_sort(ctx, &grid, N, &pos, (int64_t *)d[OFFSETS], (int64_t *)d[PERM], NULL, NULL),
        "sort");
    const partile_array_t arrays[4] = { { d[X0], PARTILE_DTYPE_FLOAT64 },
                                        { d[X1], PARTILE_DTYPE_FLOAT64 },
                                        { d[X2], PARTILE_DTYPE_FLOAT64 },
                                        { d[CHARGES], PARTILE_DTYPE_FLOAT64 } };
    TRY(partile_permute(ctx, N, (const int64_t *)d[PERM], 4, arrays, NULL, 0), "permute");
    const partile_transfer_t t = { &grid, PARTILE_SHAPE_CIC, PARTILE_CENTERING_NODE, 1, NULL,
                                   PARTILE_ORDER_BY_POINT };
    TRY(partile_deposit(ctx, &t, N, &pos, (const double *)d[CHARGES], (const int64_t *)d[OFFSETS],
                        (double *)d[FIELD], NULL),
        "deposit");
    TRY(partile_gather(ctx, &t, N, &pos, (const double *)d[FIELD], (double *)d[GATHERED], NULL),
        "gather");
    partile_mass_params_t mp;
    memset(&mp, 0, sizeof mp);
    mp.grid = &grid, mp.shape = PARTILE_SHAPE_CIC, mp.kind = PARTILE_MASS_SCALAR, mp.sigma = 0.5;
    TRY(partile_mass_assemble(ctx, &mp, N, &pos, (const int64_t *)d[OFFSETS],
                              (const double *)d[CHARGES], NULL, (double *)d[STORAGE], NULL),
        "assemble");
    TRY(partile_memcpy(ctx, r->offsets, d[OFFSETS], sizeof r->offsets, PARTILE_COPY_DEVICE_TO_HOST),
        "download");
    TRY(partile_memcpy(ctx, r->perm, d[PERM], sizeof r->perm, PARTILE_COPY_DEVICE_TO_HOST),
        "download");
    TRY(partile_memcpy(ctx, r->field, d[FIELD], sizeof r->field, PARTILE_COPY_DEVICE_TO_HOST),
        "download");
    TRY(partile_memcpy(ctx, r->gathered, d[GATHERED], sizeof r->gathered,
                       PARTILE_COPY_DEVICE_TO_HOST),
        "download");
    TRY(partile_memcpy(ctx, r->storage, d[STORAGE], layout.entries * 8,
                       PARTILE_COPY_DEVICE_TO_HOST),
        "download");
    ok = 1;
done:
    for (int i = 0; i < used; i++)
        partile_free(ctx, d[i]);
    return ok ? 0 : -1;
}

static results expected;

/* Equal to the main thread's, bit for bit; 0, or a message. */
static int same_as_expected(const results *r, char *failure)
{
    const char *what = memcmp(r->offsets, expected.offsets, sizeof r->offsets) ? "offsets"
                       : memcmp(r->perm, expected.perm, sizeof r->perm)         ? "perm"
                       : memcmp(r->field, expected.field, sizeof r->field)      ? "deposit"
                       : memcmp(r->gathered, expected.gathered, sizeof r->gathered)
                           ? "gather"
                       : memcmp(r->storage, expected.storage, r->entries * 8) ? "mass matrix"
                                                                              : NULL;
    if (what)
        snprintf(failure, 256, "%s differs from the main thread's", what);
    return what ? -1 : 0;
}

/* A thread: its own context, the rounds, and the failing call. */
static void *worker(void *arg)
{
    verdict *v = (verdict *)arg;
    char *failure = v->failure;
    partile_context_t *ctx = NULL;
    void *nan_x = NULL, *cells = NULL;
    results r;
    memset(&r, 0, sizeof r);
    const long long mine = 7 * (v->thread + 1); /* this thread's NaN particle */
    int waited = 0;
    TRY(partile_context_create(backend, 0, &ctx), "context");
    for (int round = 0; round < ROUNDS; round++) {
        free(r.storage);
        r.storage = NULL;
        if (run_calls(ctx, &r, failure) != 0 || same_as_expected(&r, failure) != 0)
            goto done;
    }
    /* the failing call, every thread's before the barrier; then the detail */
    TRY(partile_malloc(ctx, N * 8, &nan_x), "malloc");
    double *x = (double *)malloc(N * 8);
    if (!x) {
        snprintf(failure, 256, "out of host memory");
        goto done;
    }
    memcpy(x, xyz[0], N * 8);
    x[mine] = NAN;
    int st = partile_memcpy(ctx, nan_x, x, N * 8, PARTILE_COPY_HOST_TO_DEVICE);
    free(x);
    TRY(st, "upload");
    int64_t bad = -1;
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { nan_x, NULL, NULL } };
    partile_grid_t line = grid;
    line.dim = 1;
    TRY(partile_malloc(ctx, N * 8, &cells), "malloc");
    st = partile_bin(ctx, &line, N, &pos, (int64_t *)cells, &bad);
    pthread_barrier_wait(&errors_made);
    waited = 1;
    char want[64];
    snprintf(want, sizeof want, "particle %lld ", mine);
    if (st != PARTILE_ERROR_NOT_FINITE || bad != mine ||
        !strstr(partile_last_error_detail(), want))
        snprintf(failure, 256, "the failing call: status %d, particle %lld, detail \"%s\"", st,
                 (long long)bad, partile_last_error_detail());
done:
    if (!waited)
        pthread_barrier_wait(&errors_made);
    free(r.storage);
    if (ctx) {
        partile_free(ctx, nan_x);
        partile_free(ctx, cells);
        partile_context_destroy(ctx);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        backend = argv[1];
    partile_context_t *ctx = NULL;
    int st = partile_context_create(backend, 0, &ctx);
    if (st == PARTILE_ERROR_NOT_COMPILED || st == PARTILE_ERROR_NO_DEVICE) {
        printf("SKIP: %s: %s\n", backend, partile_last_error_detail());
        return 77;
    }
    if (st != PARTILE_SUCCESS) {
        printf("FAIL: context on %s: %s\n", backend, partile_last_error_detail());
        return 1;
    }
    uint64_t seed = test_seed();
    printf("# %s, seed %llu\n", backend, (unsigned long long)seed);
    for (int a = 0; a < 3; a++) {
        xyz[a] = (double *)malloc(N * 8);
        if (!xyz[a])
            return 1;
        for (int p = 0; p < N; p++)
            xyz[a][p] = su_uniform(&seed);
    }
    charges = (double *)malloc(N * 8);
    if (!charges)
        return 1;
    for (int p = 0; p < N; p++)
        charges[p] = su_uniform(&seed) - 0.25;
    char failure[256] = "";
    if (run_calls(ctx, &expected, failure) != 0) {
        printf("FAIL: the main thread's calls: %s\n", failure);
        return 1;
    }
    partile_context_destroy(ctx);

    pthread_t threads[THREADS];
    verdict verdicts[THREADS];
    pthread_barrier_init(&errors_made, NULL, THREADS);
    for (int i = 0; i < THREADS; i++) {
        memset(&verdicts[i], 0, sizeof verdicts[i]);
        verdicts[i].thread = i;
        if (pthread_create(&threads[i], NULL, worker, &verdicts[i]) != 0) {
            printf("FAIL: pthread_create\n");
            return 1;
        }
    }
    int failed = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        if (verdicts[i].failure[0]) {
            printf("FAIL: thread %d: %s\n", i, verdicts[i].failure);
            failed++;
        }
    }
    pthread_barrier_destroy(&errors_made);
    if (!failed)
        printf("%d threads, %d rounds each, on %s: every result equal to the main thread's, "
               "every failure's detail its own\n",
               THREADS, ROUNDS, backend);
    free(expected.storage);
    free(charges);
    for (int a = 0; a < 3; a++)
        free(xyz[a]);
    return failed ? 1 : 0;
}
