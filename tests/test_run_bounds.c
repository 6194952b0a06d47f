/* The run-aggregation arithmetic of the GPU sort, emulated for 32- and
 * 64-lane warps: every lane's run bounds against brute force, and the slots
 * an aggregated warp hands out are exactly those of one atomic per lane. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backends/gpu/run_bounds.h"

static uint64_t rng_state = 12345;
static uint64_t next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* One warp of `w` lanes: keys (few distinct, in runs or random), some lanes
 * invalid. Emulates run_aggregated_slot and compares with per-lane atomics. */
static void check_warp(int w, int pattern)
{
    unsigned key[64];
    int valid[64];
    for (int l = 0; l < w; l++) {
        key[l] = pattern == 0 ? (unsigned)(next() % 3)            /* random, few keys */
                 : pattern == 1 ? (unsigned)(l / (1 + next() % 9)) /* runs */
                                : 7u;                              /* one key */
        valid[l] = next() % 8 != 0;
    }
    /* heads as the device computes them (validity breaks runs too) */
    unsigned long long heads = 0;
    for (int l = 0; l < w; l++) {
        unsigned k = valid[l] ? key[l] : 0xffffffffu;
        unsigned pk = l ? (valid[l - 1] ? key[l - 1] : 0xffffffffu) : k;
        int head = l == 0 || k != pk || valid[l] != valid[l ? l - 1 : 0];
        heads |= (unsigned long long)head << l;
    }
    unsigned counter_agg[8] = { 0 }, counter_ref[8] = { 0 }, base[64] = { 0 };
    for (int l = 0; l < w; l++) { /* leaders reserve their runs, in lane order */
        int start, end;
        partile_run_bounds(heads, l, w, &start, &end);
        /* brute force bounds */
        int s = l, e = l + 1;
        while (s > 0 && !((heads >> s) & 1))
            s--;
        while (e < w && !((heads >> e) & 1))
            e++;
        assert_int_equal(start, s);
        assert_int_equal(end, e);
        if (start == l && valid[l])
            base[l] = (counter_agg[key[l] % 8] += (unsigned)(end - l)) - (unsigned)(end - l);
    }
    for (int l = 0; l < w; l++) {
        if (!valid[l])
            continue;
        int start, end;
        partile_run_bounds(heads, l, w, &start, &end);
        unsigned slot = base[start] + (unsigned)(l - start);
        /* one atomic per lane in lane order would give the same slot */
        assert_int_equal(slot, counter_ref[key[l] % 8]++);
    }
    for (int k = 0; k < 8; k++)
        assert_int_equal(counter_agg[k], counter_ref[k]);
}

static void test_run_bounds(void **state)
{
    (void)state;
    for (int trial = 0; trial < 2000; trial++)
        for (int pattern = 0; pattern < 3; pattern++) {
            check_warp(32, pattern);
            check_warp(64, pattern);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_run_bounds) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
