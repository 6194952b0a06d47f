/* Qualifiers that let one inline function compile under gcc, nvcc and hipcc.
 * Every floating-point formula shared between backends is written once with
 * PARTILE_HD, so all backends evaluate it identically (DESIGN.md §4). */
#ifndef PARTILE_COMMON_PORTABLE_H
#define PARTILE_COMMON_PORTABLE_H

#if defined(__CUDACC__) || defined(__HIPCC__)
#define PARTILE_HD __host__ __device__
#else
#define PARTILE_HD
#endif

/* Unroll the next loop in device code (its trip count a constant once
 * inlined); nothing for host compilers, which do not know the pragma. */
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define PARTILE_UNROLL _Pragma("unroll")
#else
#define PARTILE_UNROLL
#endif

#endif
