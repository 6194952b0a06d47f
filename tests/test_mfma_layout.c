/* The tile engines' fragment layouts, checked on the CPU against emulations
 * of the vendors' documented register layouts, written here independently
 * of the engine headers and in a different form:
 *
 *   HIP (backends/hip/mfma_layout.h): CDNA single-block 16x16xK MFMA, wave64,
 *   as AMD's ISA guides and matrix instruction calculator give it, as maps
 *   from a matrix element to (lane, slot), with kpl = K/4 values per lane:
 *     A[i][k]: lane = i + 16·(k / kpl), slot = k mod kpl
 *     B[k][j]: lane = j + 16·(k / kpl), slot = k mod kpl
 *     D[i][j]: lane = j + 16·(i / 4),   slot = i mod 4
 *
 *   CUDA (backends/cuda/mma_layout.h): the PTX ISA's mma.sync fragment
 *   tables, one row per register: row = rg·g + rt·t + r0, col = cg·g + ct·t
 *   + c0 with g = lane >> 2 ("groupID"), t = lane % 4 ("threadID_in_group").
 *
 * For each shape: random A, B, C are put into a register file with the
 * ENGINE's index functions; the instruction is emulated on that register
 * file with the DOCUMENTED layout (gather, forward fma chain over k from C,
 * scatter D); D is read back with the engine's c_pos and compared bit for
 * bit with a direct fma chain. Each engine index function must also be a
 * bijection between (lane, e) and the matrix's elements. Deliberately wrong
 * index functions must be reported. */
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

enum { MAX_DIM = 16, MAX_LANES = 64, MAX_SLOTS = 8 };
enum { OP_A, OP_B, OP_C };

typedef void (*pos_fn)(int lane, int e, int *row, int *col);

/* One row of a PTX fragment table. */
typedef struct ptx_entry {
    int rg, rt, r0, cg, ct, c0;
} ptx_entry;

typedef struct ptx_table {
    int a_n, b_n, c_n;
    ptx_entry a[MAX_SLOTS], b[MAX_SLOTS], c[MAX_SLOTS];
} ptx_table;

typedef struct layout_case {
    const char *name;
    int m, n, k, lanes;
    int a_n, b_n, c_n;
    pos_fn a_pos, b_pos, c_pos;   /* the engine's */
    const ptx_table *ptx;         /* NULL: the CDNA MFMA emulation */
} layout_case;

/* ---- The documented layouts (emulation side) ---------------------------- */

/* PTX ISA, mma.sync fragments (row, col as functions of g, t). */
#define G_T(rg, rt, r0, cg, ct, c0) { rg, rt, r0, cg, ct, c0 }
#define PTX_C_M16N8                                                             \
    { G_T(1, 0, 0, 0, 2, 0), G_T(1, 0, 0, 0, 2, 1), G_T(1, 0, 8, 0, 2, 0),      \
      G_T(1, 0, 8, 0, 2, 1) }

static const ptx_table ptx_f64_m8n8k4 = {
    1, 1, 2,
    { G_T(1, 0, 0, 0, 1, 0) },                         /* a0: (g, t) */
    { G_T(0, 1, 0, 1, 0, 0) },                         /* b0: (t, g) */
    { G_T(1, 0, 0, 0, 2, 0), G_T(1, 0, 0, 0, 2, 1) },  /* c0, c1: (g, 2t + i) */
};

static const ptx_table ptx_f64_m16n8k4 = {
    2, 1, 4,
    { G_T(1, 0, 0, 0, 1, 0), G_T(1, 0, 8, 0, 1, 0) }, /* a0 (g, t), a1 (g+8, t) */
    { G_T(0, 1, 0, 1, 0, 0) },                        /* b0 (t, g) */
    PTX_C_M16N8,
};

/* f64 m16n8k8 and tf32 m16n8k8 share it. */
static const ptx_table ptx_m16n8k8 = {
    4, 2, 4,
    { G_T(1, 0, 0, 0, 1, 0), G_T(1, 0, 8, 0, 1, 0), G_T(1, 0, 0, 0, 1, 4),
      G_T(1, 0, 8, 0, 1, 4) },
    { G_T(0, 1, 0, 1, 0, 0), G_T(0, 1, 4, 1, 0, 0) },
    PTX_C_M16N8,
};

static const ptx_table ptx_f64_m16n8k16 = {
    8, 4, 4,
    { G_T(1, 0, 0, 0, 1, 0), G_T(1, 0, 8, 0, 1, 0), G_T(1, 0, 0, 0, 1, 4),
      G_T(1, 0, 8, 0, 1, 4), G_T(1, 0, 0, 0, 1, 8), G_T(1, 0, 8, 0, 1, 8),
      G_T(1, 0, 0, 0, 1, 12), G_T(1, 0, 8, 0, 1, 12) },
    { G_T(0, 1, 0, 1, 0, 0), G_T(0, 1, 4, 1, 0, 0), G_T(0, 1, 8, 1, 0, 0),
      G_T(0, 1, 12, 1, 0, 0) },
    PTX_C_M16N8,
};

/* .f16 / .bf16 m16n8k16: two 16-bit values per register. */
static const ptx_table ptx_half_m16n8k16 = {
    8, 4, 4,
    { G_T(1, 0, 0, 0, 2, 0), G_T(1, 0, 0, 0, 2, 1),     /* a0, a1: (g, 2t + i) */
      G_T(1, 0, 8, 0, 2, 0), G_T(1, 0, 8, 0, 2, 1),     /* a2, a3: (g+8, 2t + i) */
      G_T(1, 0, 0, 0, 2, 8), G_T(1, 0, 0, 0, 2, 9),     /* a4, a5: (g, 2t+8 + i) */
      G_T(1, 0, 8, 0, 2, 8), G_T(1, 0, 8, 0, 2, 9) },   /* a6, a7: (g+8, 2t+8 + i) */
    { G_T(0, 2, 0, 1, 0, 0), G_T(0, 2, 1, 1, 0, 0),     /* b0, b1: (2t + i, g) */
      G_T(0, 2, 8, 1, 0, 0), G_T(0, 2, 9, 1, 0, 0) },   /* b2, b3: (2t+8 + i, g) */
    PTX_C_M16N8,
};

/* Where the documented layout keeps element (row, col) of operand op.
 * Returns 0 if it finds none (or more than one, for the tables). */
static int doc_locate(const layout_case *lc, int op, int row, int col, int *lane, int *slot)
{
    if (!lc->ptx) {
        const int kpl = lc->k / 4;
        switch (op) {
        case OP_A: *lane = row + 16 * (col / kpl); *slot = col % kpl; return 1;
        case OP_B: *lane = col + 16 * (row / kpl); *slot = row % kpl; return 1;
        default: *lane = col + 16 * (row / 4); *slot = row % 4; return 1;
        }
    }
    const ptx_entry *tab = op == OP_A ? lc->ptx->a : op == OP_B ? lc->ptx->b : lc->ptx->c;
    const int n = op == OP_A ? lc->ptx->a_n : op == OP_B ? lc->ptx->b_n : lc->ptx->c_n;
    int found = 0;
    for (int l = 0; l < 32; l++) {
        const int g = l >> 2, t = l & 3;
        for (int s = 0; s < n; s++) {
            const ptx_entry *p = &tab[s];
            if (p->rg * g + p->rt * t + p->r0 == row && p->cg * g + p->ct * t + p->c0 == col) {
                *lane = l;
                *slot = s;
                found++;
            }
        }
    }
    return found == 1;
}

/* ---- The check ------------------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double random_value(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    const double u = (double)(rng_state >> 11) / 9007199254740992.0; /* [0, 1) */
    const int ex = (int)((rng_state >> 3) % 21) - 10;
    return ldexp(u - 0.5, ex);
}

/* Number of (lane, e) that an index function maps outside the matrix or
 * onto an element already covered, plus the elements left uncovered. */
static int bijection_errors(pos_fn pos, int lanes, int per_lane, int rows, int cols)
{
    int count[MAX_DIM][MAX_DIM] = { { 0 } };
    int errors = 0;
    for (int l = 0; l < lanes; l++)
        for (int e = 0; e < per_lane; e++) {
            int r, c;
            pos(l, e, &r, &c);
            if (r < 0 || r >= rows || c < 0 || c >= cols)
                errors++;
            else if (count[r][c]++)
                errors++;
        }
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            errors += count[r][c] == 0;
    return errors;
}

/* Engine side: matrix → register file with the engine's index function. */
static int distribute(pos_fn pos, int lanes, int per_lane, int rows, int cols,
                      double mat[MAX_DIM][MAX_DIM], double reg[MAX_LANES][MAX_SLOTS])
{
    int errors = 0;
    for (int l = 0; l < MAX_LANES; l++)
        for (int s = 0; s < MAX_SLOTS; s++)
            reg[l][s] = NAN;
    for (int l = 0; l < lanes; l++)
        for (int e = 0; e < per_lane; e++) {
            int r, c;
            pos(l, e, &r, &c);
            if (r < 0 || r >= rows || c < 0 || c >= cols)
                errors++;
            else
                reg[l][e] = mat[r][c];
        }
    return errors;
}

/* Emulation side: register file → matrix with the documented layout. */
static int gather(const layout_case *lc, int op, int rows, int cols,
                  double reg[MAX_LANES][MAX_SLOTS], double mat[MAX_DIM][MAX_DIM])
{
    int errors = 0;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            int l, s;
            if (!doc_locate(lc, op, r, c, &l, &s) || l < 0 || l >= lc->lanes || s < 0 ||
                s >= MAX_SLOTS) {
                errors++;
                mat[r][c] = NAN;
            } else {
                mat[r][c] = reg[l][s];
            }
        }
    return errors;
}

/* Runs one random trial of lc; returns the number of wrong D entries plus
 * the layout errors met on the way (0: the engine matches the documents). */
static int layout_mismatches(const layout_case *lc, int verbose)
{
    double A[MAX_DIM][MAX_DIM], B[MAX_DIM][MAX_DIM], C[MAX_DIM][MAX_DIM];
    double rA[MAX_LANES][MAX_SLOTS], rB[MAX_LANES][MAX_SLOTS], rC[MAX_LANES][MAX_SLOTS];
    double eA[MAX_DIM][MAX_DIM], eB[MAX_DIM][MAX_DIM], eC[MAX_DIM][MAX_DIM];
    double rD[MAX_LANES][MAX_SLOTS], D[MAX_DIM][MAX_DIM];
    int errors = 0;

    for (int r = 0; r < MAX_DIM; r++)
        for (int c = 0; c < MAX_DIM; c++) {
            A[r][c] = random_value();
            B[r][c] = random_value();
            C[r][c] = random_value();
        }

    /* The engine loads its registers. */
    errors += distribute(lc->a_pos, lc->lanes, lc->a_n, lc->m, lc->k, A, rA);
    errors += distribute(lc->b_pos, lc->lanes, lc->b_n, lc->k, lc->n, B, rB);
    errors += distribute(lc->c_pos, lc->lanes, lc->c_n, lc->m, lc->n, C, rC);

    /* The instruction, as documented: gather, forward fma chain, scatter. */
    errors += gather(lc, OP_A, lc->m, lc->k, rA, eA);
    errors += gather(lc, OP_B, lc->k, lc->n, rB, eB);
    errors += gather(lc, OP_C, lc->m, lc->n, rC, eC);
    for (int l = 0; l < MAX_LANES; l++)
        for (int s = 0; s < MAX_SLOTS; s++)
            rD[l][s] = NAN;
    for (int i = 0; i < lc->m; i++)
        for (int j = 0; j < lc->n; j++) {
            double d = eC[i][j];
            for (int kk = 0; kk < lc->k; kk++)
                d = fma(eA[i][kk], eB[kk][j], d);
            int l, s;
            if (doc_locate(lc, OP_C, i, j, &l, &s))
                rD[l][s] = d;
        }

    /* The engine reads D back. */
    for (int r = 0; r < MAX_DIM; r++)
        for (int c = 0; c < MAX_DIM; c++)
            D[r][c] = NAN;
    for (int l = 0; l < lc->lanes; l++)
        for (int e = 0; e < lc->c_n; e++) {
            int r, c;
            lc->c_pos(l, e, &r, &c);
            if (r >= 0 && r < lc->m && c >= 0 && c < lc->n)
                D[r][c] = rD[l][e];
        }

    /* Direct reference, bit for bit. */
    for (int i = 0; i < lc->m; i++)
        for (int j = 0; j < lc->n; j++) {
            double ref = C[i][j];
            for (int kk = 0; kk < lc->k; kk++)
                ref = fma(A[i][kk], B[kk][j], ref);
            if (memcmp(&ref, &D[i][j], sizeof ref) != 0) {
                if (verbose && errors < 4)
                    printf("  %s: D[%d][%d] = %a, expected %a\n", lc->name, i, j, D[i][j], ref);
                errors++;
            }
        }
    return errors;
}

/* ---- The cases ------------------------------------------------------------ */

#define HIP_CASE(S, K)                                                          \
    { #S, 16, 16, K, 64, S##_A_N, S##_B_N, S##_C_N, S##_a_pos, S##_b_pos, S##_c_pos, NULL }
#define CUDA_CASE(S, M, N, K, TABLE)                                            \
    { #S, M, N, K, 32, S##_A_N, S##_B_N, S##_C_N, S##_a_pos, S##_b_pos, S##_c_pos, &TABLE }

static const layout_case cases[] = {
    HIP_CASE(f64_16x16x4, 4),
    HIP_CASE(f32_16x16x4, 4),
    HIP_CASE(xf32_16x16x8, 8),
    HIP_CASE(f16_16x16x16, 16),
    HIP_CASE(bf16_16x16x16, 16),
    CUDA_CASE(f64_m8n8k4, 8, 8, 4, ptx_f64_m8n8k4),
    CUDA_CASE(f64_m16n8k4, 16, 8, 4, ptx_f64_m16n8k4),
    CUDA_CASE(f64_m16n8k8, 16, 8, 8, ptx_m16n8k8),
    CUDA_CASE(f64_m16n8k16, 16, 8, 16, ptx_f64_m16n8k16),
    CUDA_CASE(tf32_m16n8k8, 16, 8, 8, ptx_m16n8k8),
    CUDA_CASE(f16_m16n8k16, 16, 8, 16, ptx_half_m16n8k16),
    CUDA_CASE(bf16_m16n8k16, 16, 8, 16, ptx_half_m16n8k16),
};
enum { CASE_COUNT = (int)(sizeof cases / sizeof cases[0]) };

static void test_bijections(void **state)
{
    (void)state;
    for (int i = 0; i < CASE_COUNT; i++) {
        const layout_case *lc = &cases[i];
        /* Per-lane counts agree with the matrix sizes. */
        assert_int_equal(lc->lanes * lc->a_n, lc->m * lc->k);
        assert_int_equal(lc->lanes * lc->b_n, lc->k * lc->n);
        assert_int_equal(lc->lanes * lc->c_n, lc->m * lc->n);
        assert_true(lc->a_n <= MAX_SLOTS && lc->b_n <= MAX_SLOTS && lc->c_n <= MAX_SLOTS);
        int ea = bijection_errors(lc->a_pos, lc->lanes, lc->a_n, lc->m, lc->k);
        int eb = bijection_errors(lc->b_pos, lc->lanes, lc->b_n, lc->k, lc->n);
        int ec = bijection_errors(lc->c_pos, lc->lanes, lc->c_n, lc->m, lc->n);
        if (ea || eb || ec)
            printf("  %s: A %d, B %d, C %d bijection errors\n", lc->name, ea, eb, ec);
        assert_int_equal(ea + eb + ec, 0);
    }
}

/* The emulation's own maps must be bijections too, or it would prove nothing. */
static void test_documented_layouts_are_bijections(void **state)
{
    (void)state;
    for (int i = 0; i < CASE_COUNT; i++) {
        const layout_case *lc = &cases[i];
        const int rows[3] = { lc->m, lc->k, lc->m }, cols[3] = { lc->k, lc->n, lc->n };
        const int per_lane[3] = { lc->a_n, lc->b_n, lc->c_n };
        for (int op = OP_A; op <= OP_C; op++) {
            int seen[MAX_LANES][MAX_SLOTS] = { { 0 } };
            for (int r = 0; r < rows[op]; r++)
                for (int c = 0; c < cols[op]; c++) {
                    int l = -1, s = -1;
                    assert_true(doc_locate(lc, op, r, c, &l, &s));
                    assert_true(l >= 0 && l < lc->lanes && s >= 0 && s < per_lane[op]);
                    assert_int_equal(seen[l][s]++, 0);
                }
        }
    }
}

static void test_engine_matches_documented_layout(void **state)
{
    const layout_case *lc = (const layout_case *)*state;
    for (int trial = 0; trial < 8; trial++)
        assert_int_equal(layout_mismatches(lc, 1), 0);
}

/* Deliberately wrong index functions, each of a kind a slip could produce. */
static void bad_hip_a_swapped(int lane, int e, int *row, int *col)
{ f64_16x16x4_a_pos(lane, e, col, row); } /* row and column exchanged */
static void bad_hip_f16_a_q_e(int lane, int e, int *row, int *col)
{ *row = lane & 15; *col = 4 * e + (lane >> 4); } /* a bijection, wrong order */
static void bad_hip_c_transposed(int lane, int e, int *row, int *col)
{ *row = lane & 15; *col = 4 * (lane >> 4) + e; } /* D transposed */
static void bad_cuda_c_e_bits(int lane, int e, int *row, int *col)
{ *row = (lane >> 2) + 8 * (e & 1); *col = 2 * (lane & 3) + (e >> 1); }
static void bad_cuda_half_b(int lane, int e, int *row, int *col)
{ *row = (lane & 3) + 4 * e; *col = lane >> 2; } /* the f64 B layout on f16 */

static void test_wrong_layouts_are_caught(void **state)
{
    (void)state;
    layout_case lc;

    lc = cases[0]; /* f64_16x16x4 */
    lc.a_pos = bad_hip_a_swapped;
    assert_true(bijection_errors(lc.a_pos, lc.lanes, lc.a_n, lc.m, lc.k) > 0);
    assert_true(layout_mismatches(&lc, 0) > 0);

    lc = cases[3]; /* f16_16x16x16 */
    lc.a_pos = bad_hip_f16_a_q_e;
    assert_int_equal(bijection_errors(lc.a_pos, lc.lanes, lc.a_n, lc.m, lc.k), 0);
    assert_true(layout_mismatches(&lc, 0) > 0);

    lc = cases[4]; /* bf16_16x16x16 */
    lc.c_pos = bad_hip_c_transposed;
    assert_int_equal(bijection_errors(lc.c_pos, lc.lanes, lc.c_n, lc.m, lc.n), 0);
    assert_true(layout_mismatches(&lc, 0) > 0);

    lc = cases[7]; /* f64_m16n8k8 */
    lc.c_pos = bad_cuda_c_e_bits;
    assert_true(layout_mismatches(&lc, 0) > 0);

    lc = cases[10]; /* f16_m16n8k16 */
    lc.b_pos = bad_cuda_half_b;
    assert_int_equal(bijection_errors(lc.b_pos, lc.lanes, lc.b_n, lc.k, lc.n), 0);
    assert_true(layout_mismatches(&lc, 0) > 0);
}

int main(void)
{
    struct CMUnitTest tests[CASE_COUNT + 3] = {
        cmocka_unit_test(test_bijections),
        cmocka_unit_test(test_documented_layouts_are_bijections),
    };
    for (int i = 0; i < CASE_COUNT; i++) /* one test per shape, named after it */
        tests[2 + i] = (struct CMUnitTest){ .name = cases[i].name,
                                            .test_func = test_engine_matches_documented_layout,
                                            .initial_state = (void *)&cases[i] };
    tests[2 + CASE_COUNT] =
        (struct CMUnitTest)cmocka_unit_test(test_wrong_layouts_are_caught);
    return cmocka_run_group_tests_name("mfma_layout", tests, NULL, NULL);
}
