#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/conformance.h"
#include "common/fp_formats.h"

/* splitmix64: small, seedable, the same sequence everywhere. */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Random finite value, sign and 52-bit mantissa random, binary exponent
 * uniform in [-span, span]: a wide range makes any change of summation
 * order visible in the last bits. */
static double wide_random(uint64_t *s, int span)
{
    uint64_t r = next_u64(s);
    int e = (int)(next_u64(s) % (uint64_t)(2 * span + 1)) - span;
    double m = 1.0 + (double)(r >> 12) * 0x1p-52;
    return ((r & 1) ? -m : m) * ldexp(1.0, e);
}

/* Exponent spans per input format: FP16 inputs must stay inside its range. */
static int input_span(partile_format_t f) { return f == PARTILE_FP64 ? 40 : f == PARTILE_FP16 ? 5 : 20; }
static int acc_span(partile_format_t f) { return f == PARTILE_FP64 ? 80 : 10; }

enum { GUARD = PARTILE_CHECK_GUARD };

static double ulp_distance(double x, double y)
{
    int64_t a, b;
    memcpy(&a, &x, 8);
    memcpy(&b, &y, 8);
    if (a < 0) a = INT64_MIN - a;
    if (b < 0) b = INT64_MIN - b;
    /* subtract as integers: near 2^63 a double cannot count single ULPs */
    uint64_t d = a > b ? (uint64_t)a - (uint64_t)b : (uint64_t)b - (uint64_t)a;
    return (double)d;
}

typedef struct problem {
    size_t batch;
    int rows, cols, depth;
} problem;

/* Sizes: one exact tile, then sizes that are not multiples of the tile in
 * any dimension, a zero depth (D = C), and a larger batch. */
static int problems_for(const partile_tile_t *t, problem *p)
{
    int n = 0;
    p[n++] = (problem){ 1, t->m, t->n, t->k };
    p[n++] = (problem){ 7, t->m + 3, t->n + 5, 3 * t->k + 1 };
    p[n++] = (problem){ 3, 2 * t->m - 1, 1, t->k - 1 > 0 ? t->k - 1 : 1 };
    p[n++] = (problem){ 2, 5, 3, 0 };
    p[n++] = (problem){ 61, 37, 29, 53 };
    return n;
}

/* The checker's own model of the reference, used to check the reference
 * backend itself: straight fma chain, zero-padded to a multiple of Kt. */
static void naive_mma(const partile_tile_t *t, const problem *p, const void *a,
                      const void *b, const void *c, void *d)
{
    int kpad = (p->depth + t->k - 1) / t->k * t->k;
    for (size_t q = 0; q < p->batch; q++)
        for (int i = 0; i < p->rows; i++)
            for (int j = 0; j < p->cols; j++) {
                size_t ia = q * p->rows * p->depth, ib = q * p->depth * p->cols,
                       ic = q * p->rows * p->cols + (size_t)i * p->cols + j;
                if (t->facc == PARTILE_FP64) {
                    double acc = ((const double *)c)[ic];
                    for (int k = 0; k < kpad; k++) {
                        double x = k < p->depth ? ((const double *)a)[ia + (size_t)i * p->depth + k] : 0;
                        double y = k < p->depth ? ((const double *)b)[ib + (size_t)k * p->cols + j] : 0;
                        acc = fma(x, y, acc);
                    }
                    ((double *)d)[ic] = acc;
                } else {
                    float acc = ((const float *)c)[ic];
                    for (int k = 0; k < kpad; k++) {
                        float x = k < p->depth ? ((const float *)a)[ia + (size_t)i * p->depth + k] : 0;
                        float y = k < p->depth ? ((const float *)b)[ib + (size_t)k * p->cols + j] : 0;
                        if (t->fin == PARTILE_TF32) {
                            x = partile_round_tf32(x), y = partile_round_tf32(y);
                        } else if (t->fin == PARTILE_FP16) {
                            x = partile_fp16_to_float(partile_float_to_fp16(x));
                            y = partile_fp16_to_float(partile_float_to_fp16(y));
                        } else if (t->fin == PARTILE_BF16) {
                            x = partile_bf16_to_float(partile_float_to_bf16(x));
                            y = partile_bf16_to_float(partile_float_to_bf16(y));
                        }
                        acc = fmaf(x, y, acc);
                    }
                    ((float *)d)[ic] = acc;
                }
            }
}

/* sum_k |a_k b_k| + |c| for entry (q, i, j): the scale of the tolerance. */
static double magnitude(const partile_tile_t *t, const problem *p, const void *a,
                        const void *b, const void *c, size_t q, int i, int j)
{
    size_t ia = q * p->rows * p->depth, ib = q * p->depth * p->cols,
           ic = q * p->rows * p->cols + (size_t)i * p->cols + j;
    int f64 = t->facc == PARTILE_FP64;
    double s = fabs(f64 ? ((const double *)c)[ic] : ((const float *)c)[ic]);
    for (int k = 0; k < p->depth; k++) {
        size_t xa = ia + (size_t)i * p->depth + k, xb = ib + (size_t)k * p->cols + j;
        double x = f64 ? ((const double *)a)[xa] : ((const float *)a)[xa];
        double y = f64 ? ((const double *)b)[xb] : ((const float *)b)[xb];
        s += fabs(x * y);
    }
    return s;
}

static int is_poison(const unsigned char *p, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        if (p[i] != 0xff)
            return 0;
    return 1;
}

/* Compares an engine's output (got) with the reference's (want), both
 * with GUARD poisoned elements on each side, and tallies into r. */
void partile_check_compare(const partile_tile_t *t, size_t batch, int rows, int cols,
                           int depth, const void *ha, const void *hb, const void *hc,
                           const unsigned char *hd, const unsigned char *hr,
                           int max_report, FILE *log, partile_check_result_t *r)
{
    const problem pr = { batch, rows, cols, depth };
    const size_t eacc = t->facc == PARTILE_FP64 ? 8 : 4, nc = batch * rows * cols;
    for (size_t g = 0; g < GUARD; g++) {
        r->guard_hits += !is_poison(hd + g * eacc, eacc);
        r->guard_hits += !is_poison(hd + (GUARD + nc + g) * eacc, eacc);
    }
    for (size_t x = 0; x < nc; x++) {
        const unsigned char *got = hd + (GUARD + x) * eacc, *want = hr + (GUARD + x) * eacc;
        size_t q = x / ((size_t)rows * cols);
        int i = (int)(x / cols % rows), j = (int)(x % cols);
        r->compared++;
        if (is_poison(got, eacc)) {
            r->unwritten++;
            if (r->unwritten + r->mismatches <= max_report)
                fprintf(log, "    [%zu](%d,%d) never written\n", q, i, j);
            continue;
        }
        double g, w;
        if (eacc == 8) {
            memcpy(&g, got, 8);
            memcpy(&w, want, 8);
        } else {
            float gf, wf;
            memcpy(&gf, got, 4);
            memcpy(&wf, want, 4);
            g = gf, w = wf;
        }
        double scale = magnitude(t, &pr, ha, hb, hc, q, i, j);
        double rel = scale > 0 ? fabs(g - w) / scale : fabs(g - w);
        if (rel > r->max_rel || isnan(rel))
            r->max_rel = isnan(rel) ? INFINITY : rel;
        int bad;
        if (t->facc == PARTILE_FP64) {
            double u = ulp_distance(g, w);
            if (u > r->max_ulp)
                r->max_ulp = u;
            bad = memcmp(got, want, 8) != 0;
        } else {
            bad = !(fabs(g - w) <= PARTILE_CHECK_F32_TOL * scale);
        }
        if (!bad)
            continue;
        r->mismatches++;
        if (r->unwritten + r->mismatches > max_report)
            continue;
        if (eacc == 8) {
            uint64_t gb, wb;
            memcpy(&gb, got, 8);
            memcpy(&wb, want, 8);
            fprintf(log,
                    "    [%zu](%d,%d) batch %zux%dx%dx%d: got %a (0x%016llx), reference %a "
                    "(0x%016llx), %.0f ulp\n",
                    q, i, j, batch, rows, cols, depth, g, (unsigned long long)gb, w,
                    (unsigned long long)wb, ulp_distance(g, w));
        } else {
            uint32_t gb, wb;
            memcpy(&gb, got, 4);
            memcpy(&wb, want, 4);
            fprintf(log,
                    "    [%zu](%d,%d) batch %zux%dx%dx%d: got %a (0x%08x), reference %a "
                    "(0x%08x), |diff|/scale %.3g > %.3g\n",
                    q, i, j, batch, rows, cols, depth, g, gb, w, wb, rel,
                    PARTILE_CHECK_F32_TOL);
        }
    }
}

#define TRY(call)                                                              \
    do {                                                                       \
        status = (call);                                                       \
        if (status < 0)                                                        \
            goto done;                                                         \
    } while (0)

static int run_problem(partile_context_t *ctx, partile_context_t *ref,
                       const partile_mma_shape_t *shape, const problem *p, uint64_t *rng,
                       int max_report, FILE *log, partile_check_result_t *r)
{
    const partile_tile_t *t = &shape->tile;
    const size_t ein = t->fin == PARTILE_FP64 ? 8 : 4, eacc = t->facc == PARTILE_FP64 ? 8 : 4;
    const size_t na = p->batch * p->rows * p->depth, nb = p->batch * p->depth * p->cols,
                 nc = p->batch * p->rows * p->cols;
    const size_t out_bytes = (nc + 2 * GUARD) * eacc;
    int status = 0;
    void *ha = malloc(na * ein + 8), *hb = malloc(nb * ein + 8), *hc = malloc(nc * eacc + 8);
    unsigned char *hd = malloc(out_bytes), *hr = malloc(out_bytes);
    void *da = NULL, *db = NULL, *dc = NULL;
    unsigned char *dd = NULL;
    if (!ha || !hb || !hc || !hd || !hr) {
        status = PARTILE_ERROR_OUT_OF_MEMORY;
        goto done;
    }
    for (size_t i = 0; i < na + nb + nc; i++) {
        int span = i < na + nb ? input_span(t->fin) : acc_span(t->facc);
        double v = wide_random(rng, span);
        void *base = i < na ? ha : i < na + nb ? hb : hc;
        size_t at = i < na ? i : i < na + nb ? i - na : i - na - nb;
        if ((i < na + nb ? ein : eacc) == 8)
            ((double *)base)[at] = v;
        else
            ((float *)base)[at] = (float)v;
    }
    /* Reference result, with guards, in host memory. */
    memset(hr, 0xff, out_bytes);
    if (ref)
        TRY(partile_mma_batched(ref, t, p->batch, p->rows, p->cols, p->depth, ha, hb, hc,
                                hr + GUARD * eacc));
    else
        naive_mma(t, p, ha, hb, hc, hr + GUARD * eacc);

    /* Engine result: inputs staged, output poisoned (all-ones bytes is a NaN
     * in both FP64 and FP32) including the guard zones. */
    TRY(partile_malloc(ctx, na * ein, &da));
    TRY(partile_malloc(ctx, nb * ein, &db));
    TRY(partile_malloc(ctx, nc * eacc, &dc));
    TRY(partile_malloc(ctx, out_bytes, (void **)&dd));
    TRY(partile_memcpy(ctx, da, ha, na * ein, PARTILE_COPY_HOST_TO_DEVICE));
    TRY(partile_memcpy(ctx, db, hb, nb * ein, PARTILE_COPY_HOST_TO_DEVICE));
    TRY(partile_memcpy(ctx, dc, hc, nc * eacc, PARTILE_COPY_HOST_TO_DEVICE));
    TRY(partile_memset(ctx, dd, 0xff, out_bytes));
    TRY(partile_mma_batched(ctx, t, p->batch, p->rows, p->cols, p->depth, da, db, dc,
                            dd + GUARD * eacc));
    TRY(partile_memcpy(ctx, hd, dd, out_bytes, PARTILE_COPY_DEVICE_TO_HOST));

    partile_check_compare(t, p->batch, p->rows, p->cols, p->depth, ha, hb, hc, hd, hr,
                          max_report, log, r);
    r->cases++;
done:
    partile_free(ctx, da);
    partile_free(ctx, db);
    partile_free(ctx, dc);
    partile_free(ctx, dd);
    free(ha);
    free(hb);
    free(hc);
    free(hd);
    free(hr);
    return status;
}

int partile_check_shape(partile_context_t *ctx, const partile_mma_shape_t *shape,
                        uint64_t seed, int max_report, FILE *log,
                        partile_check_result_t *result)
{
    memset(result, 0, sizeof *result);
    partile_context_t *ref = NULL;
    int status = 0;
    if (strcmp(partile_context_backend(ctx), "reference") != 0) {
        status = partile_context_create("reference", 0, &ref);
        if (status < 0)
            return status;
    }
    problem probs[8];
    int n = problems_for(&shape->tile, probs);
    uint64_t rng = seed ^ (0x51ed27a3u * (uint64_t)(shape->tile.m * 4096 + shape->tile.n * 64 +
                                                    shape->tile.k + 7 * shape->tile.fin));
    for (int i = 0; i < n && status >= 0; i++)
        status = run_problem(ctx, ref, shape, &probs[i], &rng, max_report, log, result);
    partile_context_destroy(ref);
    return status;
}

int partile_check_passed(const partile_check_result_t *r)
{
    return r->compared > 0 && r->mismatches == 0 && r->unwritten == 0 && r->guard_hits == 0;
}
