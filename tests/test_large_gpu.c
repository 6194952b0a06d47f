/* partile beyond 2^31 particles: the particle index needs 64 bits (or 32
 * unsigned) everywhere. On a GPU backend, n = 2^31 + 2^22 particles (FP32
 * positions) on a periodic 256^3 grid, about 104 GB of device memory at the
 * peak, 48 bytes per particle (positions 12, permutation 8, the sort's
 * workspace 16, kept by the context, values 8, the permute's scratch 4:
 * probed first, so that a smaller device skips at once); on the reference
 * backend (the CPU suite) a small n, which checks the test itself.
 *
 * Particle p sits at the centre of cell p mod C (C cells), so the stable
 * sort's offsets and permutation are known in closed form, every CIC weight
 * is 1/8, and with integer values every sum is exact in FP64 whatever its
 * order: the expected results are computed on the host, exactly, and
 * compared bit for bit, for every particle and point:
 *  - the sort (offsets, permutation);
 *  - the unsorted deposit (atomics on a GPU), then, after the positions are
 *    permuted (partile_permute), the sorted deposit in both orders;
 *  - the gather of an integer field;
 *  - the scalar CIC mass matrix.
 * usage: test_large_gpu [BACKEND [N [SIDE]]]  (exit 77: the backend cannot
 * run here, or the device has too little memory for N) */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "partile/partile.h"

static partile_context_t *ctx;
static int64_t n, side, ncells;
static int failures;
enum { CHUNK = 1 << 24 };

/* Seconds since the first call, for the progress lines. */
static double elapsed(void)
{
    static struct timespec t0;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (!t0.tv_sec && !t0.tv_nsec)
        t0 = t;
    return (double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec);
}

static void fail(const char *fmt, const char *what, long long at, double want, double got)
{
    if (failures++ < 10)
        printf(fmt, what, at, want, got);
}

/* A call that must succeed; OUT_OF_MEMORY exits 77 (too small a device). */
static void must(int st, const char *what)
{
    if (st == PARTILE_SUCCESS)
        return;
    printf("%s: %s: %s\n", what, partile_status_string(st), partile_last_error_detail());
    if (st == PARTILE_ERROR_OUT_OF_MEMORY) {
        printf("SKIP: the device has too little memory for %" PRId64 " particles\n", n);
        exit(77);
    }
    exit(1);
}

static void *device_alloc(size_t bytes, const char *what)
{
    void *p = NULL;
    must(partile_malloc(ctx, bytes, &p), what);
    return p;
}

/* The closed forms: cell c holds count(c) particles, from offset(c) on;
 * sorted particle i of cell c at rank j is original particle c + j·C. */
static int64_t per_cell, extra; /* n / C and n % C */
static int64_t cell_count(int64_t c) { return per_cell + (c < extra); }
static int64_t cell_offset(int64_t c) { return c * per_cell + (c < extra ? c : extra); }
static double value_of(int64_t p) { return (double)(1 + p % 7); }

/* Cell c moved by (dx, dy, dz), wrapped. */
static int64_t cell_moved(int64_t c, int dx, int dy, int dz)
{
    const int64_t i = c % side, j = c / side % side, k = c / (side * side);
    return (i + dx + side) % side + side * ((j + dy + side) % side + side * ((k + dz + side) % side));
}

/* Host chunks of the three coordinates of original particles p0.., uploaded. */
static void upload_positions(float *const d[3])
{
    float *h[3];
    for (int a = 0; a < 3; a++)
        if (!(h[a] = malloc(CHUNK * sizeof(float))))
            exit(1);
    for (int64_t p0 = 0; p0 < n; p0 += CHUNK) {
        const int64_t len = n - p0 < CHUNK ? n - p0 : CHUNK;
        for (int64_t q = 0; q < len; q++) {
            const int64_t c = (p0 + q) % ncells;
            const int64_t u[3] = { c % side, c / side % side, c / (side * side) };
            for (int a = 0; a < 3; a++)
                h[a][q] = (float)(((double)u[a] + 0.5) / (double)side); /* exact */
        }
        for (int a = 0; a < 3; a++)
            must(partile_memcpy(ctx, d[a] + p0, h[a], (size_t)len * sizeof(float),
                                PARTILE_COPY_HOST_TO_DEVICE),
                 "upload positions");
    }
    for (int a = 0; a < 3; a++)
        free(h[a]);
}

/* The sorted particle i's cell c and original index (c + j·C, j its rank
 * in c), for i increasing within a pass (from 0: the cursor restarts). */
static int64_t sorted_cell(int64_t i)
{
    static int64_t c;
    if (i == 0)
        c = 0;
    while (i >= cell_offset(c + 1))
        c++;
    return c;
}
static int64_t original_of(int64_t i)
{
    const int64_t c = sorted_cell(i);
    return c + (i - cell_offset(c)) * ncells;
}

/* The n elements (elem bytes each) of device array d in host chunks, in
 * order: visit(chunk, i0, len) after each chunk's download (upload 0), or
 * before its upload (upload 1). */
static void by_chunks(void *d, size_t elem, int upload, const char *what,
                      void (*visit)(void *chunk, int64_t i0, int64_t len))
{
    void *h = malloc(CHUNK * elem);
    if (!h)
        exit(1);
    for (int64_t i0 = 0; i0 < n; i0 += CHUNK) {
        const int64_t len = n - i0 < CHUNK ? n - i0 : CHUNK;
        char *const at = (char *)d + (size_t)i0 * elem;
        if (!upload)
            must(partile_memcpy(ctx, h, at, (size_t)len * elem, PARTILE_COPY_DEVICE_TO_HOST),
                 what);
        visit(h, i0, len);
        if (upload)
            must(partile_memcpy(ctx, at, h, (size_t)len * elem, PARTILE_COPY_HOST_TO_DEVICE),
                 what);
    }
    free(h);
}

/* Values v(p): in the original order, or in the sorted one. */
static void values_original(void *chunk, int64_t i0, int64_t len)
{
    for (int64_t q = 0; q < len; q++)
        ((double *)chunk)[q] = value_of(i0 + q);
}
static void values_sorted(void *chunk, int64_t i0, int64_t len)
{
    for (int64_t q = 0; q < len; q++)
        ((double *)chunk)[q] = value_of(original_of(i0 + q));
}

/* The permutation: sorted particle i is original particle original_of(i). */
static void perm_expected(void *chunk, int64_t i0, int64_t len)
{
    for (int64_t q = 0; q < len; q++) {
        const int64_t want = original_of(i0 + q), got = ((int64_t *)chunk)[q];
        if (got != want)
            fail("FAIL %s %lld: want %.0f got %.0f\n", "perm", (long long)(i0 + q), (double)want,
                 (double)got);
    }
}

/* The sort's offsets and permutation against the closed forms. */
static void check_sort(const int64_t *d_off, int64_t *d_perm)
{
    int64_t *h = malloc(((size_t)ncells + 1) * sizeof(int64_t));
    if (!h)
        exit(1);
    must(partile_memcpy(ctx, h, d_off, ((size_t)ncells + 1) * 8, PARTILE_COPY_DEVICE_TO_HOST),
         "download offsets");
    for (int64_t c = 0; c <= ncells; c++)
        if (h[c] != cell_offset(c))
            fail("FAIL %s %lld: want %.0f got %.0f\n", "offsets", (long long)c,
                 (double)cell_offset(c), (double)h[c]);
    free(h);
    by_chunks(d_perm, 8, 0, "download perm", perm_expected);
}

/* S[c]: the sum of the values of cell c's particles (exact integers). */
static double *cell_sums(void)
{
    double *s = malloc((size_t)ncells * sizeof(double));
    if (!s)
        exit(1);
    for (int64_t c = 0; c < ncells; c++) {
        double acc = 0.0;
        for (int64_t j = 0; j < cell_count(c); j++)
            acc += value_of(c + j * ncells);
        s[c] = acc;
    }
    return s;
}

/* The deposit of every particle's value: point g (= its index, one per cell
 * on a periodic grid) gets 1/8 of the sums of the eight cells below it. */
static double *expected_field(const double *sums)
{
    double *want = malloc((size_t)ncells * sizeof(double));
    if (!want)
        exit(1);
    for (int64_t g = 0; g < ncells; g++) {
        double acc = 0.0;
        for (int a = 0; a < 8; a++)
            acc += 0.125 * sums[cell_moved(g, -(a & 1), -(a >> 1 & 1), -(a >> 2))];
        want[g] = acc;
    }
    return want;
}

/* A deposit's field against expected_field's. */
static void check_field(const double *d_field, const double *want, const char *what)
{
    double *h = malloc((size_t)ncells * sizeof(double));
    if (!h)
        exit(1);
    must(partile_memcpy(ctx, h, d_field, (size_t)ncells * 8, PARTILE_COPY_DEVICE_TO_HOST),
         "download field");
    for (int64_t g = 0; g < ncells; g++)
        if (h[g] != want[g])
            fail("FAIL %s, point %lld: want %.17g got %.17g\n", what, (long long)g, want[g], h[g]);
    free(h);
}

/* The gather of F[g] = g mod 1024 at the sorted particles: 1/8 of the sum
 * over the eight corners of each one's cell. */
static void gather_expected(void *chunk, int64_t i0, int64_t len)
{
    for (int64_t q = 0; q < len; q++) {
        const int64_t c = sorted_cell(i0 + q);
        double want = 0.0;
        for (int a = 0; a < 8; a++)
            want += 0.125 * (double)(cell_moved(c, a & 1, a >> 1 & 1, a >> 2) % 1024);
        const double got = ((double *)chunk)[q];
        if (got != want)
            fail("FAIL %s, particle %lld: want %.17g got %.17g\n", "gather", (long long)(i0 + q),
                 want, got);
    }
}

/* The scalar CIC mass matrix, σ = 0.5: entry (g, forward offset o) is
 * σ·Σ S[c]/64 over the cells c holding both g and g + o as corners. */
static void check_mass(const double *d_storage, const double *sums, int offsets)
{
    const size_t count = (size_t)ncells * (size_t)offsets;
    double *h = malloc(count * sizeof(double));
    if (!h)
        exit(1);
    must(partile_memcpy(ctx, h, d_storage, count * 8, PARTILE_COPY_DEVICE_TO_HOST),
         "download storage");
    for (int64_t g = 0; g < ncells; g++)
        for (int k = 13; k < 27; k++) { /* forward offsets, the diagonal first */
            const int o[3] = { k % 3 - 1, k / 3 % 3 - 1, k / 9 - 1 };
            double s = 0.0;
            for (int a = 0; a < 8; a++) {
                const int b[3] = { a & 1, a >> 1 & 1, a >> 2 };
                int both = 1;
                for (int ax = 0; ax < 3; ax++)
                    both &= b[ax] + o[ax] >= 0 && b[ax] + o[ax] <= 1;
                if (both)
                    s += sums[cell_moved(g, -b[0], -b[1], -b[2])] / 64.0;
            }
            const double want = 0.5 * s, got = h[(size_t)g * offsets + (k - 13)];
            if (got != want)
                fail("FAIL %s, entry %lld: want %.17g got %.17g\n", "mass matrix",
                     (long long)((size_t)g * offsets + (k - 13)), want, got);
        }
    free(h);
}

int main(int argc, char **argv)
{
    const char *backend = argc > 1 ? argv[1] : "cuda";
    const int host = strcmp(backend, "reference") == 0;
    n = argc > 2 ? atoll(argv[2]) : host ? 3 * 512 + 77 : (1ll << 31) + (1ll << 22);
    side = argc > 3 ? atoll(argv[3]) : host ? 8 : 256;
    ncells = side * side * side;
    per_cell = n / ncells, extra = n % ncells;
    /* a power of two: cell centres (u + 1/2)/SIDE exact in FP32, weights 1/8 */
    if (n < 1 || side < 4 || (side & (side - 1)) || side > 1024) {
        printf("usage: test_large_gpu [BACKEND [N [SIDE]]], N >= 1, SIDE a power of two, "
               "4 to 1024\n");
        return 2;
    }
    const int st = partile_context_create(backend, 0, &ctx);
    if (st == PARTILE_ERROR_NOT_COMPILED || st == PARTILE_ERROR_NO_DEVICE) {
        printf("SKIP: %s: %s\n", backend, partile_last_error_detail());
        return 77;
    }
    must(st, "context");
    elapsed();
    printf("# %s (%s): %" PRId64 " particles on %" PRId64 "^3 periodic cells\n", backend,
           partile_context_device(ctx), n, side);
    const partile_grid_t grid = { 3, { side, side, side }, { 0, 0, 0 },
                                  { 1.0 / side, 1.0 / side, 1.0 / side }, { 1, 1, 1 } };

    if (!host) { /* the peak at once: a device too small skips before the host work */
        void *probe = device_alloc((size_t)n * 48, "the peak's bytes (a probe)");
        must(partile_free(ctx, probe), "free");
    }
    float *x[3];
    for (int a = 0; a < 3; a++)
        x[a] = device_alloc((size_t)n * sizeof(float), "positions");
    int64_t *d_off = device_alloc(((size_t)ncells + 1) * 8, "offsets");
    int64_t *d_perm = device_alloc((size_t)n * 8, "perm");
    upload_positions(x);
    const partile_vectors_t pos = { PARTILE_DTYPE_FLOAT32, { x[0], x[1], x[2] } };
    must(partile_sort(ctx, &grid, (size_t)n, &pos, d_off, d_perm, NULL, NULL), "sort");
    check_sort(d_off, d_perm);
    printf("# sort checked (%.1f s)\n", elapsed());

    double *sums = cell_sums(), *want_field = expected_field(sums);
    double *d_val = device_alloc((size_t)n * 8, "values");
    double *d_field = device_alloc((size_t)ncells * 8, "field");
    partile_transfer_t t = { &grid, PARTILE_SHAPE_CIC, PARTILE_CENTERING_NODE, 1, NULL,
                             PARTILE_ORDER_BY_POINT };
    by_chunks(d_val, 8, 1, "upload values", values_original);
    must(partile_memset(ctx, d_field, 0, (size_t)ncells * 8), "memset");
    must(partile_deposit(ctx, &t, (size_t)n, &pos, d_val, NULL, d_field, NULL), "deposit");
    check_field(d_field, want_field, "unsorted deposit");

    const partile_array_t arrays[3] = { { x[0], PARTILE_DTYPE_FLOAT32 },
                                        { x[1], PARTILE_DTYPE_FLOAT32 },
                                        { x[2], PARTILE_DTYPE_FLOAT32 } };
    must(partile_permute(ctx, (size_t)n, d_perm, 3, arrays, NULL, 0), "permute");
    must(partile_free(ctx, d_perm), "free");
    by_chunks(d_val, 8, 1, "upload values", values_sorted);
    for (int order = PARTILE_ORDER_BY_POINT; order <= PARTILE_ORDER_BY_CELL; order++) {
        t.order = (partile_deposit_order_t)order;
        must(partile_memset(ctx, d_field, 0, (size_t)ncells * 8), "memset");
        must(partile_deposit(ctx, &t, (size_t)n, &pos, d_val, d_off, d_field, NULL),
             "sorted deposit");
        check_field(d_field, want_field,
                    order ? "sorted deposit by cell" : "sorted deposit by point");
    }
    printf("# deposits checked (%.1f s)\n", elapsed());

    partile_mass_layout_t layout;
    must(partile_mass_layout(&grid, PARTILE_SHAPE_CIC, PARTILE_MASS_SCALAR, &layout), "layout");
    double *d_storage = device_alloc(layout.entries * 8, "storage");
    partile_mass_params_t mp;
    memset(&mp, 0, sizeof mp);
    mp.grid = &grid, mp.shape = PARTILE_SHAPE_CIC, mp.kind = PARTILE_MASS_SCALAR, mp.sigma = 0.5;
    must(partile_mass_assemble(ctx, &mp, (size_t)n, &pos, d_off, d_val, NULL, d_storage, NULL),
         "mass matrix");
    check_mass(d_storage, sums, layout.offsets);
    printf("# mass matrix checked (%.1f s)\n", elapsed());

    double *h = malloc((size_t)ncells * sizeof(double));
    if (!h)
        return 1;
    for (int64_t g = 0; g < ncells; g++)
        h[g] = (double)(g % 1024);
    must(partile_memcpy(ctx, d_field, h, (size_t)ncells * 8, PARTILE_COPY_HOST_TO_DEVICE),
         "upload field");
    free(h);
    must(partile_gather(ctx, &t, (size_t)n, &pos, d_field, d_val, NULL), "gather");
    by_chunks(d_val, 8, 0, "download gather", gather_expected);

    for (int a = 0; a < 3; a++)
        partile_free(ctx, x[a]);
    partile_free(ctx, d_off);
    partile_free(ctx, d_val);
    partile_free(ctx, d_field);
    partile_free(ctx, d_storage);
    partile_context_destroy(ctx);
    free(sums);
    free(want_field);
    if (failures) {
        printf("FAIL: %d values differ\n", failures);
        return 1;
    }
    printf("%" PRId64 " particles on %s: sort, deposits (unsorted, by point, by cell), gather "
           "and mass matrix exact (%.1f s)\n",
           n, backend, elapsed());
    return 0;
}
