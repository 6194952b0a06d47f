/* The small vendor switch for kernel code written once for CUDA and HIP
 * (Ginkgo's common/cuda_hip idea): only data and spellings differ. */
#ifndef PARTILE_GPU_DIALECT_H
#define PARTILE_GPU_DIALECT_H

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define PARTILE_WARP_SIZE 64 /* CDNA wavefront */
#define PARTILE_VENDOR "hip"
#elif defined(__CUDACC__)
#include <cuda_runtime.h>
#define PARTILE_WARP_SIZE 32
#define PARTILE_VENDOR "cuda"
#else
#error "backends/gpu is compiled by nvcc or hipcc only"
#endif

#define PARTILE_DEVICE static __device__ __forceinline__

#endif
