/* Mass-matrix assembly on the reference backend: against a straightforward
 * triple loop, exact block symmetry of the export, partition of unity,
 * species accumulation, α solving v − v × ω = u, and bad input. */
#include "tests/deposit_scenarios.h"
#include "common/mass_math.h"

typedef struct mass_case {
    int dim, periodic, shape, kind;
    size_t n;
    double ppc_hint;
} mass_case;

/* Sorted particles on the reference: positions (SoA), q, ω, cell list. */
typedef struct particles {
    partile_grid_t g;
    size_t n;
    double *x, *q, *w;
    int64_t *off;
} particles;

static particles make_particles(partile_context_t *ref, int dim, int periodic, int64_t side,
                                size_t n, uint64_t *rng)
{
    particles P;
    P.g = su_grid(dim, side, side - 1 > 4 ? side - 1 : side, side, periodic);
    P.n = n;
    int64_t ncells;
    partile_grid_cell_count(&P.g, &ncells);
    double *x = su_positions(&P.g, n, rng);
    P.x = malloc(3 * (n ? n : 1) * 8);
    P.q = malloc((n ? n : 1) * 8);
    P.w = malloc(3 * (n ? n : 1) * 8);
    P.off = malloc((size_t)(ncells + 1) * 8);
    int64_t *perm = malloc((n ? n : 1) * 8);
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { x, x + n, x + 2 * n } };
    assert_int_equal(partile_sort(ref, &P.g, n, &pos, P.off, perm, NULL, NULL), 0);
    for (int a = 0; a < 3; a++)
        for (size_t i = 0; i < n; i++)
            P.x[a * n + i] = a < dim ? x[a * n + perm[i]] : 0.0;
    for (size_t i = 0; i < n; i++) {
        P.q[i] = 0.5 + su_uniform(rng);
        for (int a = 0; a < 3; a++)
            P.w[a * n + i] = 4 * su_uniform(rng) - 2;
    }
    free(x);
    free(perm);
    return P;
}

static void free_particles(particles *P) { free(P->x), free(P->q), free(P->w), free(P->off); }

static int assemble(partile_context_t *ctx, const particles *P, int shape, int kind, double sigma,
                    int accumulate, double *storage)
{
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { P->x, P->x + P->n, P->x + 2 * P->n } };
    partile_vectors_t om = { PARTILE_DTYPE_FLOAT64, { P->w, P->w + P->n, P->w + 2 * P->n } };
    partile_mass_params_t p = { &P->g, (partile_shape_t)shape, (partile_mass_kind_t)kind, sigma,
                                accumulate, NULL, 0.0, PARTILE_MASS_BITWISE, PARTILE_MASS_TILES, PARTILE_MASS_FP64, PARTILE_ORDER_BY_POINT };
    return partile_mass_assemble(ctx, &p, P->n, &pos, P->off, P->q, &om, storage, NULL);
}

static void check_case(partile_context_t *ctx, int dim, int periodic, int shape, int kind,
                       int64_t side, size_t n, uint64_t *rng)
{
    particles P = make_particles(ctx, dim, periodic, side, n, rng);
    partile_mass_layout_t L;
    assert_int_equal(partile_mass_layout(&P.g, (partile_shape_t)shape, (partile_mass_kind_t)kind, &L), 0);
    const int C = L.components, B = kind ? 3 : 1;
    const double sigma = 0.75;
    double *S = malloc(L.entries * 8);
    assert_int_equal(assemble(ctx, &P, shape, kind, sigma, 0, S), 0);
    int64_t nnz;
    assert_int_equal(partile_mass_export_count(&P.g, (partile_shape_t)shape, &nnz), 0);
    int64_t *indptr = malloc((size_t)(L.points + 1) * 8), *indices = malloc((size_t)nnz * 8);
    double *data = malloc((size_t)nnz * C * 8);
    assert_int_equal(partile_mass_export(&P.g, (partile_shape_t)shape, (partile_mass_kind_t)kind, S,
                                         indptr, indices, data), 0);
    const int64_t Pn = L.points, D = Pn * B;
    double *dense = calloc((size_t)(D * D), 8), *want = calloc((size_t)(D * D), 8);
    for (int64_t r = 0; r < Pn; r++) {
        assert_true(indptr[r + 1] >= indptr[r]);
        for (int64_t k = indptr[r]; k < indptr[r + 1]; k++) {
            if (k > indptr[r])
                assert_true(indices[k] > indices[k - 1]); /* sorted, no duplicates */
            for (int i = 0; i < B; i++)
                for (int j = 0; j < B; j++)
                    dense[(r * B + i) * D + indices[k] * B + j] = data[k * C + i * B + j];
        }
    }
    /* the triple loop, with the textbook kernels of deposit_scenarios.h */
    int64_t pts[3], total;
    partile_field_shape(&P.g, PARTILE_CENTERING_NODE, pts, &total);
    double *Wg = malloc((size_t)Pn * 8);
    double scale = 0;
    for (size_t p = 0; p < n; p++) {
        for (int64_t gi = 0; gi < Pn; gi++) {
            int64_t idx[3] = { gi % pts[0], gi / pts[0] % pts[1], gi / (pts[0] * pts[1]) };
            Wg[gi] = direct_w(&P.g, shape, PARTILE_CENTERING_NODE, P.x, n, p, 0.0, idx);
        }
        double w[3] = { P.w[p], P.w[n + p], P.w[2 * n + p] }, al[9] = { 1 };
        if (kind)
            partile_alpha(w, al);
        for (int64_t a = 0; a < Pn; a++) {
            if (Wg[a] == 0)
                continue;
            for (int64_t b = 0; b < Pn; b++)
                for (int i = 0; i < B; i++)
                    for (int j = 0; j < B; j++)
                        want[(a * B + i) * D + b * B + j] += sigma * P.q[p] * Wg[a] * Wg[b] * al[i * B + j];
        }
        scale += sigma * P.q[p] * 3;
    }
    for (int64_t e = 0; e < D * D; e++)
        if (!(fabs(dense[e] - want[e]) <= 1e-13 * (scale + 1)))
            fail_msg("M[%lld][%lld] = %.17g, triple loop %.17g (dim %d per %d shape %d kind %d)",
                     (long long)(e / D), (long long)(e % D), dense[e], want[e], dim, periodic, shape, kind);
    /* block symmetry of the export is exact: M_{g'g} = M_{gg'} per component */
    for (int64_t a = 0; a < Pn; a++)
        for (int64_t b = 0; b < Pn; b++)
            for (int i = 0; i < B; i++)
                for (int j = 0; j < B; j++)
                    assert_true(dense[(a * B + i) * D + b * B + j] == dense[(b * B + i) * D + a * B + j]);
    /* partition of unity (scalar): row sums are the deposit of σ q */
    if (!kind) {
        double *rows = calloc((size_t)Pn, 8);
        for (size_t p = 0; p < n; p++)
            for (int64_t gi = 0; gi < Pn; gi++) {
                int64_t idx[3] = { gi % pts[0], gi / pts[0] % pts[1], gi / (pts[0] * pts[1]) };
                rows[gi] += sigma * P.q[p] * direct_w(&P.g, shape, PARTILE_CENTERING_NODE, P.x, n, p, 0.0, idx);
            }
        for (int64_t a = 0; a < Pn; a++) {
            double s = 0;
            for (int64_t b = 0; b < Pn; b++)
                s += dense[a * D + b];
            assert_true(fabs(s - rows[a]) <= 1e-12 * (scale + 1));
        }
        free(rows);
    }
    /* a second species accumulates exactly: S + (its own assembly) */
    particles Q = make_particles(ctx, dim, periodic, side, n / 2 + 1, rng);
    Q.g = P.g;
    double *S2 = malloc(L.entries * 8), *T = malloc(L.entries * 8);
    memcpy(S2, S, L.entries * 8);
    assert_int_equal(assemble(ctx, &Q, shape, kind, 1.5, 1, S2), 0);
    assert_int_equal(assemble(ctx, &Q, shape, kind, 1.5, 0, T), 0);
    for (size_t e = 0; e < L.entries; e++)
        assert_true(S2[e] == S[e] + T[e]);
    free_particles(&Q);
    free(S), free(S2), free(T), free(indptr), free(indices), free(data), free(dense), free(want), free(Wg);
    free_particles(&P);
}

static partile_context_t *ref(void)
{
    partile_context_t *ctx = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ctx), 0);
    return ctx;
}

static void test_against_triple_loop(void **state)
{
    (void)state;
    partile_context_t *ctx = ref();
    uint64_t rng = 21;
    for (int dim = 1; dim <= 3; dim++)
        for (int periodic = 0; periodic < 2; periodic++)
            for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++)
                for (int kind = 0; kind < 2; kind++) {
                    int64_t side = dim == 3 ? 5 : dim == 2 ? 7 : 11;
                    size_t n = dim == 3 ? 400 : 300; /* ~3 per cell; some cells hold > 16 in 1-D */
                    check_case(ctx, dim, periodic, shape, kind, side, n, &rng);
                }
    /* one particle per cell on average, and many in few cells */
    check_case(ctx, 2, 1, PARTILE_SHAPE_TSC, 1, 6, 30, &rng);
    check_case(ctx, 1, 0, PARTILE_SHAPE_CIC, 1, 3, 200, &rng);
    partile_context_destroy(ctx);
}

static void test_alpha_solves(void **state)
{
    (void)state;
    uint64_t rng = 5;
    for (int t = 0; t < 1000; t++) {
        double w[3], u[3], al[9], v[3];
        for (int a = 0; a < 3; a++)
            w[a] = 6 * su_uniform(&rng) - 3, u[a] = 2 * su_uniform(&rng) - 1;
        partile_alpha(w, al);
        for (int i = 0; i < 3; i++)
            v[i] = al[3 * i] * u[0] + al[3 * i + 1] * u[1] + al[3 * i + 2] * u[2];
        /* v − v × ω = u */
        double cx[3] = { v[1] * w[2] - v[2] * w[1], v[2] * w[0] - v[0] * w[2], v[0] * w[1] - v[1] * w[0] };
        for (int i = 0; i < 3; i++)
            assert_true(fabs(v[i] - cx[i] - u[i]) <= 1e-14 * 20);
    }
}

static void test_bad_input(void **state)
{
    (void)state;
    partile_context_t *ctx = ref();
    uint64_t rng = 9;
    particles P = make_particles(ctx, 2, 0, 6, 100, &rng);
    partile_mass_layout_t L;
    assert_int_equal(partile_mass_layout(&P.g, PARTILE_SHAPE_CIC, PARTILE_MASS_TENSOR, &L), 0);
    assert_int_equal(L.offsets, 5);
    assert_int_equal(L.components, 9);
    double *S = malloc(L.entries * 8);
    for (size_t e = 0; e < L.entries; e++)
        S[e] = -7.0;
    /* unsorted: swap two particles of different cells */
    double t = P.x[0];
    P.x[0] = P.x[99];
    P.x[99] = t;
    assert_int_equal(assemble(ctx, &P, PARTILE_SHAPE_CIC, 1, 1.0, 0, S), PARTILE_ERROR_NOT_SORTED);
    P.x[99] = P.x[0];
    P.x[0] = t;
    P.w[100 + 3] = NAN;
    assert_int_equal(assemble(ctx, &P, PARTILE_SHAPE_CIC, 1, 1.0, 0, S), PARTILE_ERROR_NOT_FINITE);
    P.w[100 + 3] = 0.5;
    P.x[100 + 5] = NAN;
    assert_int_equal(assemble(ctx, &P, PARTILE_SHAPE_CIC, 0, 1.0, 0, S), PARTILE_ERROR_NOT_FINITE);
    for (size_t e = 0; e < L.entries; e++)
        assert_true(S[e] == -7.0); /* nothing written */
    assert_int_equal(assemble(ctx, &P, PARTILE_SHAPE_NGP, 0, 1.0, 0, S), PARTILE_ERROR_INVALID_ARGUMENT);
    partile_grid_t tiny = su_grid(1, 2, 1, 1, 1); /* periodic, 2 cells: CIC needs 3 */
    assert_int_equal(partile_mass_layout(&tiny, PARTILE_SHAPE_CIC, PARTILE_MASS_SCALAR, &L),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    tiny.cells[0] = 4; /* TSC needs 5 */
    assert_int_equal(partile_mass_layout(&tiny, PARTILE_SHAPE_TSC, PARTILE_MASS_SCALAR, &L),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(partile_mass_layout(&P.g, PARTILE_SHAPE_TSC, PARTILE_MASS_SCALAR, &L), 0);
    assert_int_equal(L.offsets, 13);
    partile_grid_t g3 = su_grid(3, 5, 5, 5, 1);
    assert_int_equal(partile_mass_layout(&g3, PARTILE_SHAPE_CIC, PARTILE_MASS_SCALAR, &L), 0);
    assert_int_equal(L.offsets, 14);
    assert_int_equal(partile_mass_layout(&g3, PARTILE_SHAPE_TSC, PARTILE_MASS_SCALAR, &L), 0);
    assert_int_equal(L.offsets, 63);
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { P.x, P.x + 100 } };
    partile_mass_params_t p = { &P.g, PARTILE_SHAPE_CIC, PARTILE_MASS_TENSOR, 1.0, 0, NULL, 0.0, PARTILE_MASS_BITWISE, PARTILE_MASS_TILES, PARTILE_MASS_FP64, PARTILE_ORDER_BY_POINT };
    assert_int_equal(partile_mass_assemble(ctx, &p, 100, &pos, P.off, P.q, NULL, S, NULL),
                     PARTILE_ERROR_NULL_POINTER);
    assert_int_equal(partile_mass_assemble(ctx, &p, 100, &pos, NULL, P.q, NULL, S, NULL),
                     PARTILE_ERROR_NULL_POINTER);
    /* a list whose ranges go back: every particle still inside its own cell's
     * range, but cell 3 would visit cell 0's particles again */
    {
        partile_grid_t g1 = su_grid(1, 5, 1, 1, 0);
        double x1[3] = { g1.lower[0] + 0.1 * g1.spacing[0], g1.lower[0] + 0.5 * g1.spacing[0],
                         g1.lower[0] + 0.9 * g1.spacing[0] }, q1[3] = { 1, 1, 1 };
        int64_t off1[6] = { 0, 3, 3, 0, 3, 3 };
        partile_vectors_t pos1 = { PARTILE_DTYPE_FLOAT64, { x1 } };
        partile_mass_params_t p1 = { &g1, PARTILE_SHAPE_CIC, PARTILE_MASS_SCALAR, 1.0, 0, NULL, 0.0, PARTILE_MASS_BITWISE, PARTILE_MASS_TILES, PARTILE_MASS_FP64, PARTILE_ORDER_BY_POINT };
        int64_t bad = -1;
        assert_int_equal(partile_mass_assemble(ctx, &p1, 3, &pos1, off1, q1, NULL, S, &bad),
                         PARTILE_ERROR_NOT_SORTED);
        assert_int_equal(bad, 0);
    }
    free(S);
    free_particles(&P);
    partile_context_destroy(ctx);
}

/* ω from a node-centred B field equals ω = (β/c)·gather(B) given per particle. */
static void test_omega_from_bfield(void **state)
{
    (void)state;
    partile_context_t *ctx = ref();
    uint64_t rng = 31;
    for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++) {
        particles P = make_particles(ctx, 3, 1, 6, 500, &rng);
        partile_mass_layout_t L;
        assert_int_equal(partile_mass_layout(&P.g, (partile_shape_t)shape, PARTILE_MASS_TENSOR, &L), 0);
        double *B = malloc((size_t)L.points * 3 * 8), *Bp = malloc(P.n * 3 * 8);
        for (int64_t e = 0; e < L.points * 3; e++)
            B[e] = 2 * su_uniform(&rng) - 1;
        const double beta_c = 0.37;
        partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { P.x, P.x + P.n, P.x + 2 * P.n } };
        partile_transfer_t t = { &P.g, (partile_shape_t)shape, PARTILE_CENTERING_NODE, 3, NULL, PARTILE_ORDER_BY_POINT };
        assert_int_equal(partile_gather(ctx, &t, P.n, &pos, B, Bp, NULL), 0);
        for (size_t i = 0; i < P.n; i++)
            for (int a = 0; a < 3; a++)
                P.w[a * P.n + i] = beta_c * Bp[3 * i + a];
        double *S1 = malloc(L.entries * 8), *S2 = malloc(L.entries * 8);
        assert_int_equal(assemble(ctx, &P, shape, 1, 2.0, 0, S1), 0);
        partile_mass_params_t p = { &P.g, (partile_shape_t)shape, PARTILE_MASS_TENSOR, 2.0, 0, B, beta_c, PARTILE_MASS_BITWISE, PARTILE_MASS_TILES, PARTILE_MASS_FP64, PARTILE_ORDER_BY_POINT };
        assert_int_equal(partile_mass_assemble(ctx, &p, P.n, &pos, P.off, P.q, NULL, S2, NULL), 0);
        assert_memory_equal(S1, S2, L.entries * 8);
        /* neither omega nor a field: refused */
        p.bfield = NULL;
        assert_int_equal(partile_mass_assemble(ctx, &p, P.n, &pos, P.off, P.q, NULL, S2, NULL),
                         PARTILE_ERROR_NULL_POINTER);
        free(B), free(Bp), free(S1), free(S2);
        free_particles(&P);
    }
    partile_context_destroy(ctx);
}

/* mode, algorithm and precision: checked; the reference runs its own loops
 * (FP64, the order of mass.h) whatever the GPU options ask for. */
/* The GPU staging's TSC group from q alone (partile_mass_group_bit) equals
 * the reference's from the cell index, for particles inside the box, on
 * cell faces and half-cells, and (periodic) boxes away. */
static void test_group_bit(void **state)
{
    (void)state;
    uint64_t rng = 20261130;
    for (int dim = 1; dim <= 3; dim++)
        for (int periodic = 0; periodic < 2; periodic++)
            for (int64_t side = 5; side <= 9; side += 2) {
                const partile_grid_t g = su_grid(dim, side, side + 1, side, periodic);
                for (int i = 0; i < 4000; i++) {
                    double x[3] = { 0.0, 0.0, 0.0 };
                    for (int a = 0; a < dim; a++) {
                        const double span = (double)g.cells[a] * g.spacing[a];
                        double s = su_uniform(&rng) * (double)g.cells[a];
                        if (i % 4 == 1) /* a cell face or a half-cell exactly */
                            s = 0.5 * (double)(int64_t)(2.0 * s);
                        x[a] = g.lower[a] + s * g.spacing[a];
                        if (periodic && i % 3 == 2) /* boxes away */
                            x[a] += span * (double)((int)(su_uniform(&rng) * 7.0) - 3);
                    }
                    partile_stencil_1d st[3];
                    int64_t cell = -1;
                    memset(st, 0, sizeof st);
                    assert_int_equal(partile_particle_stencil(&g, PARTILE_SHAPE_TSC,
                                                              PARTILE_CENTERING_NODE, x, 0.0, st,
                                                              &cell),
                                     0);
                    int fast = 0;
                    for (int a = 0; a < dim; a++)
                        fast |= partile_mass_group_bit((x[a] - g.lower[a]) / g.spacing[a]) << a;
                    assert_int_equal(fast, partile_mass_group(&g, PARTILE_SHAPE_TSC, st, cell));
                }
            }
}

static void test_options(void **state)
{
    (void)state;
    partile_context_t *ctx = ref();
    uint64_t rng = 77;
    particles P = make_particles(ctx, 2, 1, 7, 400, &rng);
    partile_mass_layout_t L;
    assert_int_equal(partile_mass_layout(&P.g, PARTILE_SHAPE_TSC, PARTILE_MASS_TENSOR, &L), 0);
    double *want = malloc(L.entries * 8), *got = malloc(L.entries * 8);
    assert_int_equal(assemble(ctx, &P, PARTILE_SHAPE_TSC, 1, 0.5, 0, want), 0);
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { P.x, P.x + P.n } };
    partile_vectors_t om = { PARTILE_DTYPE_FLOAT64, { P.w, P.w + P.n, P.w + 2 * P.n } };
    partile_mass_params_t p;
    memset(&p, 0, sizeof p);
    p.grid = &P.g;
    p.shape = PARTILE_SHAPE_TSC;
    p.kind = PARTILE_MASS_TENSOR;
    p.sigma = 0.5;
    /* options the reference accepts and answers with the bitwise result */
    const int variants[][3] = { { PARTILE_MASS_RELAXED, PARTILE_MASS_TILES, PARTILE_MASS_FP64 },
                                { PARTILE_MASS_BITWISE, PARTILE_MASS_FMA_PER_CELL, PARTILE_MASS_FP64 },
                                { PARTILE_MASS_BITWISE, PARTILE_MASS_TILES, PARTILE_MASS_TF32 },
                                { PARTILE_MASS_RELAXED, PARTILE_MASS_ATOMIC_UNSORTED, PARTILE_MASS_FP64 } };
    for (int v = 0; v < 4; v++) {
        p.mode = (partile_mass_mode_t)variants[v][0];
        p.algorithm = (partile_mass_algorithm_t)variants[v][1];
        p.precision = (partile_mass_precision_t)variants[v][2];
        memset(got, 0xab, L.entries * 8);
        assert_int_equal(partile_mass_assemble(ctx, &p, P.n, &pos, P.off, P.q, &om, got, NULL), 0);
        assert_memory_equal(got, want, L.entries * 8);
    }
    /* values outside the enums, and combinations that make no sense: refused,
     * storage untouched */
    const int refused[][3] = { { 2, PARTILE_MASS_TILES, PARTILE_MASS_FP64 },
                               { -1, PARTILE_MASS_TILES, PARTILE_MASS_FP64 },
                               { PARTILE_MASS_BITWISE, 3, PARTILE_MASS_FP64 },
                               { PARTILE_MASS_BITWISE, PARTILE_MASS_TILES, 2 },
                               { PARTILE_MASS_BITWISE, PARTILE_MASS_ATOMIC_UNSORTED, PARTILE_MASS_FP64 } };
    for (int v = 0; v < 5; v++) {
        p.mode = (partile_mass_mode_t)refused[v][0];
        p.algorithm = (partile_mass_algorithm_t)refused[v][1];
        p.precision = (partile_mass_precision_t)refused[v][2];
        memset(got, 0xab, L.entries * 8);
        assert_int_equal(partile_mass_assemble(ctx, &p, P.n, &pos, P.off, P.q, &om, got, NULL),
                         PARTILE_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(partile_last_error_detail(), v < 2 ? "mode" : v == 2 ? "algorithm"
                                                            : v == 3 ? "precision" : "relaxed"));
        for (size_t e = 0; e < L.entries; e++)
            assert_int_equal(((unsigned char *)got)[8 * e], 0xab);
    }
    /* the unsorted atomic kernel may go without a cell list on a GPU; the
     * reference needs one and says so */
    p.mode = PARTILE_MASS_RELAXED;
    p.algorithm = PARTILE_MASS_ATOMIC_UNSORTED;
    p.precision = PARTILE_MASS_FP64;
    assert_int_equal(partile_mass_assemble(ctx, &p, P.n, &pos, NULL, P.q, &om, got, NULL),
                     PARTILE_ERROR_UNSUPPORTED);
    assert_non_null(strstr(partile_last_error_detail(), "cell list"));
    p.algorithm = PARTILE_MASS_TILES; /* the others need it everywhere */
    assert_int_equal(partile_mass_assemble(ctx, &p, P.n, &pos, NULL, P.q, &om, got, NULL),
                     PARTILE_ERROR_NULL_POINTER);
    free(want), free(got);
    free_particles(&P);
    partile_context_destroy(ctx);
}

/* partile_mass_export_count, counted without walking the points, against
 * what partile_mass_export writes (into arrays sized for every stencil
 * entry): 1-D to 3-D, every mix of periodic axes, CIC and TSC, the smallest
 * grids up; and a grid of 10^15 points, which a walk would never finish. */
static void test_export_count(void **state)
{
    (void)state;
    for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++)
        for (int dim = 1; dim <= 3; dim++)
            for (int mask = 0; mask < (1 << dim); mask++)
                for (int64_t c = 1; c <= 6; c++) {
                    const int n = shape == PARTILE_SHAPE_TSC ? 2 : 1;
                    partile_grid_t g;
                    memset(&g, 0, sizeof g);
                    g.dim = dim;
                    int64_t stencil = 1;
                    for (int a = 0; a < 3; a++) {
                        g.periodic[a] = (mask >> a) & 1;
                        g.cells[a] = a >= dim ? 1 : g.periodic[a] ? 2 * n + 1 + c - 1 : c + a;
                        g.spacing[a] = 1.0;
                        stencil *= a < dim ? 2 * n + 1 : 1;
                    }
                    partile_mass_layout_t L;
                    assert_int_equal(partile_mass_layout(&g, (partile_shape_t)shape,
                                                         PARTILE_MASS_SCALAR, &L), 0);
                    int64_t nnz = -1;
                    assert_int_equal(partile_mass_export_count(&g, (partile_shape_t)shape, &nnz), 0);
                    double *S = calloc(L.entries, 8), *data = malloc((size_t)(L.points * stencil) * 8);
                    int64_t *indptr = malloc((size_t)(L.points + 1) * 8),
                            *indices = malloc((size_t)(L.points * stencil) * 8);
                    assert_int_equal(partile_mass_export(&g, (partile_shape_t)shape,
                                                         PARTILE_MASS_SCALAR, S, indptr, indices,
                                                         data), 0);
                    if (indptr[L.points] != nnz)
                        fail_msg("shape %d, %d-D, periodic mask %d, cells %lld: counted %lld, "
                                 "exported %lld", shape, dim, mask, (long long)g.cells[0],
                                 (long long)nnz, (long long)indptr[L.points]);
                    free(S), free(data), free(indptr), free(indices);
                }
    partile_grid_t big;
    memset(&big, 0, sizeof big);
    big.dim = 3;
    for (int a = 0; a < 3; a++)
        big.cells[a] = 100000, big.spacing[a] = 1.0, big.periodic[a] = 1;
    int64_t nnz = -1;
    assert_int_equal(partile_mass_export_count(&big, PARTILE_SHAPE_TSC, &nnz), 0);
    assert_true(nnz == 125000000000000000ll); /* (10^5 · 5)^3 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_export_count),
        cmocka_unit_test(test_group_bit),
        cmocka_unit_test(test_alpha_solves),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_against_triple_loop),
        cmocka_unit_test(test_omega_from_bfield),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
