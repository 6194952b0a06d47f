/* y = M x on the GPU backends, on fresh random inputs: FP64 matrix-free
 * (ω per particle and the B-field path) and assembled bit for bit against
 * the reference, FP32 matrix-free bit for bit against the FP32 reference,
 * matrix-free against assembled below 1e-14, for CIC/TSC, scalar/tensor,
 * d = 1, 2, 3, periodic or not, FP64 and FP32 positions; bad input gives
 * the reference's status and particle and leaves y untouched. Skips (exit
 * 77 if all) without a device. */
#include "tests/apply_scenarios.h"
#include "tests/gpu_test.h"

GPU_TEST(all, scenario_apply_all(ctx, fresh_seed()))
GPU_TEST(errors, scenario_apply_errors(ctx, fresh_seed()))

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_cuda), cmocka_unit_test(errors_cuda),
        cmocka_unit_test(all_hip),  cmocka_unit_test(errors_hip),
    };
    GPU_TEST_MAIN(tests);
}
