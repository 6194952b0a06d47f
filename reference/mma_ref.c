#include <math.h>
#include <stdint.h>

#include "reference/mma_ref.h"
#include "common/fp_formats.h"

/* An input element rounded to the tile's input format (exact in float). */
static float round_input(partile_format_t fin, float x)
{
    switch (fin) {
    case PARTILE_TF32: return partile_round_tf32(x);
    case PARTILE_FP16: return partile_fp16_to_float(partile_float_to_fp16(x));
    case PARTILE_BF16: return partile_bf16_to_float(partile_float_to_bf16(x));
    default: return x;
    }
}

static int padded_depth(int depth, int kt) { return (depth + kt - 1) / kt * kt; }

static void batch_f64(int rows, int cols, int depth, int kpad, const double *a,
                      const double *b, const double *c, double *d)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            double acc = c[(size_t)i * cols + j];
            for (int k = 0; k < kpad; k++) {
                double x = k < depth ? a[(size_t)i * depth + k] : 0.0;
                double y = k < depth ? b[(size_t)k * cols + j] : 0.0;
                acc = fma(x, y, acc);
            }
            d[(size_t)i * cols + j] = acc;
        }
}

/* Products of TF32/FP16/BF16 values are exact in float, so fmaf rounds once
 * per step, like an FP32 tensor-core accumulator would at best. */
static void batch_f32(partile_format_t fin, int rows, int cols, int depth, int kpad,
                      const float *a, const float *b, const float *c, float *d)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            float acc = c[(size_t)i * cols + j];
            for (int k = 0; k < kpad; k++) {
                float x = k < depth ? round_input(fin, a[(size_t)i * depth + k]) : 0.0f;
                float y = k < depth ? round_input(fin, b[(size_t)k * cols + j]) : 0.0f;
                acc = fmaf(x, y, acc);
            }
            d[(size_t)i * cols + j] = acc;
        }
}

int partile_mma_batched_ref(const partile_tile_t *tile, size_t batch, int rows,
                            int cols, int depth, const void *a, const void *b,
                            const void *c, void *d)
{
    const int kpad = padded_depth(depth, tile->k);
    const size_t sa = (size_t)rows * depth, sb = (size_t)depth * cols,
                 sc = (size_t)rows * cols;
    /* Each batch entry is independent: results do not depend on threads. */
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < (int64_t)batch; p++) {
        if (tile->facc == PARTILE_FP64)
            batch_f64(rows, cols, depth, kpad, (const double *)a + p * sa,
                      (const double *)b + p * sb, (const double *)c + p * sc,
                      (double *)d + p * sc);
        else
            batch_f32(tile->fin, rows, cols, depth, kpad, (const float *)a + p * sa,
                      (const float *)b + p * sb, (const float *)c + p * sc,
                      (float *)d + p * sc);
    }
    return 0;
}
