/* Linked against a reference-only build of the library: the GPU backends
 * are known by name but report "not compiled", never "unknown". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "partile/partile.h"

static void test_gpu_not_compiled(void **state)
{
    (void)state;
    const char *names[] = { "cuda", "hip" };
    for (int i = 0; i < 2; i++) {
        partile_context_t *ctx = (partile_context_t *)(uintptr_t)0x1;
        assert_int_equal(partile_context_create(names[i], 0, &ctx), PARTILE_ERROR_NOT_COMPILED);
        assert_null(ctx);
        assert_non_null(strstr(partile_last_error_detail(), names[i]));
        int n = -1;
        assert_int_equal(partile_backend_shape_count(names[i], &n), PARTILE_ERROR_NOT_COMPILED);
        assert_int_equal(n, -1);
    }
    int found = 0;
    for (int b = 0; b < partile_backend_count(); b++) {
        partile_backend_info_t info;
        assert_int_equal(partile_backend_query(b, &info), 0);
        if (strcmp(info.name, "reference") == 0) {
            assert_int_equal(info.compiled, 1);
            assert_int_equal(info.device_count, 1);
        } else {
            assert_int_equal(info.compiled, 0);
            assert_int_equal(info.device_count, 0);
            found++;
        }
    }
    assert_int_equal(found, 2);
    /* "auto" falls back to the reference */
    partile_context_t *ctx = NULL;
    assert_int_equal(partile_context_create("auto", 0, &ctx), 0);
    assert_string_equal(partile_context_backend(ctx), "reference");
    partile_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_gpu_not_compiled) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
