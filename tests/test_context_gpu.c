/* Where a GPU context's work runs (include/partile/context.h):
 *  - on the caller's stream: the same calls give the same bits as on the
 *    context's own stream, the stream in use is reported, and NULL returns
 *    to the own one (the caller's stream is another context's here, so that
 *    no vendor header is needed);
 *  - on its own device, with contexts of two devices used in turn from one
 *    thread (every call selects its context's device: copies, fills, the
 *    timer's events too); with one device, both contexts on it.
 * Skips where a backend is not compiled or has no device. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test.h"
#include "sort_scenarios.h" /* stage, fetch */

enum { CELLS = 24, N = 150000, M = 3 };

static const partile_grid_t grid = { 3, { CELLS, CELLS, CELLS }, { 0, 0, 0 },
                                     { 1.0 / CELLS, 1.0 / CELLS, 1.0 / CELLS }, { 1, 1, 1 } };

/* What one round of calls leaves, copied back to the host. */
typedef struct stream_round {
    int64_t offsets[CELLS * CELLS * CELLS + 1];
    int64_t perm[N];
    double field[CELLS * CELLS * CELLS * M];
    double gathered[N * M];
} stream_round;

/* N random positions in the unit cube (SoA) and N × M values, fresh each call. */
static void fresh_particles(double *xyz[3], double **values)
{
    uint64_t seed = fresh_seed();
    *values = (double *)malloc(N * M * sizeof(double));
    assert_non_null(*values);
    for (int a = 0; a < 3; a++) {
        xyz[a] = (double *)malloc(N * sizeof(double));
        assert_non_null(xyz[a]);
        for (int p = 0; p < N; p++)
            xyz[a][p] = su_uniform(&seed);
    }
    for (int i = 0; i < N * M; i++)
        (*values)[i] = su_uniform(&seed) - 0.5;
}

static void free_particles(double *xyz[3], double *values)
{
    free(values);
    for (int a = 0; a < 3; a++)
        free(xyz[a]);
}

/* Sort, reorder the positions, the sorted (bitwise) deposit, the gather. */
static void run_round(partile_context_t *ctx, double *const xyz[3], const double *values,
                      stream_round *out)
{
    const int64_t cells = CELLS * CELLS * CELLS;
    double *d_xyz[3];
    for (int a = 0; a < 3; a++)
        d_xyz[a] = (double *)stage(ctx, xyz[a], N * sizeof(double));
    double *d_values = (double *)stage(ctx, values, N * M * sizeof(double));
    /* outputs poisoned by stage; the deposit adds into a zeroed field */
    int64_t *d_offsets = (int64_t *)stage(ctx, NULL, (cells + 1) * 8);
    int64_t *d_perm = (int64_t *)stage(ctx, NULL, N * 8);
    double *d_field = (double *)stage(ctx, NULL, cells * M * 8);
    double *d_gathered = (double *)stage(ctx, NULL, N * M * 8);
    assert_int_equal(partile_memset(ctx, d_field, 0, cells * M * 8), 0);

    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { d_xyz[0], d_xyz[1], d_xyz[2] } };
    assert_int_equal(partile_sort(ctx, &grid, N, &pos, d_offsets, d_perm, NULL, NULL), 0);
    partile_array_t arrays[3] = { { d_xyz[0], PARTILE_DTYPE_FLOAT64 },
                                  { d_xyz[1], PARTILE_DTYPE_FLOAT64 },
                                  { d_xyz[2], PARTILE_DTYPE_FLOAT64 } };
    assert_int_equal(partile_permute(ctx, N, d_perm, 3, arrays, NULL, 0), 0);
    partile_transfer_t t = { &grid, PARTILE_SHAPE_CIC, PARTILE_CENTERING_NODE, M, NULL,
                             PARTILE_ORDER_BY_POINT };
    assert_int_equal(partile_deposit(ctx, &t, N, &pos, d_values, d_offsets, d_field, NULL), 0);
    assert_int_equal(partile_gather(ctx, &t, N, &pos, d_field, d_gathered, NULL), 0);

    fetch(ctx, out->offsets, d_offsets, sizeof out->offsets);
    fetch(ctx, out->perm, d_perm, sizeof out->perm);
    fetch(ctx, out->field, d_field, sizeof out->field);
    fetch(ctx, out->gathered, d_gathered, sizeof out->gathered);
    void *all[] = { d_xyz[0], d_xyz[1], d_xyz[2], d_values, d_offsets, d_perm, d_field, d_gathered };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        assert_int_equal(partile_free(ctx, all[i]), 0);
}

static void caller_stream(partile_context_t *ctx, const char *backend)
{
    partile_context_t *other = NULL;
    assert_int_equal(partile_context_create(backend, 0, &other), PARTILE_SUCCESS);
    void *own = NULL, *theirs = NULL, *now = NULL;
    assert_int_equal(partile_context_get_stream(ctx, &own), PARTILE_SUCCESS);
    assert_int_equal(partile_context_get_stream(other, &theirs), PARTILE_SUCCESS);
    assert_non_null(own);
    assert_non_null(theirs);
    assert_ptr_not_equal(own, theirs);

    double *xyz[3], *values;
    fresh_particles(xyz, &values);
    stream_round *on_own = (stream_round *)malloc(sizeof *on_own);
    stream_round *on_theirs = (stream_round *)malloc(sizeof *on_theirs);
    assert_non_null(on_own);
    assert_non_null(on_theirs);

    run_round(ctx, xyz, values, on_own);
    assert_int_equal(partile_context_set_stream(ctx, theirs), PARTILE_SUCCESS);
    assert_int_equal(partile_context_get_stream(ctx, &now), PARTILE_SUCCESS);
    assert_ptr_equal(now, theirs);
    memset(on_theirs, 0xa5, sizeof *on_theirs);
    run_round(ctx, xyz, values, on_theirs);
    assert_memory_equal(on_own, on_theirs, sizeof *on_own);
    /* the other context's own work on its stream meanwhile is unaffected */
    memset(on_theirs, 0xa5, sizeof *on_theirs);
    run_round(other, xyz, values, on_theirs);
    assert_memory_equal(on_own, on_theirs, sizeof *on_own);

    assert_int_equal(partile_context_set_stream(ctx, NULL), PARTILE_SUCCESS);
    assert_int_equal(partile_context_get_stream(ctx, &now), PARTILE_SUCCESS);
    assert_ptr_equal(now, own);
    assert_int_equal(partile_context_destroy(other), PARTILE_SUCCESS);
    /* ctx is back on its own stream: usable after the other's is gone */
    memset(on_theirs, 0xa5, sizeof *on_theirs);
    run_round(ctx, xyz, values, on_theirs);
    assert_memory_equal(on_own, on_theirs, sizeof *on_own);
    free(on_own);
    free(on_theirs);
    free_particles(xyz, values);
}

GPU_TEST(test_caller_stream, caller_stream(ctx, backend))

typedef struct fill_arg {
    void *ptr;
    size_t bytes;
} fill_arg;

static int timed_fill(partile_context_t *ctx, void *arg)
{
    const fill_arg *f = (const fill_arg *)arg;
    return partile_memset(ctx, f->ptr, 0x3c, f->bytes);
}

static void two_devices(partile_context_t *ctx, const char *backend)
{
    int devices = 0;
    for (int i = 0; i < partile_backend_count(); i++) {
        partile_backend_info_t info;
        assert_int_equal(partile_backend_query(i, &info), PARTILE_SUCCESS);
        if (strcmp(info.name, backend) == 0)
            devices = info.device_count;
    }
    const int second = devices >= 2 ? 1 : 0;
    if (!second)
        printf("# %s: one device; both contexts on device 0\n", backend);
    partile_context_t *ctx1 = NULL;
    assert_int_equal(partile_context_create(backend, second, &ctx1), PARTILE_SUCCESS);

    double *xyz[3], *values;
    fresh_particles(xyz, &values);
    stream_round *r0 = (stream_round *)malloc(sizeof *r0);
    stream_round *r1 = (stream_round *)malloc(sizeof *r1);
    assert_non_null(r0);
    assert_non_null(r1);
    /* in turn: each round starts with the other context's device current */
    for (int k = 0; k < 2; k++) {
        memset(r0, 0xa5, sizeof *r0);
        memset(r1, 0x5a, sizeof *r1);
        run_round(ctx, xyz, values, r0);
        run_round(ctx1, xyz, values, r1);
        assert_memory_equal(r0, r1, sizeof *r0);
    }
    /* ctx's device current: ctx1's timer, fill and copy stay on ctx1's */
    void *buf = NULL;
    assert_int_equal(partile_malloc(ctx1, 1 << 20, &buf), PARTILE_SUCCESS);
    assert_int_equal(partile_context_synchronize(ctx), PARTILE_SUCCESS);
    fill_arg f = { buf, 1 << 20 };
    partile_timing_t timing;
    assert_int_equal(partile_time(ctx1, timed_fill, &f, 1, 3, &timing), PARTILE_SUCCESS);
    assert_true(timing.min_s > 0.0 && timing.median_s >= timing.min_s);
    unsigned char back[64];
    assert_int_equal(partile_context_synchronize(ctx), PARTILE_SUCCESS);
    assert_int_equal(partile_memcpy(ctx1, back, buf, sizeof back, PARTILE_COPY_DEVICE_TO_HOST),
                     PARTILE_SUCCESS);
    for (size_t i = 0; i < sizeof back; i++)
        assert_int_equal(back[i], 0x3c);
    assert_int_equal(partile_context_synchronize(ctx1), PARTILE_SUCCESS);
    assert_int_equal(partile_free(ctx1, buf), PARTILE_SUCCESS);
    assert_int_equal(partile_context_destroy(ctx1), PARTILE_SUCCESS);
    free(r0);
    free(r1);
    free_particles(xyz, values);
}

GPU_TEST(test_two_devices, two_devices(ctx, backend))

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_caller_stream_cuda),
        cmocka_unit_test(test_caller_stream_hip),
        cmocka_unit_test(test_two_devices_cuda),
        cmocka_unit_test(test_two_devices_hip),
    };
    GPU_TEST_MAIN(tests);
}
