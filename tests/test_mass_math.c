/* partile_div_by (common/mass_math.h), the quotient behind every backend's
 * α, against the division it replaces: bit for bit on random operands over
 * the whole range it takes the short path in, on the α numerators and
 * denominators of random ω, near its range limits, and on zeros, infinities
 * and NaN. A wrong correction step (the residual's sign) must be caught. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/mass_math.h"

static uint64_t rng_state;
static uint64_t next_u64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double uniform(void) { return (double)(next_u64() >> 11) * 0x1p-53; }

/* A double with a random 52-bit fraction and a random sign, exponent in [lo, hi]. */
static double random_double(int lo, int hi)
{
    const double m = 1.0 + (double)(next_u64() >> 12) * 0x1p-52;
    const double v = ldexp(m, lo + (int)(next_u64() % (uint64_t)(hi - lo + 1)));
    return (next_u64() & 1) ? -v : v;
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Mismatches of partile_div_by(x, d, 1/d) against x / d over n draws. */
static long mismatches(long n, double (*draw_x)(void), double (*draw_d)(void))
{
    long bad = 0;
    for (long i = 0; i < n; i++) {
        const double x = draw_x(), d = draw_d();
        bad += !same_bits(partile_div_by(x, d, 1.0 / d), x / d);
    }
    return bad;
}

static double wide_x(void) { return random_double(-499, 499); }
static double wide_d(void) { return random_double(-399, 399); }
static double near_one(void) { return random_double(-3, 3); }

static void test_random_operands(void **state)
{
    (void)state;
    rng_state = 20261201;
    assert_int_equal(mismatches(4000000, wide_x, wide_d), 0);
    assert_int_equal(mismatches(4000000, near_one, near_one), 0);
}

/* The quotients α actually takes: numerators (δ + ω_i ω_j) − C over 1 + |ω|². */
static void test_alpha_quotients(void **state)
{
    (void)state;
    rng_state = 7;
    long bad = 0;
    for (int t = 0; t < 1000000; t++) {
        const double scale = ldexp(1.0, (int)(next_u64() % 41) - 20);
        const double w[3] = { (uniform() - 0.5) * scale, (uniform() - 0.5) * scale,
                              (uniform() - 0.5) * scale };
        const double d = 1.0 + ((w[0] * w[0] + w[1] * w[1]) + w[2] * w[2]);
        const double C[9] = { 0.0, -w[2], w[1], w[2], 0.0, -w[0], -w[1], w[0], 0.0 };
        double alpha[9];
        partile_alpha(w, alpha);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                const double num = (i == j ? 1.0 : 0.0) + w[i] * w[j] - C[3 * i + j];
                bad += !same_bits(alpha[3 * i + j], num / d);
            }
    }
    assert_int_equal(bad, 0);
}

/* Quotients that are exact, halfway-prone or at the range limits, and the
 * special values, which take the division itself. */
static void test_edges(void **state)
{
    (void)state;
    const double xs[] = { 0.0, -0.0, 1.0, -1.0, 3.0, 0x1p-500, 0x1.0000000000001p-500,
                          0x1.fffffffffffffp499, 0x1p500, 0x1p-1074, 0x1p-1022, DBL_MAX,
                          INFINITY, -INFINITY, NAN, 1.0 + 0x1p-52, 2.0 - 0x1p-52 };
    const double ds[] = { 1.0, 3.0, 7.0, 1.0 + 0x1p-52, 2.0 - 0x1p-52, 0x1p-400,
                          0x1.0000000000001p-400, 0x1.fffffffffffffp399, 0x1p400, 0x1p-1074,
                          DBL_MAX, INFINITY, NAN, -3.0, 10.0, 1e300 };
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++)
        for (size_t j = 0; j < sizeof ds / sizeof ds[0]; j++) {
            const double x = xs[i], d = ds[j], got = partile_div_by(x, d, 1.0 / d), want = x / d;
            if (isnan(want))
                assert_true(isnan(got));
            else if (!same_bits(got, want))
                fail_msg("partile_div_by(%a, %a) = %a, x / d = %a", x, d, got, want);
        }
    /* quotients at or next to small integers k (k·d rounded) across the range */
    rng_state = 11;
    for (int t = 0; t < 100000; t++) {
        const double k = (double)(next_u64() >> 40), d = random_double(-300, 300);
        const double x = k * d;
        assert_true(same_bits(partile_div_by(x, d, 1.0 / d), x / d));
    }
}

/* The same step with the residual's sign flipped must disagree somewhere:
 * the comparisons above can fail. */
static void test_wrong_step_caught(void **state)
{
    (void)state;
    rng_state = 3;
    long bad = 0;
    for (int t = 0; t < 100000; t++) {
        const double x = near_one(), d = near_one(), y = 1.0 / d, q = x * y;
        bad += !same_bits(fma(fma(d, q, -x), y, q), x / d);
    }
    assert_true(bad > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_operands),
        cmocka_unit_test(test_alpha_quotients),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_wrong_step_caught),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
