/* GPU tile engines against the reference, on fresh random input: FP64
 * bitwise, lower precisions within the checker's tolerance. Skips (cmocka
 * skip) where a backend is not compiled or has no device. */
#include <string.h>

#include "tests/gpu_test.h"
#include "tools/conformance.h"

static void check_all_shapes(const char *backend)
{
    partile_context_t *ctx = open_or_skip(backend);
    if (!ctx) {
        skip();
        return;
    }
    uint64_t seed = test_seed();
    printf("# %s on %s, seed %llu\n", backend, partile_context_device(ctx),
           (unsigned long long)seed);
    int n = 0, ran = 0;
    assert_int_equal(partile_mma_shape_count(ctx, &n), 0);
    for (int i = 0; i < n; i++) {
        partile_mma_shape_t s;
        assert_int_equal(partile_mma_shape_get(ctx, i, &s), 0);
        if (!s.available) {
            /* an unavailable shape is refused, never run */
            int dummy = 0;
            assert_int_equal(partile_mma_batched(ctx, &s.tile, 1, 1, 1, 1, &dummy, &dummy,
                                                 &dummy, &dummy),
                             PARTILE_ERROR_UNSUPPORTED);
            continue;
        }
        partile_check_result_t r;
        assert_int_equal(partile_check_shape(ctx, &s, seed, 8, stdout, &r), 0);
        printf("# %-16s %lld values, %lld mismatches, max %.0f ulp, max rel %.3g\n", s.name,
               r.compared, r.mismatches, r.max_ulp, r.max_rel);
        assert_true(partile_check_passed(&r));
        if (s.tile.facc == PARTILE_FP64)
            assert_true(r.max_ulp == 0.0);
        ran++;
    }
    assert_true(ran > 0);
    /* a tile this engine does not have is refused with UNSUPPORTED */
    partile_tile_t odd = { 3, 5, 7, PARTILE_FP64, PARTILE_FP64 };
    double x = 0;
    assert_int_equal(partile_mma_batched(ctx, &odd, 1, 1, 1, 1, &x, &x, &x, &x),
                     PARTILE_ERROR_UNSUPPORTED);
    partile_context_destroy(ctx);
}

static void test_cuda_tiles(void **state) { (void)state; check_all_shapes("cuda"); }
static void test_hip_tiles(void **state) { (void)state; check_all_shapes("hip"); }

/* Memory round trip through the GPU, including a device-to-device copy. */
static void check_memory(const char *backend)
{
    partile_context_t *ctx = open_or_skip(backend);
    if (!ctx) {
        skip();
        return;
    }
    enum { N = 1000003 };
    static double h[N], back[N];
    for (int i = 0; i < N; i++)
        h[i] = i * 0.5 - 3.0;
    void *d1 = NULL, *d2 = NULL;
    assert_int_equal(partile_malloc(ctx, sizeof h, &d1), 0);
    assert_int_equal(partile_malloc(ctx, sizeof h, &d2), 0);
    assert_int_equal(partile_memcpy(ctx, d1, h, sizeof h, PARTILE_COPY_HOST_TO_DEVICE), 0);
    assert_int_equal(partile_memset(ctx, d2, 0xff, sizeof h), 0);
    assert_int_equal(partile_memcpy(ctx, d2, d1, sizeof h, PARTILE_COPY_DEVICE_TO_DEVICE), 0);
    assert_int_equal(partile_memcpy(ctx, back, d2, sizeof h, PARTILE_COPY_DEVICE_TO_HOST), 0);
    assert_memory_equal(h, back, sizeof h);
    assert_int_equal(partile_free(ctx, d1), 0);
    assert_int_equal(partile_free(ctx, d2), 0);
    void *huge = NULL;
    int st = partile_malloc(ctx, (size_t)1 << 60, &huge); /* an exabyte */
    assert_int_equal(st, PARTILE_ERROR_OUT_OF_MEMORY);
    assert_null(huge);
    assert_true(strlen(partile_last_error_detail()) > 0);
    partile_context_destroy(ctx);
}

static void test_cuda_memory(void **state) { (void)state; check_memory("cuda"); }
static void test_hip_memory(void **state) { (void)state; check_memory("hip"); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cuda_memory),
        cmocka_unit_test(test_cuda_tiles),
        cmocka_unit_test(test_hip_memory),
        cmocka_unit_test(test_hip_tiles),
    };
    GPU_TEST_MAIN(tests);
}
