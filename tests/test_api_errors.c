/* Bad input to the public API returns a negative status and a clear
 * message, never a crash, and leaves the caller's data untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "partile/partile.h"

static partile_context_t *ref_ctx(void)
{
    partile_context_t *ctx = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ctx), PARTILE_SUCCESS);
    assert_non_null(ctx);
    return ctx;
}

static void test_status_strings(void **state)
{
    (void)state;
    for (int s = 0; s >= -13; s--) {
        const char *msg = partile_status_string(s);
        assert_non_null(msg);
        assert_true(strlen(msg) > 5);
        assert_null(strstr(msg, "unknown status"));
    }
    assert_non_null(strstr(partile_status_string(-999), "unknown status"));
    assert_non_null(strstr(partile_status_string(PARTILE_ERROR_NOT_COMPILED), "not compiled"));
}

static void test_context_bad_input(void **state)
{
    (void)state;
    partile_context_t *ctx = (partile_context_t *)(uintptr_t)0x1;
    assert_int_equal(partile_context_create("reference", 0, NULL), PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_context_create(NULL, 0, &ctx), PARTILE_ERROR_NULL_POINTER);
    assert_null(ctx);
    ctx = (partile_context_t *)(uintptr_t)0x1;
    assert_int_equal(partile_context_create("vulkan", 0, &ctx), PARTILE_ERROR_UNKNOWN_BACKEND);
    assert_null(ctx);
    assert_non_null(strstr(partile_last_error_detail(), "vulkan"));
    assert_int_equal(partile_context_create("", 0, &ctx), PARTILE_ERROR_UNKNOWN_BACKEND);
    assert_int_equal(partile_context_destroy(NULL), PARTILE_SUCCESS);
    assert_int_equal(partile_context_synchronize(NULL), PARTILE_ERROR_NULL_POINTER);
    assert_string_equal(partile_context_backend(NULL), "(null)");
    partile_backend_info_t info;
    assert_int_equal(partile_backend_query(-1, &info), PARTILE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(partile_backend_query(partile_backend_count(), &info),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(partile_backend_query(0, NULL), PARTILE_ERROR_NULL_POINTER);
    void *stream = (void *)&info;
    assert_int_equal(partile_context_set_stream(NULL, NULL), PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_context_get_stream(NULL, &stream), PARTILE_ERROR_NULL_POINTER);
    assert_ptr_equal(stream, (void *)&info); /* untouched */
}

/* The reference backend has no stream: NULL is its only one. */
static void test_reference_stream(void **state)
{
    (void)state;
    partile_context_t *ctx = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ctx), PARTILE_SUCCESS);
    int host = 0;
    void *stream = &host;
    assert_int_equal(partile_context_get_stream(ctx, &stream), PARTILE_SUCCESS);
    assert_null(stream);
    assert_int_equal(partile_context_get_stream(ctx, NULL), PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_context_set_stream(ctx, NULL), PARTILE_SUCCESS);
    assert_int_equal(partile_context_set_stream(ctx, &host), PARTILE_ERROR_UNSUPPORTED);
    assert_non_null(strstr(partile_last_error_detail(), "reference backend runs on the host"));
    /* still usable */
    double x = 0.5, y = 0.0;
    assert_int_equal(partile_memcpy(ctx, &y, &x, sizeof x, PARTILE_COPY_DEVICE_TO_DEVICE),
                     PARTILE_SUCCESS);
    assert_true(y == 0.5);
    partile_context_destroy(ctx);
}

/* A GPU backend either runs, or says precisely why not. */
static void test_gpu_backends_report_why(void **state)
{
    (void)state;
    const char *names[] = { "cuda", "hip" };
    for (int i = 0; i < 2; i++) {
        partile_context_t *ctx = NULL;
        int st = partile_context_create(names[i], 0, &ctx);
        if (st == PARTILE_SUCCESS) {
            partile_context_destroy(ctx);
            continue;
        }
        assert_null(ctx);
        assert_true(st == PARTILE_ERROR_NOT_COMPILED || st == PARTILE_ERROR_NO_DEVICE);
        assert_true(strlen(partile_last_error_detail()) > 0);
        /* a device index far out of range is never accepted */
        st = partile_context_create(names[i], 1 << 20, &ctx);
        assert_true(st == PARTILE_ERROR_NOT_COMPILED || st == PARTILE_ERROR_NO_DEVICE ||
                    st == PARTILE_ERROR_BAD_DEVICE_INDEX);
    }
    partile_context_t *ctx = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ctx), PARTILE_SUCCESS);
    partile_context_destroy(ctx);
    assert_int_equal(partile_context_create("auto", 0, &ctx), PARTILE_SUCCESS);
    assert_non_null(ctx);
    partile_context_destroy(ctx);
}

static void test_memory_bad_input(void **state)
{
    (void)state;
    partile_context_t *ctx = ref_ctx();
    void *p = (void *)(uintptr_t)0x1;
    assert_int_equal(partile_malloc(NULL, 8, &p), PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_malloc(ctx, 8, NULL), PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_malloc(ctx, SIZE_MAX, &p), PARTILE_ERROR_SIZE_OVERFLOW);
    assert_null(p);
    assert_int_equal(partile_malloc(ctx, 0, &p), PARTILE_SUCCESS);
    assert_null(p);
    assert_int_equal(partile_free(ctx, NULL), PARTILE_SUCCESS);
    double src[4] = { 1, 2, 3, 4 }, dst[4] = { 9, 9, 9, 9 };
    assert_int_equal(partile_memcpy(ctx, NULL, src, 8, PARTILE_COPY_HOST_TO_DEVICE),
                     PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_memcpy(ctx, dst, NULL, 8, PARTILE_COPY_HOST_TO_DEVICE),
                     PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_memcpy(ctx, dst, src, 8, (partile_copy_kind_t)7),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    assert_true(dst[0] == 9);
    assert_int_equal(partile_memcpy(ctx, dst, src, sizeof src, PARTILE_COPY_HOST_TO_DEVICE), 0);
    assert_memory_equal(dst, src, sizeof src);
    assert_int_equal(partile_memset(ctx, NULL, 0, 8), PARTILE_ERROR_NULL_POINTER);
    partile_context_destroy(ctx);
}

static void test_mma_bad_input(void **state)
{
    (void)state;
    partile_context_t *ctx = ref_ctx();
    partile_tile_t t = { 16, 8, 16, PARTILE_FP64, PARTILE_FP64 };
    double a[16 * 16], b[16 * 8], c[16 * 8], d[16 * 8];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    memset(c, 0, sizeof c);
    for (int i = 0; i < 128; i++)
        d[i] = -7.0;
    double rate;
    assert_int_equal(partile_mma_batched(NULL, &t, 1, 16, 8, 16, a, b, c, d),
                     PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_mma_batched(ctx, NULL, 1, 16, 8, 16, a, b, c, d),
                     PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_mma_batched(ctx, &t, 1, 16, 8, 16, NULL, b, c, d),
                     PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_mma_batched(ctx, &t, 1, 16, 8, 16, a, b, c, NULL),
                     PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_mma_batched(ctx, &t, 1, -1, 8, 16, a, b, c, d),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    /* sizes whose byte counts overflow size_t */
    assert_int_equal(partile_mma_batched(ctx, &t, SIZE_MAX / 4, 16, 8, 16, a, b, c, d),
                     PARTILE_ERROR_SIZE_OVERFLOW);
    assert_int_equal(partile_mma_batched(ctx, &t, (size_t)1 << 40, 1 << 30, 1 << 30, 1 << 30,
                                         a, b, c, d),
                     PARTILE_ERROR_SIZE_OVERFLOW);
    /* invalid tiles: FP64 accumulator with FP16 input, zero size, bad format */
    partile_tile_t bad = { 16, 8, 16, PARTILE_FP16, PARTILE_FP64 };
    assert_int_equal(partile_mma_batched(ctx, &bad, 1, 16, 8, 16, a, b, c, d),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    bad = (partile_tile_t){ 0, 8, 16, PARTILE_FP64, PARTILE_FP64 };
    assert_int_equal(partile_mma_batched(ctx, &bad, 1, 16, 8, 16, a, b, c, d),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    bad = (partile_tile_t){ 16, 8, 16, (partile_format_t)42, PARTILE_FP64 };
    assert_int_equal(partile_mma_batched(ctx, &bad, 1, 16, 8, 16, a, b, c, d),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    for (int i = 0; i < 128; i++)
        assert_true(d[i] == -7.0); /* nothing written by any failed call */
    /* the reference has no register-peak microbenchmark: unsupported, not 0 */
    assert_int_equal(partile_mma_peak(ctx, &t, &rate), PARTILE_ERROR_UNSUPPORTED);
    assert_int_equal(partile_fma_peak(ctx, &rate), PARTILE_ERROR_UNSUPPORTED);
    assert_int_equal(partile_mma_peak(ctx, &t, NULL), PARTILE_ERROR_NULL_POINTER);
    int n;
    partile_mma_shape_t s;
    assert_int_equal(partile_mma_shape_count(ctx, NULL), PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_mma_shape_count(ctx, &n), 0);
    assert_int_equal(partile_mma_shape_get(ctx, n, &s), PARTILE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(partile_mma_shape_get(ctx, -1, &s), PARTILE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(partile_mma_shape_get(ctx, 0, NULL), PARTILE_ERROR_NULL_POINTER);
    /* the shape list by backend name, without a context */
    assert_int_equal(partile_backend_shape_count(NULL, &n), PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_backend_shape_count("reference", NULL), PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_backend_shape_count("opencl", &n), PARTILE_ERROR_UNKNOWN_BACKEND);
    assert_int_equal(partile_backend_shape_count("reference", &n), 0);
    assert_true(n >= 12);
    assert_int_equal(partile_backend_shape_get("reference", n, &s), PARTILE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(partile_backend_shape_get("reference", 0, &s), 0);
    assert_int_equal(s.available, 0);
    partile_context_destroy(ctx);
}

static int count_calls(partile_context_t *ctx, void *arg)
{
    (void)ctx;
    return ++*(int *)arg >= 5 ? PARTILE_ERROR_DEVICE : 0;
}

static void test_timing(void **state)
{
    (void)state;
    partile_context_t *ctx = ref_ctx();
    partile_timing_t t;
    int calls = 0;
    assert_int_equal(partile_time(ctx, NULL, NULL, 1, 1, &t), PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_time(ctx, count_calls, &calls, -1, 1, &t),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(partile_time(ctx, count_calls, &calls, 0, 0, &t),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(partile_time(ctx, count_calls, &calls, 1, 3, &t), 0);
    assert_int_equal(calls, 4);
    assert_true(t.min_s >= 0 && t.median_s >= t.min_s && t.repeats == 3);
    /* a failing callee stops the timing and its status comes back */
    assert_int_equal(partile_time(ctx, count_calls, &calls, 0, 10, &t), PARTILE_ERROR_DEVICE);
    partile_context_destroy(ctx);
}

/* A failure's detail is recorded for the calling thread; every API call that
 * returns a status forgets it first (status.h), the calls without a context
 * too, so a later success never carries an earlier failure's detail. */
static void fail_with_detail(void)
{
    partile_context_t *ctx = NULL;
    assert_int_equal(partile_context_create("vulkan", 0, &ctx), PARTILE_ERROR_UNKNOWN_BACKEND);
    assert_true(strlen(partile_last_error_detail()) > 0);
}

static void test_detail_forgotten(void **state)
{
    (void)state;
    partile_grid_t g;
    memset(&g, 0, sizeof g);
    g.dim = 2;
    for (int a = 0; a < 3; a++)
        g.cells[a] = 4, g.spacing[a] = 0.25, g.periodic[a] = 1;
    int64_t count = 0, points[3], total = 0;
    fail_with_detail();
    assert_int_equal(partile_grid_cell_count(&g, &count), PARTILE_SUCCESS);
    assert_string_equal(partile_last_error_detail(), "");
    fail_with_detail();
    assert_int_equal(partile_field_shape(&g, PARTILE_CENTERING_NODE, points, &total),
                     PARTILE_SUCCESS);
    assert_string_equal(partile_last_error_detail(), "");
    int strategy = -1;
    fail_with_detail();
    assert_int_equal(partile_pairs_strategy_from_name("naive", &strategy), PARTILE_SUCCESS);
    assert_string_equal(partile_last_error_detail(), "");
    partile_mass_layout_t layout;
    fail_with_detail();
    assert_int_equal(partile_mass_layout(&g, PARTILE_SHAPE_CIC, PARTILE_MASS_SCALAR, &layout),
                     PARTILE_SUCCESS);
    assert_string_equal(partile_last_error_detail(), "");
    fail_with_detail();
    assert_int_equal(partile_mass_export_count(&g, PARTILE_SHAPE_CIC, &count), PARTILE_SUCCESS);
    assert_string_equal(partile_last_error_detail(), "");
    partile_backend_info_t info;
    fail_with_detail();
    assert_int_equal(partile_backend_query(0, &info), PARTILE_SUCCESS);
    assert_string_equal(partile_last_error_detail(), "");
    /* the queries that return no status leave it: partile_status_string
     * and the detail are read together (the Fortran partile_message) */
    fail_with_detail();
    (void)partile_status_string(PARTILE_ERROR_UNKNOWN_BACKEND);
    (void)partile_pairs_strategy_name(1);
    (void)partile_dtype_size(PARTILE_DTYPE_FLOAT64);
    (void)partile_version();
    assert_true(strlen(partile_last_error_detail()) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_strings),
        cmocka_unit_test(test_context_bad_input),
        cmocka_unit_test(test_reference_stream),
        cmocka_unit_test(test_gpu_backends_report_why),
        cmocka_unit_test(test_memory_bad_input),
        cmocka_unit_test(test_mma_bad_input),
        cmocka_unit_test(test_timing),
        cmocka_unit_test(test_detail_forgotten),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
