/* The tile conformance checker behind `partile check` and the GPU tests, in
 * the spirit of dav1d's checkasm: run an engine and the reference on the same
 * fresh random input, compare, and print the differing elements. */
#ifndef PARTILE_TOOLS_CONFORMANCE_H
#define PARTILE_TOOLS_CONFORMANCE_H

#include <stdint.h>
#include <stdio.h>

#include "partile/partile.h"

/* FP32-accumulating tiles (TF32, FP16, BF16, FP32 inputs) must satisfy
 * |d - ref| <= PARTILE_CHECK_F32_TOL * (|c| + sum_k |a_k b_k|)
 * (the hardware's accumulation order and internal rounding are not the
 * reference's); FP64 tiles must equal the reference bit for bit. */
#define PARTILE_CHECK_F32_TOL (1.0 / 32768.0) /* 2^-15 */

typedef struct partile_check_result {
    long long compared;   /* output elements compared */
    long long mismatches; /* not bitwise equal (FP64) / beyond tolerance */
    long long unwritten;  /* still holding the poison pattern */
    long long guard_hits; /* writes outside the output (guard zones) */
    double max_ulp;       /* FP64: largest ULP distance seen */
    double max_rel;       /* largest |d - ref| / (|c| + sum |a b|) */
    int cases;            /* problem sizes run */
} partile_check_result_t;

/* Checks one shape of `ctx`'s engine against the reference engine (or, when
 * ctx is the reference backend, against the checker's own naive fma chain).
 * Up to max_report mismatches are printed to log. Returns a partile status
 * (negative if an API call failed); the verdict is in *result. */
int partile_check_shape(partile_context_t *ctx, const partile_mma_shape_t *shape,
                        uint64_t seed, int max_report, FILE *log,
                        partile_check_result_t *result);

/* Elements of poison (all-ones bytes, a NaN in FP64 and FP32) on each side
 * of every output buffer. */
#define PARTILE_CHECK_GUARD 64

/* The comparison behind partile_check_shape, exposed so that tests can show
 * it catches a planted difference: got and want hold batch·rows·cols
 * accumulator elements with PARTILE_CHECK_GUARD elements before and after;
 * a, b, c are the inputs (for the tolerance scale). Adds to *result. */
void partile_check_compare(const partile_tile_t *tile, size_t batch, int rows, int cols,
                           int depth, const void *a, const void *b, const void *c,
                           const unsigned char *got, const unsigned char *want,
                           int max_report, FILE *log, partile_check_result_t *result);

/* 1 if the result passes (no mismatch, nothing unwritten, guards intact). */
int partile_check_passed(const partile_check_result_t *result);

#endif
