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

#endif
