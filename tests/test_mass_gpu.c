/* Mass-matrix assembly on the GPU backends, against the reference backend:
 * bit for bit in bitwise mode (tile engine and kernel (ii), CIC/TSC,
 * scalar/tensor, d = 1, 2, 3, periodic or not, ω given or from a B field,
 * several species accumulated, empty cells and a cell holding many tiles'
 * worth of particles, more cells than the tile kernels' grid has warps, no
 * particles, FP32 positions); within rounding in relaxed mode and
 * for the unsorted atomic kernel (i); bad input refused with the storage
 * untouched. Fresh random inputs every run (the seed is printed). Skips
 * (exit 77 if all) without a device. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/gpu_test.h"
#include "tests/sort_util.h"

typedef struct problem {
    partile_grid_t g;
    size_t n;
    double *x, *q, *w, *B; /* SoA positions, charges, SoA ω; B: points × 3 */
    int64_t *off;
    int64_t points;
} problem;

/* Sorted random particles; `cluster` of them crowd into one cell. */
static problem make_problem(partile_context_t *ref, int dim, int periodic, int64_t side, size_t n,
                            size_t cluster, uint64_t *rng)
{
    problem P;
    P.g = su_grid(dim, side, side - 1 > 4 ? side - 1 : side, side, periodic);
    P.n = n;
    int64_t ncells, pts[3];
    partile_grid_cell_count(&P.g, &ncells);
    partile_field_shape(&P.g, PARTILE_CENTERING_NODE, pts, &P.points);
    double *x = su_positions(&P.g, n, rng);
    for (size_t i = 0; i < cluster && i < n; i++) /* into the cell at ~(1.5, 1.5, 1.5) */
        for (int a = 0; a < dim; a++)
            x[a * n + i] = P.g.lower[a] + P.g.spacing[a] * (1.0 + su_uniform(rng));
    P.x = calloc(3 * (n ? n : 1), 8);
    P.q = malloc((n ? n : 1) * 8);
    P.w = malloc(3 * (n ? n : 1) * 8);
    P.B = malloc((size_t)P.points * 3 * 8);
    P.off = malloc((size_t)(ncells + 1) * 8);
    int64_t *perm = malloc((n ? n : 1) * 8);
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { x, x + n, x + 2 * n } };
    assert_int_equal(partile_sort(ref, &P.g, n, &pos, P.off, perm, NULL, NULL), 0);
    for (int a = 0; a < dim; a++)
        for (size_t i = 0; i < n; i++)
            P.x[a * n + i] = x[a * n + perm[i]];
    for (size_t i = 0; i < n; i++) {
        P.q[i] = (su_uniform(rng) - 0.3) * 2.0; /* both signs */
        for (int a = 0; a < 3; a++)
            P.w[a * n + i] = 4 * su_uniform(rng) - 2;
    }
    for (int64_t e = 0; e < P.points * 3; e++)
        P.B[e] = 2 * su_uniform(rng) - 1;
    free(x);
    free(perm);
    return P;
}

static void free_problem(problem *P) { free(P->x), free(P->q), free(P->w), free(P->B), free(P->off); }

static void *to_device(partile_context_t *ctx, const void *host, size_t bytes)
{
    void *d = NULL;
    assert_int_equal(partile_malloc(ctx, bytes ? bytes : 8, &d), 0);
    if (bytes)
        assert_int_equal(partile_memcpy(ctx, d, host, bytes, PARTILE_COPY_HOST_TO_DEVICE), 0);
    return d;
}

typedef struct run_opts {
    int shape, kind, use_bfield, accumulate, sorted_list;
    partile_mass_mode_t mode;
    partile_mass_algorithm_t algorithm;
    partile_mass_precision_t precision;
    int fp32_positions; /* P->x given as FLOAT32 (its values must be floats) */
} run_opts;

/* Assembles on ctx (device memory) into storage, which starts as `init`. */
/* assemble_on's partile_last_error_detail(), kept from before its copies
 * (which clear it) */
static char assemble_detail[512];

static void assert_detail_has(const char *needle)
{
    if (!strstr(assemble_detail, needle))
        fail_msg("detail \"%s\" lacks \"%s\"", assemble_detail, needle);
}

static int assemble_on(partile_context_t *ctx, int device, const problem *P, const run_opts *o,
                       const double *init, double *out, size_t entries, int64_t *bad)
{
    const size_t n = P->n;
    int64_t ncells;
    partile_grid_cell_count(&P->g, &ncells);
    double *q = P->q, *w = P->w, *B = P->B, *S = out;
    int64_t *off = P->off;
    float *xf = NULL; /* FP32 positions: P->x as floats */
    if (o->fp32_positions) {
        xf = malloc(3 * (n ? n : 1) * sizeof(float));
        for (size_t i = 0; i < 3 * n; i++)
            xf[i] = (float)P->x[i];
    }
    void *xin = xf ? (void *)xf : (void *)P->x;
    if (device) {
        xin = to_device(ctx, xin, 3 * n * (xf ? sizeof(float) : 8));
        q = to_device(ctx, P->q, n * 8);
        w = to_device(ctx, P->w, 3 * n * 8);
        B = to_device(ctx, P->B, (size_t)P->points * 3 * 8);
        off = to_device(ctx, P->off, (size_t)(ncells + 1) * 8);
        S = to_device(ctx, init, entries * 8);
    } else {
        memcpy(S, init, entries * 8);
    }
    partile_vectors_t pos;
    if (xf) {
        const float *f = xin;
        pos = (partile_vectors_t){ PARTILE_DTYPE_FLOAT32, { f, f + n, f + 2 * n } };
    } else {
        const double *d = xin;
        pos = (partile_vectors_t){ PARTILE_DTYPE_FLOAT64, { d, d + n, d + 2 * n } };
    }
    partile_vectors_t om = { PARTILE_DTYPE_FLOAT64, { w, w + n, w + 2 * n } };
    partile_mass_params_t p = { &P->g, (partile_shape_t)o->shape, (partile_mass_kind_t)o->kind,
                                0.75, o->accumulate, o->use_bfield ? B : NULL, 0.625,
                                o->mode, o->algorithm, o->precision, PARTILE_ORDER_BY_POINT };
    const int st = partile_mass_assemble(ctx, &p, n, &pos, o->sorted_list ? off : NULL, q,
                                         o->use_bfield ? NULL : &om, S, bad);
    snprintf(assemble_detail, sizeof assemble_detail, "%s", partile_last_error_detail());
    if (device) {
        assert_int_equal(partile_memcpy(ctx, out, S, entries * 8, PARTILE_COPY_DEVICE_TO_HOST), 0);
        partile_free(ctx, xin), partile_free(ctx, q), partile_free(ctx, w), partile_free(ctx, B);
        partile_free(ctx, off), partile_free(ctx, S);
    }
    free(xf);
    return st;
}

static const char *case_name(const problem *P, const run_opts *o)
{
    static char buf[160];
    snprintf(buf, sizeof buf, "d=%d periodic=%d %s %s %s %s%s%s%s n=%zu", P->g.dim, P->g.periodic[0],
             o->shape == PARTILE_SHAPE_TSC ? "TSC" : "CIC", o->kind ? "tensor" : "scalar",
             o->algorithm == PARTILE_MASS_TILES          ? "tiles"
             : o->algorithm == PARTILE_MASS_FMA_PER_CELL ? "fma-per-cell"
                                                         : "atomic",
             o->mode == PARTILE_MASS_RELAXED ? "relaxed" : "bitwise",
             o->use_bfield ? " B-field" : "", o->accumulate ? " accumulate" : "",
             o->precision == PARTILE_MASS_TF32 ? " TF32" : "", P->n);
    if (o->fp32_positions)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " FP32 positions");
    return buf;
}

/* GPU against reference: bitwise, or within rounding (relaxed). */
static void compare(partile_context_t *gpu, partile_context_t *ref, const problem *P,
                    const run_opts *o, uint64_t *rng)
{
    partile_mass_layout_t L;
    assert_int_equal(partile_mass_layout(&P->g, (partile_shape_t)o->shape,
                                         (partile_mass_kind_t)o->kind, &L), 0);
    double *init = malloc(L.entries * 8), *want = malloc(L.entries * 8),
           *got = malloc(L.entries * 8);
    for (size_t e = 0; e < L.entries; e++) /* accumulate: an earlier species; else poison */
        init[e] = o->accumulate ? su_uniform(rng) - 0.5 : NAN;
    run_opts r = *o;
    r.mode = PARTILE_MASS_BITWISE;
    r.algorithm = PARTILE_MASS_TILES;
    r.sorted_list = 1;
    r.precision = PARTILE_MASS_FP64;
    assert_int_equal(assemble_on(ref, 0, P, &r, init, want, L.entries, NULL), 0);
    int64_t bad = -1;
    int st = assemble_on(gpu, 1, P, o, init, got, L.entries, &bad);
    if (st != 0)
        fail_msg("%s: status %d (%s)", case_name(P, o), st, partile_last_error_detail());
    double peak = 0;
    for (size_t e = 0; e < L.entries; e++)
        peak = fmax(peak, fabs(want[e]));
    for (size_t e = 0; e < L.entries; e++) {
        const int same = memcmp(&got[e], &want[e], 8) == 0;
        if (o->precision == PARTILE_MASS_TF32) { /* the tolerance mass.h states */
            if (!(fabs(got[e] - want[e]) <= 0x1p-8 * peak))
                fail_msg("%s: entry %zu = %.9g, FP64 reference %.9g (TF32 tolerance 2^-8·%g)",
                         case_name(P, o), e, got[e], want[e], peak);
            continue;
        }
        if (o->mode == PARTILE_MASS_BITWISE && !same)
            fail_msg("%s: entry %zu (point %zu, slot %zu, comp %zu) = %a, reference %a",
                     case_name(P, o), e, e / (L.offsets * L.components),
                     e / L.components % L.offsets, e % L.components, got[e], want[e]);
        if (o->mode == PARTILE_MASS_RELAXED && !(fabs(got[e] - want[e]) <= 1e-13 * (peak + 1)))
            fail_msg("%s: entry %zu = %.17g, reference %.17g (relaxed tolerance 1e-13·%g)",
                     case_name(P, o), e, got[e], want[e], peak + 1);
    }
    free(init), free(want), free(got);
}

/* compare in bitwise mode, scalar and tensor, tiles and kernel (ii). */
static void compare_bitwise_kinds(partile_context_t *gpu, partile_context_t *ref, const problem *P,
                                  int shape, uint64_t *rng)
{
    for (int kind = 0; kind <= 1; kind++)
        for (int alg = PARTILE_MASS_TILES; alg <= PARTILE_MASS_FMA_PER_CELL; alg++) {
            run_opts o = { shape, kind, 0, 0, 1, PARTILE_MASS_BITWISE,
                           (partile_mass_algorithm_t)alg, PARTILE_MASS_FP64, 0 };
            compare(gpu, ref, P, &o, rng);
        }
}

static void all_bitwise(partile_context_t *ctx)
{
    partile_context_t *ref = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ref), 0);
    uint64_t rng = fresh_seed();
    for (int dim = 1; dim <= 3; dim++)
        for (int periodic = 0; periodic <= 1; periodic++)
            for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++) {
                const int64_t side = dim == 3 ? 6 : dim == 2 ? 9 : 17;
                const size_t n = dim == 3 ? 2500 : 1500;
                problem P = make_problem(ref, dim, periodic, side, n, n / 5, &rng);
                compare_bitwise_kinds(ctx, ref, &P, shape, &rng);
                free_problem(&P);
            }
    partile_context_destroy(ref);
}

/* Moves about every fifth particle of a periodic problem whole boxes away
 * (−2, −1, +1 or +3 periods) on one axis, then sorts again: such positions
 * bin into their wrapped cell, and the checks pass 1 makes on its way must
 * accept them as the reference does. */
static void resort(partile_context_t *ref, problem *P);

static void shift_images(partile_context_t *ref, problem *P, uint64_t *rng)
{
    const size_t n = P->n;
    static const double periods[4] = { -2.0, -1.0, 1.0, 3.0 };
    for (size_t i = 0; i < n; i++) {
        if (su_uniform(rng) > 0.2)
            continue;
        const int a = (int)(su_uniform(rng) * P->g.dim) % P->g.dim;
        const double span = (double)P->g.cells[a] * P->g.spacing[a];
        P->x[a * n + i] += periods[(int)(su_uniform(rng) * 4) & 3] * span;
    }
    resort(ref, P);
}

/* Sorts P's particles again after their positions changed. */
static void resort(partile_context_t *ref, problem *P)
{
    const size_t n = P->n;
    double *x = malloc(3 * (n ? n : 1) * 8), *q = malloc((n ? n : 1) * 8),
           *w = malloc(3 * (n ? n : 1) * 8);
    int64_t *perm = malloc((n ? n : 1) * 8);
    memcpy(x, P->x, 3 * n * 8);
    memcpy(q, P->q, n * 8);
    memcpy(w, P->w, 3 * n * 8);
    partile_vectors_t pos = { PARTILE_DTYPE_FLOAT64, { x, x + n, x + 2 * n } };
    assert_int_equal(partile_sort(ref, &P->g, n, &pos, P->off, perm, NULL, NULL), 0);
    for (size_t i = 0; i < n; i++) {
        P->q[i] = q[perm[i]];
        for (int a = 0; a < 3; a++) {
            P->x[a * n + i] = x[a * n + perm[i]];
            P->w[a * n + i] = w[a * n + perm[i]];
        }
    }
    free(x), free(q), free(w), free(perm);
}

/* Puts `count` particles into one octant of the cell at (1, 1, 1), so that
 * one TSC support group of that cell holds them all (more than a staging
 * ring: the tile kernel's resident try fails and it streams the group). */
static void crowd_octant(partile_context_t *ref, problem *P, size_t count, uint64_t *rng)
{
    for (size_t i = 0; i < count && i < P->n; i++)
        for (int a = 0; a < P->g.dim; a++)
            P->x[a * P->n + i] = P->g.lower[a] + P->g.spacing[a] * (1.0 + 0.2 * su_uniform(rng));
    resort(ref, P);
}

/* ω from the B field, species accumulated, sparse grids, no particles, one
 * particle, 1 particle per cell; positions periods away. */
static void special_cases(partile_context_t *ctx)
{
    partile_context_t *ref = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ref), 0);
    uint64_t rng = fresh_seed();
    const size_t sizes[] = { 0, 1, 216, 40 };
    for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++)
        for (int periodic = 0; periodic <= 1; periodic++)
            for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
                problem P = make_problem(ref, 3, periodic, 6, sizes[k], 0, &rng);
                for (int alg = PARTILE_MASS_TILES; alg <= PARTILE_MASS_FMA_PER_CELL; alg++) {
                    run_opts o = { shape, 1, 1, 1, 1, PARTILE_MASS_BITWISE,
                                   (partile_mass_algorithm_t)alg, PARTILE_MASS_FP64, 0 };
                    compare(ctx, ref, &P, &o, &rng); /* B field, accumulate */
                    o.use_bfield = 0;
                    o.kind = 0;
                    compare(ctx, ref, &P, &o, &rng); /* scalar, accumulate */
                }
                free_problem(&P);
            }
    /* a support group larger than a staging ring in a cell that is not */
    for (int dim = 2; dim <= 3; dim++) {
        problem P = make_problem(ref, dim, 0, dim == 3 ? 6 : 9, 1500, 0, &rng);
        crowd_octant(ref, &P, 150, &rng);
        for (int kind = 0; kind <= 1; kind++) {
            run_opts o = { PARTILE_SHAPE_TSC, kind, 0, 0, 1, PARTILE_MASS_BITWISE,
                           PARTILE_MASS_TILES, PARTILE_MASS_FP64, 0 };
            compare(ctx, ref, &P, &o, &rng);
            o.mode = PARTILE_MASS_RELAXED;
            compare(ctx, ref, &P, &o, &rng);
        }
        free_problem(&P);
    }
    /* positions whole periods away on periodic grids, every shape and kind */
    for (int dim = 2; dim <= 3; dim++)
        for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++) {
            problem P = make_problem(ref, dim, 1, dim == 3 ? 6 : 9, 2000, 0, &rng);
            shift_images(ref, &P, &rng);
            compare_bitwise_kinds(ctx, ref, &P, shape, &rng);
            free_problem(&P);
        }
    partile_context_destroy(ref);
}

/* More cells than the tile kernels' capped grid has warps (on CUDA, 132
 * SMs × 16 blocks × up to 8 warps, mass_launch_cells), so that each warp
 * strides over several cells and the CIC tensor kernel carries its next
 * cell's first round: empty cells, cells of one round and cells of several.
 * Two fifths of the particles crowd into the lower and the upper quarter of
 * every axis; the upper crowd's cells lie past the first stride, so that a
 * carry lands in cells of several rounds too (the lower crowd's cells are
 * warps' first cells, which carry into cells of one round or none).
 * Bitwise, both kinds, CIC and TSC, periodic or not; relaxed once. */
static void many_cells_on(partile_context_t *ctx)
{
    partile_context_t *ref = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ref), 0);
    uint64_t rng = fresh_seed();
    const int64_t first_stride = 132 * 16 * 8; /* the most warps of a capped grid */
    for (int periodic = 0; periodic <= 1; periodic++) {
        problem P = make_problem(ref, 3, periodic, 32, 120000, 0, &rng); /* 32·31·32 cells */
        for (size_t i = 0; i < P.n; i += 5)
            for (size_t j = i; j < i + 2 && j < P.n; j++)
                for (int a = 0; a < 3; a++) {
                    const double span = (double)P.g.cells[a] * P.g.spacing[a];
                    const double from = j == i ? 0.0 : 0.75 * span; /* lower or upper quarter */
                    P.x[a * P.n + j] =
                        P.g.lower[a] + from + 0.25 * (P.x[a * P.n + j] - P.g.lower[a]);
                }
        resort(ref, &P);
        int64_t ncells, empty = 0, several = 0, several_late = 0;
        partile_grid_cell_count(&P.g, &ncells);
        for (int64_t c = 0; c < ncells; c++) {
            empty += P.off[c + 1] == P.off[c];
            several += P.off[c + 1] - P.off[c] > 32; /* two rounds or more on CUDA */
            several_late += c >= first_stride && P.off[c + 1] - P.off[c] > 32;
        }
        assert_true(ncells > first_stride && empty > 100 && several > 100 && several_late > 100);
        for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++)
            compare_bitwise_kinds(ctx, ref, &P, shape, &rng);
        run_opts o = { PARTILE_SHAPE_CIC, 1, 0, 1, 1, PARTILE_MASS_RELAXED, PARTILE_MASS_TILES,
                       PARTILE_MASS_FP64, 0 };
        compare(ctx, ref, &P, &o, &rng);
        free_problem(&P);
    }
    partile_context_destroy(ref);
}

static void relaxed_and_atomic(partile_context_t *ctx)
{
    partile_context_t *ref = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ref), 0);
    uint64_t rng = fresh_seed();
    for (int dim = 1; dim <= 3; dim++)
        for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++) {
            problem P = make_problem(ref, dim, dim != 2, dim == 3 ? 6 : 9, 2000, 100, &rng);
            for (int kind = 0; kind <= 1; kind++)
                for (int alg = 0; alg <= 2; alg++) {
                    run_opts o = { shape, kind, 0, dim == 1, alg != 2, PARTILE_MASS_RELAXED,
                                   (partile_mass_algorithm_t)alg, PARTILE_MASS_FP64, 0 };
                    compare(ctx, ref, &P, &o, &rng);
                }
            free_problem(&P);
        }
    partile_context_destroy(ref);
}

/* TF32 tiles (FP32 accumulation per group) against the FP64 reference. */
static void tf32(partile_context_t *ctx)
{
    partile_context_t *ref = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ref), 0);
    uint64_t rng = fresh_seed();
    for (int dim = 2; dim <= 3; dim++)
        for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++) {
            problem P = make_problem(ref, dim, 1, dim == 3 ? 6 : 9, 3000, 300, &rng);
            for (int kind = 0; kind <= 1; kind++)
                for (int mode = 0; mode <= 1; mode++) {
                    run_opts o = { shape, kind, 0, 0, 1, (partile_mass_mode_t)mode,
                                   PARTILE_MASS_TILES, PARTILE_MASS_TF32, 0 };
                    compare(ctx, ref, &P, &o, &rng);
                }
            free_problem(&P);
        }
    partile_context_destroy(ref);
}

/* Bad input: a negative status, the particle named, the storage untouched. */
static void errors(partile_context_t *ctx)
{
    partile_context_t *ref = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ref), 0);
    uint64_t rng = fresh_seed();
    problem P = make_problem(ref, 3, 1, 6, 500, 0, &rng);
    partile_mass_layout_t L;
    assert_int_equal(partile_mass_layout(&P.g, PARTILE_SHAPE_CIC, PARTILE_MASS_TENSOR, &L), 0);
    double *init = malloc(L.entries * 8), *got = malloc(L.entries * 8);
    for (size_t e = 0; e < L.entries; e++)
        init[e] = (double)e;
    run_opts o = { PARTILE_SHAPE_CIC, 1, 0, 0, 1, PARTILE_MASS_BITWISE, PARTILE_MASS_TILES,
                   PARTILE_MASS_FP64, 0 };
    int64_t bad = -1;
    /* a NaN position */
    const double keep = P.x[P.n + 17];
    P.x[P.n + 17] = NAN;
    assert_int_equal(assemble_on(ctx, 1, &P, &o, init, got, L.entries, &bad),
                     PARTILE_ERROR_NOT_FINITE);
    assert_int_equal(bad, 17);
    assert_memory_equal(got, init, L.entries * 8);
    /* the detail, with the position read back from the device */
    assert_detail_has("particle 17 at (");
    assert_detail_has("its y coordinate is NaN");
    P.x[P.n + 17] = keep;
    /* a position outside a non-periodic grid */
    problem Q = make_problem(ref, 3, 0, 6, 300, 0, &rng);
    partile_mass_layout_t LQ;
    assert_int_equal(partile_mass_layout(&Q.g, PARTILE_SHAPE_CIC, PARTILE_MASS_TENSOR, &LQ), 0);
    double *initq = calloc(LQ.entries, 8), *gotq = malloc(LQ.entries * 8);
    Q.x[250] = Q.g.lower[0] - 1.0;
    bad = -1;
    assert_int_equal(assemble_on(ctx, 1, &Q, &o, initq, gotq, LQ.entries, &bad),
                     PARTILE_ERROR_OUT_OF_DOMAIN);
    assert_int_equal(bad, 250);
    assert_memory_equal(gotq, initq, LQ.entries * 8);
    assert_detail_has("is outside [");
    assert_detail_has("the non-periodic x axis");
    /* a non-finite ω */
    P.w[2 * P.n + 99] = INFINITY;
    bad = -1;
    assert_int_equal(assemble_on(ctx, 1, &P, &o, init, got, L.entries, &bad),
                     PARTILE_ERROR_NOT_FINITE);
    assert_int_equal(bad, 99);
    assert_memory_equal(got, init, L.entries * 8);
    assert_detail_has("particle 99 at (");
    assert_detail_has(", inf) is not finite"); /* its ω, read back */
    P.w[2 * P.n + 99] = 0.5;
    /* unsorted: two particles of different cells swapped */
    size_t i = 0, j = P.n - 1;
    for (int a = 0; a < 3; a++) {
        const double t = P.x[a * P.n + i];
        P.x[a * P.n + i] = P.x[a * P.n + j];
        P.x[a * P.n + j] = t;
    }
    bad = -1;
    assert_int_equal(assemble_on(ctx, 1, &P, &o, init, got, L.entries, &bad),
                     PARTILE_ERROR_NOT_SORTED);
    assert_memory_equal(got, init, L.entries * 8);
    assert_detail_has("it bins to cell");
    assert_detail_has("cell_offsets lists it in another cell's range");
    /* bitwise mode with the unsorted atomic kernel is refused */
    o.algorithm = PARTILE_MASS_ATOMIC_UNSORTED;
    assert_int_equal(assemble_on(ctx, 1, &P, &o, init, got, L.entries, &bad),
                     PARTILE_ERROR_INVALID_ARGUMENT);
    assert_memory_equal(got, init, L.entries * 8);
    free(init), free(got), free(initq), free(gotq);
    free_problem(&P);
    free_problem(&Q);
    partile_context_destroy(ref);
}

/* One bad input on the GPU against the reference: the same status and bad
 * particle (the reference's order of checks), the storage untouched. */
static void expect_refused(partile_context_t *gpu, partile_context_t *ref, const problem *P,
                           const run_opts *o, const char *what)
{
    partile_mass_layout_t L;
    assert_int_equal(partile_mass_layout(&P->g, (partile_shape_t)o->shape,
                                         (partile_mass_kind_t)o->kind, &L), 0);
    double *init = malloc(L.entries * 8), *want = malloc(L.entries * 8),
           *got = malloc(L.entries * 8);
    for (size_t e = 0; e < L.entries; e++)
        init[e] = (double)e - 0.5;
    int64_t want_bad = -1, got_bad = -1;
    const int want_st = assemble_on(ref, 0, P, o, init, want, L.entries, &want_bad);
    const int got_st = assemble_on(gpu, 1, P, o, init, got, L.entries, &got_bad);
    if (want_st >= 0)
        fail_msg("%s, %s: the reference accepted the bad input", case_name(P, o), what);
    if (got_st != want_st || got_bad != want_bad)
        fail_msg("%s, %s: status %d, bad particle %lld; reference %d, %lld", case_name(P, o), what,
                 got_st, (long long)got_bad, want_st, (long long)want_bad);
    if (memcmp(got, init, L.entries * 8) != 0)
        fail_msg("%s, %s: the storage was written", case_name(P, o), what);
    free(init), free(want), free(got);
}

/* FP32 positions (the per-cell kernels read them as k_mass_positions_f64
 * converts them): every FP64 path bitwise against the reference given the
 * same floats, and a NaN float refused with the storage untouched. */
static void fp32_positions(partile_context_t *ctx)
{
    partile_context_t *ref = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ref), 0);
    uint64_t rng = fresh_seed();
    for (int dim = 1; dim <= 3; dim++)
        for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++) {
            /* periodic: a position rounded up to the top wraps, as the sort bins it */
            problem P = make_problem(ref, dim, 1, dim == 3 ? 6 : 9, 2500, 300, &rng);
            for (size_t i = 0; i < 3 * P.n; i++)
                P.x[i] = (double)(float)P.x[i];
            resort(ref, &P); /* rounding may have moved a particle across a face */
            for (int kind = 0; kind <= 1; kind++)
                for (int alg = PARTILE_MASS_TILES; alg <= PARTILE_MASS_FMA_PER_CELL; alg++) {
                    run_opts o = { shape, kind, 0, 0, 1, PARTILE_MASS_BITWISE,
                                   (partile_mass_algorithm_t)alg, PARTILE_MASS_FP64, 1 };
                    compare(ctx, ref, &P, &o, &rng);
                    const double saved = P.x[P.n / 2];
                    P.x[P.n / 2] = NAN;
                    expect_refused(ctx, ref, &P, &o, "a NaN float position");
                    P.x[P.n / 2] = saved;
                }
            free_problem(&P);
        }
    partile_context_destroy(ref);
}

/* Every check, on every path that assembles (one pass with the checks in
 * pass 1, or the checks first: B field, relaxed), CIC and TSC, scalar and
 * tensor, tiles and kernel (ii), with and without accumulate. */
static void refused_everywhere(partile_context_t *ctx)
{
    partile_context_t *ref = NULL;
    assert_int_equal(partile_context_create("reference", 0, &ref), 0);
    uint64_t rng = fresh_seed();
    for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++)
        for (int periodic = 0; periodic <= 1; periodic++) {
            problem P = make_problem(ref, 3, periodic, 5, 700, 0, &rng);
            const size_t n = P.n;
            int64_t ncells;
            partile_grid_cell_count(&P.g, &ncells);
            for (int variant = 0; variant < 6; variant++) {
                run_opts o = { shape, variant % 2, variant == 5, variant / 2 == 1, 1,
                               variant == 4 ? PARTILE_MASS_RELAXED : PARTILE_MASS_BITWISE,
                               variant == 2 || variant == 3 ? PARTILE_MASS_FMA_PER_CELL
                                                            : PARTILE_MASS_TILES,
                               PARTILE_MASS_FP64, 0 };
                const size_t k = (size_t)(su_uniform(&rng) * (double)(n - 2)) + 1;
                double keep = P.x[n + k];
                P.x[n + k] = NAN;
                expect_refused(ctx, ref, &P, &o, "a NaN position");
                P.x[n + k] = periodic ? INFINITY : P.g.lower[1] - 0.25;
                expect_refused(ctx, ref, &P, &o, "a position off the grid");
                P.x[n + k] = keep;
                if (o.kind && !o.use_bfield) {
                    keep = P.w[2 * n + k];
                    P.w[2 * n + k] = -INFINITY;
                    expect_refused(ctx, ref, &P, &o, "a non-finite omega");
                    P.w[2 * n + k] = keep;
                }
                /* the first and last particles swapped (different cells) */
                for (int a = 0; a < 3; a++) {
                    const double t = P.x[a * n];
                    P.x[a * n] = P.x[a * n + n - 1];
                    P.x[a * n + n - 1] = t;
                }
                expect_refused(ctx, ref, &P, &o, "an unsorted pair");
                for (int a = 0; a < 3; a++) {
                    const double t = P.x[a * n];
                    P.x[a * n] = P.x[a * n + n - 1];
                    P.x[a * n + n - 1] = t;
                }
                /* cell lists whose ranges leave [0, n): pass 1 must not walk them */
                const int64_t last = P.off[ncells], mid = P.off[ncells / 2];
                P.off[ncells] = (int64_t)n + 4096;
                expect_refused(ctx, ref, &P, &o, "a cell list ending past n");
                P.off[ncells] = last;
                P.off[ncells / 2] = (int64_t)n + 100000;
                expect_refused(ctx, ref, &P, &o, "a cell list not monotone");
                P.off[ncells / 2] = mid;
            }
            free_problem(&P);
        }
    partile_context_destroy(ref);
}

GPU_TEST(bitwise, all_bitwise(ctx))
GPU_TEST(special, special_cases(ctx))
GPU_TEST(many_cells, many_cells_on(ctx))
GPU_TEST(relaxed, relaxed_and_atomic(ctx))
GPU_TEST(bad_input, errors(ctx))
GPU_TEST(refused, refused_everywhere(ctx))
GPU_TEST(tf32_tiles, tf32(ctx))
GPU_TEST(fp32_pos, fp32_positions(ctx))

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bitwise_cuda), cmocka_unit_test(special_cuda),
        cmocka_unit_test(many_cells_cuda), cmocka_unit_test(many_cells_hip),
        cmocka_unit_test(relaxed_cuda), cmocka_unit_test(bad_input_cuda),
        cmocka_unit_test(tf32_tiles_cuda), cmocka_unit_test(refused_cuda),
        cmocka_unit_test(bitwise_hip),  cmocka_unit_test(special_hip),
        cmocka_unit_test(relaxed_hip),  cmocka_unit_test(bad_input_hip),
        cmocka_unit_test(tf32_tiles_hip),  cmocka_unit_test(refused_hip),
        cmocka_unit_test(fp32_pos_cuda),   cmocka_unit_test(fp32_pos_hip),
    };
    GPU_TEST_MAIN(tests);
}
