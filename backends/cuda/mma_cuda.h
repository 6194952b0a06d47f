/* The CUDA tile engine: one mma.sync per tile. Register forms and the
 * instruction wrappers; layouts are in mma_layout.h. The sm_90-only FP64
 * shapes trap if ever reached on an older device (the host never launches
 * them there: shape_available checks the compute capability). */
#ifndef PARTILE_CUDA_MMA_CUDA_H
#define PARTILE_CUDA_MMA_CUDA_H

#include <stdint.h>

#include "backends/gpu/dialect.h"
#include "backends/cuda/mma_layout.h"
#include "common/fp_formats.h"

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define PARTILE_SM90_F64 1
#else
#define PARTILE_SM90_F64 0
#endif

typedef double f64_in_t;
PARTILE_DEVICE double f64_in(double x) { return x; }

#define f64_m8n8k4_in_t f64_in_t
#define f64_m8n8k4_in f64_in
PARTILE_DEVICE void f64_m8n8k4_mma(double *d, const double *a, const double *b)
{
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 "
                 "{%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a[0]), "d"(b[0]));
}

#define f64_m16n8k4_in_t f64_in_t
#define f64_m16n8k4_in f64_in
PARTILE_DEVICE void f64_m16n8k4_mma(double *d, const double *a, const double *b)
{
#if PARTILE_SM90_F64
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 "
                 "{%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(b[0]));
#else
    (void)d; (void)a; (void)b;
    __trap();
#endif
}

#define f64_m16n8k8_in_t f64_in_t
#define f64_m16n8k8_in f64_in
PARTILE_DEVICE void f64_m16n8k8_mma(double *d, const double *a, const double *b)
{
#if PARTILE_SM90_F64
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#else
    (void)d; (void)a; (void)b;
    __trap();
#endif
}

#define f64_m16n8k16_in_t f64_in_t
#define f64_m16n8k16_in f64_in
PARTILE_DEVICE void f64_m16n8k16_mma(double *d, const double *a, const double *b)
{
#if PARTILE_SM90_F64
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, "
                 "{%0,%1,%2,%3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]),
                   "d"(a[6]), "d"(a[7]), "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
#else
    (void)d; (void)a; (void)b;
    __trap();
#endif
}

/* TF32: rounded to nearest, ties away (cvt.rna), passed as raw bits: for
 * finite x the shared rule's bits (partile_round_tf32, which the reference
 * uses), in one instruction where the rule in integers took five (the TF32
 * mass tiles 1-4 % faster, H100, bench/RESULTS.md 2026-12-07). A NaN input
 * gives a NaN tile result either way. */
typedef uint32_t tf32_m16n8k8_in_t;
PARTILE_DEVICE uint32_t tf32_m16n8k8_in(float x)
{
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}
PARTILE_DEVICE void tf32_m16n8k8_mma(float *d, const uint32_t *a, const uint32_t *b)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* Two 16-bit elements per register, the lower index in the low half. */
PARTILE_DEVICE uint32_t pack_half2(uint16_t lo, uint16_t hi)
{
    return (uint32_t)lo | ((uint32_t)hi << 16);
}

#define PARTILE_MMA_M16N8K16_HALF(S, TYPE)                                           \
    PARTILE_DEVICE void S##_mma(float *d, const uint16_t *a, const uint16_t *b)      \
    {                                                                                \
        uint32_t ra[4], rb[2];                                                       \
        _Pragma("unroll") for (int i = 0; i < 4; i++) ra[i] =                        \
            pack_half2(a[2 * i], a[2 * i + 1]);                                      \
        _Pragma("unroll") for (int i = 0; i < 2; i++) rb[i] =                        \
            pack_half2(b[2 * i], b[2 * i + 1]);                                      \
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TYPE "." TYPE ".f32 "  \
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"         \
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                \
                     : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]),   \
                       "r"(rb[1]));                                                  \
    }

typedef uint16_t f16_m16n8k16_in_t;
PARTILE_DEVICE uint16_t f16_m16n8k16_in(float x) { return partile_float_to_fp16(x); }
PARTILE_MMA_M16N8K16_HALF(f16_m16n8k16, "f16")

typedef uint16_t bf16_m16n8k16_in_t;
PARTILE_DEVICE uint16_t bf16_m16n8k16_in(float x) { return partile_float_to_bf16(x); }
PARTILE_MMA_M16N8K16_HALF(bf16_m16n8k16, "bf16")

#endif
