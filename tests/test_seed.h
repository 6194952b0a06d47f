/* The seed of a randomized test, printed by the test: PARTILE_TEST_SEED
 * when set (to repeat a failure from the seed it printed), else the given
 * default (the clock, or a test's fixed seed). */
#ifndef PARTILE_TESTS_TEST_SEED_H
#define PARTILE_TESTS_TEST_SEED_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t test_seed_or(uint64_t fallback)
{
    const char *s = getenv("PARTILE_TEST_SEED");
    return s && *s ? (uint64_t)strtoull(s, NULL, 10) : fallback;
}

static inline uint64_t test_seed(void)
{
    return test_seed_or((uint64_t)time(NULL));
}

#endif
