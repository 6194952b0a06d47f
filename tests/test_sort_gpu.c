/* Binning, sorting, re-sorting and permuting on the GPU backends: every
 * result checked as a stable sort and against the reference bit for bit.
 * Skips (cmocka skip; exit 77 if everything skipped) without a device. */
#include <time.h>

#include "tests/sort_scenarios.h"

static int skipped;

static partile_context_t *open_or_skip(const char *backend)
{
    partile_context_t *ctx = NULL;
    int st = partile_context_create(backend, 0, &ctx);
    if (st == PARTILE_ERROR_NOT_COMPILED || st == PARTILE_ERROR_NO_DEVICE) {
        printf("# %s: %s\n", backend, partile_last_error_detail());
        skipped++;
        return NULL;
    }
    assert_int_equal(st, 0);
    return ctx;
}

static uint64_t fresh_seed(void)
{
    static uint64_t s;
    if (!s) {
        s = (uint64_t)time(NULL);
        printf("# seed %llu\n", (unsigned long long)s);
    }
    return ++s;
}

#define GPU_TEST(name, body)                                                   \
    static void name(void **state, const char *backend)                        \
    {                                                                          \
        (void)state;                                                           \
        partile_context_t *ctx = open_or_skip(backend);                        \
        if (!ctx) {                                                            \
            skip();                                                            \
            return;                                                            \
        }                                                                      \
        body;                                                                  \
        partile_context_destroy(ctx);                                          \
    }                                                                          \
    static void name##_cuda(void **s) { name(s, "cuda"); }                     \
    static void name##_hip(void **s) { name(s, "hip"); }

GPU_TEST(random, scenario_random(ctx, fresh_seed()))
GPU_TEST(crowded, scenario_crowded(ctx, fresh_seed()))
GPU_TEST(zero, scenario_zero_particles(ctx))
GPU_TEST(bad, scenario_bad_positions(ctx, fresh_seed()))
GPU_TEST(resort, scenario_resort(ctx, fresh_seed()))
GPU_TEST(permute, scenario_permute(ctx, fresh_seed()))

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_cuda),  cmocka_unit_test(crowded_cuda),
        cmocka_unit_test(zero_cuda),    cmocka_unit_test(bad_cuda),
        cmocka_unit_test(resort_cuda),  cmocka_unit_test(permute_cuda),
        cmocka_unit_test(random_hip),   cmocka_unit_test(crowded_hip),
        cmocka_unit_test(zero_hip),     cmocka_unit_test(bad_hip),
        cmocka_unit_test(resort_hip),   cmocka_unit_test(permute_hip),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (failed == 0 && skipped == (int)(sizeof tests / sizeof tests[0]))
        return 77;
    return failed;
}
