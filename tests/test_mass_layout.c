/* The mass-matrix tile kernel's fragment logic (backends/gpu/mass_fragments.h)
 * run on the CPU for every lane of each engine — CUDA f64 m16n8k16 and
 * m8n8k4 (32 lanes), HIP f64 16x16x4 (wave64) — against an emulated tile:
 * the lanes' fragments are gathered into A and B with the engine's layout
 * functions (themselves checked against the vendors' documented layouts in
 * test_mfma_layout.c), the tile instruction is a forward FMA chain over k,
 * and the accumulators are scattered back through the kernel's own target
 * function. Every local entry (component, a, b) must be written exactly
 * once and equal the reference's chain over the staged particles bit for
 * bit, with the staging ring wrapping and unused slots poisoned with NaN.
 * A deliberately wrong ring position must be caught. This is the HIP
 * kernel's only check short of AMD hardware (unverified there). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "backends/cuda/mma_layout.h"
#include "backends/hip/mfma_layout.h"

typedef double f64_m16n8k16_in_t;
typedef double f64_m8n8k4_in_t;
typedef double f64_16x16x4_in_t;
#define MASS_IN(x) (x)

/* CUDA: 32 lanes, a ring of 64 slots (mass_device.inc: 2 × warp, + 4) */
#define MASS_RING 64
#define MASS_STRIDE 68
#define MASS_E f64_m16n8k16
#define MASS_MT 16
#include "backends/gpu/mass_fragments.h"
#undef MASS_E
#undef MASS_MT
#define MASS_E f64_m8n8k4
#define MASS_MT 8
#include "backends/gpu/mass_fragments.h"
#undef MASS_E
#undef MASS_MT
#undef MASS_RING
#undef MASS_STRIDE
/* HIP: wave64, a ring of 128 */
#define MASS_RING 128
#define MASS_STRIDE 132
#define MASS_E f64_16x16x4
#define MASS_MT 16
#include "backends/gpu/mass_fragments.h"
#undef MASS_E
#undef MASS_MT

enum { MAX_LANES = 64, MAX_ELEMS = 8, MAX_PTS = 27, MAX_COMPS = 9, MAX_T = 16 };

typedef void (*frag_fn)(int, int, int, int, int, const double *, const double *, const int,
                        const int, double *, double *);
typedef int (*target_fn)(int, int, int, int, const int, const int, int *);
typedef void (*pos_fn)(int lane, int e, int *row, int *col);

typedef struct engine {
    const char *name;
    int mt, nt, kt, lanes, a_n, b_n, c_n, ring, stride;
    frag_fn frag;
    target_fn target;
    pos_fn a_pos, b_pos, c_pos;
} engine;

static const engine engines[] = {
    { "f64 m16n8k16", 16, 8, 16, 32, 8, 4, 4, 64, 68, mass_fragments_f64_m16n8k16,
      mass_c_target_f64_m16n8k16, m16n8_a_pos, m16n8_b_pos, m16n8_c_pos },
    { "f64 m8n8k4", 8, 8, 4, 32, 1, 1, 2, 64, 68, mass_fragments_f64_m8n8k4,
      mass_c_target_f64_m8n8k4, f64_m8n8k4_a_pos, f64_m8n8k4_b_pos, f64_m8n8k4_c_pos },
    { "f64 16x16x4 (wave64)", 16, 16, 4, 64, 1, 1, 4, 128, 132, mass_fragments_f64_16x16x4,
      mass_c_target_f64_16x16x4, f64_16x16x4_a_pos, f64_16x16x4_b_pos, f64_16x16x4_c_pos },
};

static uint64_t rng_state;
static double uniform(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

/* Runs one group of P particles through every tile of the local matrix as
 * the kernel does; returns the number of local entries that differ from the
 * reference chain (missing or doubly written entries fail the test). */
static int run_group(const engine *E, int NPTS, int COMPS, int P, int head0, int slot_shift)
{
    const int ROWS = COMPS * NPTS, RT = (ROWS + E->mt - 1) / E->mt, CT = (NPTS + E->nt - 1) / E->nt;
    double W[MAX_PTS * 132], C[MAX_COMPS * 132];
    double w[128][MAX_PTS], c[128][MAX_COMPS];
    for (int i = 0; i < NPTS * E->stride; i++)
        W[i] = NAN; /* unused slots and padding are poison */
    for (int i = 0; i < COMPS * E->stride; i++)
        C[i] = NAN;
    for (int p = 0; p < P; p++) {
        const int slot = (head0 + p) & (E->ring - 1);
        for (int a = 0; a < NPTS; a++)
            W[a * E->stride + slot] = w[p][a] = uniform();
        for (int k = 0; k < COMPS; k++) /* both signs, exponents over a wide range */
            C[k * E->stride + slot] = c[p][k] = (uniform() - 0.4) * ldexp(1.0, (int)(40 * uniform()) - 20);
    }
    static double local[MAX_COMPS][MAX_PTS * MAX_PTS];
    static int written[MAX_COMPS][MAX_PTS * MAX_PTS];
    memset(written, 0, sizeof written);
    for (int tile = 0; tile < RT * CT; tile++) {
        const int row0 = (tile / CT) * E->mt, col0 = (tile % CT) * E->nt;
        double D[MAX_T][MAX_T];
        for (int r = 0; r < E->mt; r++)
            for (int col = 0; col < E->nt; col++)
                D[r][col] = 0.0;
        for (int done = 0, head = head0; done < P; done += E->kt, head += E->kt) {
            const int valid = P - done < E->kt ? P - done : E->kt;
            double A[MAX_T][MAX_T], B[MAX_T][MAX_T];
            int setA[MAX_T][MAX_T] = { { 0 } }, setB[MAX_T][MAX_T] = { { 0 } };
            for (int lane = 0; lane < E->lanes; lane++) {
                double a[MAX_ELEMS], b[MAX_ELEMS];
                E->frag(lane, row0, col0, (head + slot_shift) & (E->ring - 1), valid, W, C, NPTS,
                        COMPS, a, b);
                for (int e = 0; e < E->a_n; e++) {
                    int r, k;
                    E->a_pos(lane, e, &r, &k);
                    A[r][k] = a[e];
                    setA[r][k]++;
                }
                for (int e = 0; e < E->b_n; e++) {
                    int k, col;
                    E->b_pos(lane, e, &k, &col);
                    B[k][col] = b[e];
                    setB[k][col]++;
                }
            }
            for (int k = 0; k < E->kt; k++) {
                for (int r = 0; r < E->mt; r++)
                    assert_int_equal(setA[r][k], 1);
                for (int col = 0; col < E->nt; col++)
                    assert_int_equal(setB[k][col], 1);
            }
            for (int r = 0; r < E->mt; r++) /* the tile: a forward FMA chain over k */
                for (int col = 0; col < E->nt; col++)
                    for (int k = 0; k < E->kt; k++)
                        D[r][col] = fma(A[r][k], B[k][col], D[r][col]);
        }
        for (int lane = 0; lane < E->lanes; lane++)
            for (int e = 0; e < E->c_n; e++) {
                int r, col, comp;
                E->c_pos(lane, e, &r, &col);
                const int pair = E->target(lane, e, row0, col0, NPTS, COMPS, &comp);
                if (pair < 0)
                    continue;
                assert_true(comp >= 0 && comp < COMPS && pair < NPTS * NPTS);
                local[comp][pair] = D[r][col];
                written[comp][pair]++;
            }
    }
    int differ = 0;
    for (int k = 0; k < COMPS; k++)
        for (int a = 0; a < NPTS; a++)
            for (int b = 0; b < NPTS; b++) {
                assert_int_equal(written[k][a * NPTS + b], 1);
                double want = 0.0;
                for (int p = 0; p < P; p++)
                    want = fma(c[p][k] * w[p][a], w[p][b], want);
                differ += memcmp(&want, &local[k][a * NPTS + b], sizeof want) != 0;
            }
    return differ;
}

static const int shapes[][2] = { { 2, 1 }, { 4, 1 }, { 8, 1 }, { 3, 1 }, { 9, 1 }, { 27, 1 },
                                  { 2, 9 }, { 4, 9 }, { 8, 9 }, { 3, 9 }, { 9, 9 }, { 27, 9 } };

static void test_engines_bitwise(void **state)
{
    (void)state;
    rng_state = 20261130;
    for (size_t ei = 0; ei < sizeof engines / sizeof engines[0]; ei++) {
        const engine *E = &engines[ei];
        const int counts[] = { 1, E->kt - 1, E->kt, 2 * E->kt + 3, E->ring - E->kt };
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
                const int P = counts[ci] < 1 ? 1 : counts[ci];
                /* the group wraps around the ring between two k-steps, which
                 * start at multiples of kt as in the kernel (MASS_STEP_SLOT) */
                const int head0 = E->ring - E->kt;
                const int differ = run_group(E, shapes[si][0], shapes[si][1], P, head0, 0);
                if (differ)
                    fail_msg("%s, %d points × %d components, %d particles: %d local entries "
                             "differ from the reference chain", E->name, shapes[si][0],
                             shapes[si][1], P, differ);
            }
    }
}

/* Feeding the tile from the wrong ring slots must show. */
static void test_wrong_slot_caught(void **state)
{
    (void)state;
    rng_state = 7;
    for (size_t ei = 0; ei < sizeof engines / sizeof engines[0]; ei++)
        assert_true(run_group(&engines[ei], 8, 9, 2 * engines[ei].kt + 3, 0, 1) > 0);
}

/* Every shape's b_from_a names, for each lane and B element, the lane's A
 * element at the transposed position (row = B's column, column = B's k):
 * the tile kernel takes those B weights from its A weights. */
#define B_FROM_A_FN(S)                                                     \
    static int S##_from(int e) { return S##_b_from_a(e); }
B_FROM_A_FN(f64_m8n8k4)
B_FROM_A_FN(f64_m16n8k4)
B_FROM_A_FN(f64_m16n8k8)
B_FROM_A_FN(f64_m16n8k16)
B_FROM_A_FN(tf32_m16n8k8)
B_FROM_A_FN(f64_16x16x4)
B_FROM_A_FN(f32_16x16x4)
B_FROM_A_FN(xf32_16x16x8)
B_FROM_A_FN(f16_16x16x16)
B_FROM_A_FN(bf16_16x16x16)

static void test_b_from_a_transposes(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int lanes, a_n, b_n;
        pos_fn a_pos, b_pos;
        int (*from)(int);
    } shapes_ab[] = {
        { "f64 m8n8k4", 32, 1, 1, f64_m8n8k4_a_pos, f64_m8n8k4_b_pos, f64_m8n8k4_from },
        { "f64 m16n8k4", 32, 2, 1, m16n8_a_pos, m16n8_b_pos, f64_m16n8k4_from },
        { "f64 m16n8k8", 32, 4, 2, m16n8_a_pos, m16n8_b_pos, f64_m16n8k8_from },
        { "f64 m16n8k16", 32, 8, 4, m16n8_a_pos, m16n8_b_pos, f64_m16n8k16_from },
        { "tf32 m16n8k8", 32, 4, 2, m16n8_a_pos, m16n8_b_pos, tf32_m16n8k8_from },
        { "f64 16x16x4", 64, 1, 1, f64_16x16x4_a_pos, f64_16x16x4_b_pos, f64_16x16x4_from },
        { "f32 16x16x4", 64, 1, 1, f32_16x16x4_a_pos, f32_16x16x4_b_pos, f32_16x16x4_from },
        { "xf32 16x16x8", 64, 2, 2, xf32_16x16x8_a_pos, xf32_16x16x8_b_pos, xf32_16x16x8_from },
        { "f16 16x16x16", 64, 4, 4, f16_16x16x16_a_pos, f16_16x16x16_b_pos, f16_16x16x16_from },
        { "bf16 16x16x16", 64, 4, 4, bf16_16x16x16_a_pos, bf16_16x16x16_b_pos,
          bf16_16x16x16_from },
    };
    for (size_t si = 0; si < sizeof shapes_ab / sizeof shapes_ab[0]; si++)
        for (int lane = 0; lane < shapes_ab[si].lanes; lane++)
            for (int e = 0; e < shapes_ab[si].b_n; e++) {
                int k, col, r, ka;
                const int ea = shapes_ab[si].from(e);
                assert_true(ea >= 0 && ea < shapes_ab[si].a_n);
                shapes_ab[si].b_pos(lane, e, &k, &col);
                shapes_ab[si].a_pos(lane, ea, &r, &ka);
                if (r != col || ka != k)
                    fail_msg("%s lane %d: B element %d at (%d, %d), A element %d at (%d, %d)",
                             shapes_ab[si].name, lane, e, k, col, ea, r, ka);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engines_bitwise),
        cmocka_unit_test(test_wrong_slot_caught),
        cmocka_unit_test(test_b_from_a_transposes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
