/* Binning, sorting, re-sorting and permuting on the GPU backends: every
 * result checked as a stable sort and against the reference bit for bit.
 * Skips (cmocka skip; exit 77 if everything skipped) without a device. */
#include "tests/sort_scenarios.h"
#include "tests/gpu_test.h"

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
    GPU_TEST_MAIN(tests);
}
