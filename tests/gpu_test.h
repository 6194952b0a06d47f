/* What every GPU test program shares: open a backend or skip (cmocka's
 * skip where it is not compiled or has no device), one fresh seed per run,
 * a test body run once per GPU backend, and exit 77 when everything was
 * skipped so that Meson counts a skip too. */
#ifndef PARTILE_TESTS_GPU_TEST_H
#define PARTILE_TESTS_GPU_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <cmocka.h>

#include "partile/partile.h"
#include "test_seed.h"

static int gpu_tests_skipped;

static partile_context_t *open_or_skip(const char *backend)
{
    partile_context_t *ctx = NULL;
    int st = partile_context_create(backend, 0, &ctx);
    if (st == PARTILE_ERROR_NOT_COMPILED || st == PARTILE_ERROR_NO_DEVICE) {
        printf("# %s: %s: %s\n", backend, partile_status_string(st), partile_last_error_detail());
        gpu_tests_skipped++;
        return NULL;
    }
    assert_int_equal(st, PARTILE_SUCCESS);
    return ctx;
}

/* Seeds from the clock or PARTILE_TEST_SEED (test_seed.h; printed once,
 * to repeat a failure), one per call. */
static inline uint64_t fresh_seed(void)
{
    static uint64_t s;
    if (!s) {
        s = test_seed();
        printf("# seed %llu\n", (unsigned long long)s);
    }
    return ++s;
}

/* name_cuda and name_hip: body runs with ctx open on that backend. */
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

/* Runs the group; 77 if every test skipped. */
#define GPU_TEST_MAIN(tests)                                                   \
    do {                                                                       \
        int failed_ = cmocka_run_group_tests(tests, NULL, NULL);               \
        if (failed_ == 0 && gpu_tests_skipped == (int)(sizeof tests / sizeof tests[0])) \
            return 77;                                                         \
        return failed_;                                                        \
    } while (0)

#endif
