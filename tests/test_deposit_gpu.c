/* Deposit and gather on the GPU backends: the sorted deposit and every
 * gather bit for bit against the reference, the unsorted (atomic) deposit
 * within rounding, the errors. Skips (exit 77 if all) without a device. */
#include "tests/deposit_scenarios.h"
#include "tests/gpu_test.h"

GPU_TEST(all, scenario_deposit_all(ctx, fresh_seed()))
GPU_TEST(polynomials, scenario_gather_polynomials(ctx, fresh_seed()))
GPU_TEST(errors, scenario_deposit_errors(ctx, fresh_seed()))
GPU_TEST(orders, scenario_deposit_orders(ctx))
GPU_TEST(sorted_errors, scenario_deposit_sorted_errors(ctx, fresh_seed()))

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_cuda), cmocka_unit_test(polynomials_cuda), cmocka_unit_test(errors_cuda),
        cmocka_unit_test(orders_cuda), cmocka_unit_test(sorted_errors_cuda),
        cmocka_unit_test(all_hip),  cmocka_unit_test(polynomials_hip),  cmocka_unit_test(errors_hip),
        cmocka_unit_test(orders_hip),  cmocka_unit_test(sorted_errors_hip),
    };
    GPU_TEST_MAIN(tests);
}
