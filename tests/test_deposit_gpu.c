/* Deposit and gather on the GPU backends: the sorted deposit and every
 * gather bit for bit against the reference, the unsorted (atomic) deposit
 * within rounding, the errors. Skips (exit 77 if all) without a device. */
#include <time.h>

#include "tests/deposit_scenarios.h"

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

GPU_TEST(all, scenario_deposit_all(ctx, fresh_seed()))
GPU_TEST(polynomials, scenario_gather_polynomials(ctx, fresh_seed()))
GPU_TEST(errors, scenario_deposit_errors(ctx, fresh_seed()))

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_cuda), cmocka_unit_test(polynomials_cuda), cmocka_unit_test(errors_cuda),
        cmocka_unit_test(all_hip),  cmocka_unit_test(polynomials_hip),  cmocka_unit_test(errors_hip),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (failed == 0 && skipped == (int)(sizeof tests / sizeof tests[0]))
        return 77;
    return failed;
}
