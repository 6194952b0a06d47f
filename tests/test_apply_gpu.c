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

#ifdef PARTILE_TEST_CUDA_ENTRIES
/* Both matrix-free paths of backends/gpu/apply_gpu.inc (the operations
 * table runs one), called directly on the default stream: each equal to
 * the reference bit for bit, ω per particle and the B field. */
#define PARTILE_GPU_ENTRY(name) partile_cuda_##name
#include "backends/gpu/particles_entry.h"

static void paths(void **state)
{
    (void)state;
    partile_context_t *ctx = open_or_skip("cuda");
    if (!ctx) {
        skip();
        return;
    }
    partile_context_t *ref = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ref), 0);
    uint64_t rng = fresh_seed();
    partile_gpu_workspace ws = { NULL, 0, NULL };
    for (int dim = 1; dim <= 3; dim++)
        for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++)
            for (int kind = 0; kind < 2; kind++)
                for (int bf = 0; bf <= kind; bf++) {
                    const int periodic = (dim + shape + bf) % 2;
                    apply_case c = make_case(ref, dim, dim == 1 ? 11 : 6, periodic, shape, kind,
                                             dim == 3 ? 3000 : 900, 0, &rng);
                    const size_t n = c.n, yb = (size_t)c.points * c.m * 8;
                    partile_mass_params_t p;
                    memset(&p, 0, sizeof p);
                    p.grid = &c.g;
                    p.shape = (partile_shape_t)shape;
                    p.kind = (partile_mass_kind_t)kind;
                    p.sigma = 1.3;
                    p.beta_over_c = 0.6;
                    double *want = malloc(yb), *got = malloc(yb);
                    partile_vectors_t hpos = { PARTILE_DTYPE_FLOAT64, { c.x, c.x + n, c.x + 2 * n } };
                    partile_vectors_t hom = { PARTILE_DTYPE_FLOAT64, { c.w, c.w + n, c.w + 2 * n } };
                    p.bfield = bf ? c.B : NULL;
                    assert_int_equal(partile_mass_apply_matfree(ref, &p, n, &hpos, c.off, c.q,
                                                                bf ? NULL : &hom, c.xv, want, NULL),
                                     0);
                    double *x = stage(ctx, c.x, 3 * n * 8), *w = stage(ctx, c.w, 3 * n * 8);
                    double *q = stage(ctx, c.q, n * 8), *xv = stage(ctx, c.xv, yb);
                    double *B = stage(ctx, c.B, (size_t)c.points * 24), *y = stage(ctx, NULL, yb);
                    int64_t *off = stage(ctx, c.off, (size_t)(c.ncells + 1) * 8);
                    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { x, x + n, x + 2 * n } };
                    partile_vectors_t om = { PARTILE_DTYPE_FLOAT64, { w, w + n, w + 2 * n } };
                    p.bfield = bf ? B : NULL;
                    for (int v = PARTILE_GPU_APPLY_COMPOSED; v <= PARTILE_GPU_APPLY_FUSED; v++) {
                        int64_t bad = -1;
                        assert_int_equal(partile_cuda_mass_apply_matfree(NULL, 16, &ws, &p, n, &pos, off, q,
                                                                         bf ? NULL : &om, xv, y, &bad, v),
                                         0);
                        fetch(ctx, got, y, yb);
                        if (memcmp(got, want, yb) != 0)
                            fail_msg("path %d differs from the reference (dim %d shape %d kind %d bfield %d)",
                                     v, dim, shape, kind, bf);
                    }
                    partile_free(ctx, x), partile_free(ctx, w), partile_free(ctx, q), partile_free(ctx, xv);
                    partile_free(ctx, B), partile_free(ctx, y), partile_free(ctx, off);
                    free(want), free(got);
                    free_case(&c);
                }
    partile_cuda_workspace_free(&ws);
    partile_context_destroy(ref);
    partile_context_destroy(ctx);
}
#else
static void paths(void **state)
{
    (void)state;
    printf("# the CUDA backend is not compiled: no direct calls of its two paths\n");
    gpu_tests_skipped++;
    skip();
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_cuda), cmocka_unit_test(errors_cuda), cmocka_unit_test(paths),
        cmocka_unit_test(all_hip),  cmocka_unit_test(errors_hip),
    };
    GPU_TEST_MAIN(tests);
}
