/* Helpers of the CUDA benchmark drivers: abort on a failed call with its
 * message, and random data generated on the device. */
#ifndef PARTILE_BENCH_CUDA_H
#define PARTILE_BENCH_CUDA_H

#include <stdio.h>
#include <stdlib.h>

#include "bench/bench_util.h"

#define CK(call)                                                                        \
    do {                                                                                \
        cudaError_t e_ = (call);                                                        \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,                \
                    cudaGetErrorString(e_));                                            \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)
#define PK(call)                                                                        \
    do {                                                                                \
        int s_ = (call);                                                                \
        if (s_ < 0) {                                                                   \
            fprintf(stderr, "%s:%d %s: %s: %s\n", __FILE__, __LINE__, #call,            \
                    partile_status_string(s_), partile_last_error_detail());            \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

/* splitmix64's finaliser */
static __device__ unsigned long long mix(unsigned long long z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* x[i] uniform in [lo, lo + len), a fixed function of (seed, i) */
static __global__ void fill_uniform(long long n, double *x, double lo, double len,
                                    unsigned long long seed)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        x[i] = lo + len * ((double)(mix(seed + 0x9e3779b97f4a7c15ull * (i + 1)) >> 11) * 0x1p-53);
}

#endif
