/* Bit arithmetic of run aggregation (backends/gpu/sort_gpu.inc): given the
 * ballot of run heads (bit l set when lane l starts a run of equal keys),
 * the run of `lane` is lanes [*start, *end). Plain C so that a CPU test
 * (tests/test_run_bounds.c) checks it for 32- and 64-lane warps. */
#ifndef PARTILE_GPU_RUN_BOUNDS_H
#define PARTILE_GPU_RUN_BOUNDS_H

#include "common/portable.h"

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define PARTILE_CLZLL(x) __clzll((long long)(x))
#define PARTILE_FFSLL(x) __ffsll((long long)(x))
#else
#define PARTILE_CLZLL(x) __builtin_clzll(x)
#define PARTILE_FFSLL(x) __builtin_ffsll((long long)(x))
#endif

/* heads must have bit 0 set (lane 0 always starts a run). */
static inline PARTILE_HD void partile_run_bounds(unsigned long long heads, int lane,
                                                 int warp_size, int *start, int *end)
{
    /* the run starts at the highest head at or below the lane... */
    const unsigned long long upto = lane == 63 ? ~0ull : ((2ull << lane) - 1);
    *start = 63 - PARTILE_CLZLL(heads & upto);
    /* ...and ends before the next head above it */
    const unsigned long long above = heads & ~upto;
    *end = above ? PARTILE_FFSLL(above) - 1 : warp_size;
}

#endif
