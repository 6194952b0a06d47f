/* The particle part of `partile check` runs end to end (reference against
 * itself here; a GPU backend against the reference on a device), under the
 * sanitizers in CI. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "tools/check_particles.h"

static void run(const char *backend, int expect_device)
{
    partile_context_t *ctx = NULL;
    int st = partile_context_create(backend, 0, &ctx);
    if (!expect_device && st < 0) {
        skip();
        return;
    }
    assert_int_equal(st, 0);
    partile_particle_check_t r;
    assert_int_equal(partile_check_sort(ctx, 42, stdout, &r), 0);
    assert_int_equal(r.cases, 24);
    assert_int_equal(r.mismatches, 0);
    /* a seed whose FP32 sort case once drew a position that rounds onto
     * the upper bound of a non-periodic grid (an invalid particle, so the
     * check failed on a correct backend) */
    assert_int_equal(partile_check_sort(ctx, 3610118986u, stdout, &r), 0);
    assert_int_equal(r.cases, 24);
    assert_int_equal(r.mismatches, 0);
    assert_int_equal(partile_check_transfer(ctx, 43, stdout, &r), 0);
    assert_int_equal(r.cases, 96); /* 24 transfers: sorted by point and by cell, any order, gather */
    assert_int_equal(r.mismatches, 0);
    assert_int_equal(partile_check_mass(ctx, 44, stdout, &r), 0);
    assert_int_equal(r.cases, 36);
    assert_int_equal(r.mismatches, 0);
    assert_int_equal(partile_check_apply(ctx, 45, stdout, &r), 0);
    assert_int_equal(r.cases, 48); /* 12 grids: by point, by cell, assembled, FP32 */
    assert_int_equal(r.mismatches, 0);
    partile_context_destroy(ctx);
}

static void test_reference(void **state) { (void)state; run("reference", 1); }
static void test_cuda(void **state) { (void)state; run("cuda", 0); }

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_reference), cmocka_unit_test(test_cuda) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
