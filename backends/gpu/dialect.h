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

#include <stdlib.h>

#include "common/error.h"

#define PARTILE_DEVICE static __device__ __forceinline__

/* Runtime API spellings, so launch code is written once too. */
#if defined(__HIPCC__)
#define gpuStream_t hipStream_t
#define gpuError_t hipError_t
#define gpuSuccess hipSuccess
#define gpuErrorMemoryAllocation hipErrorOutOfMemory
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuHostMalloc(p, bytes) hipHostMalloc((p), (bytes), hipHostMallocDefault)
#define gpuGetDevice hipGetDevice
#define gpuDeviceGetAttribute hipDeviceGetAttribute
#define gpuDeviceAttr hipDeviceAttribute_t
#define gpuDevAttrSharedPerSM hipDeviceAttributeMaxSharedMemoryPerMultiprocessor
#define gpuDevAttrSharedPerBlock hipDeviceAttributeMaxSharedMemoryPerBlock
#define gpuFreeHost hipHostFree
#define gpuMemsetAsync hipMemsetAsync
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuGetLastError hipGetLastError
#define gpuGetErrorString hipGetErrorString
#define gpuGetErrorName hipGetErrorName
#define gpuFuncAttributes hipFuncAttributes
#define gpuFuncGetAttributes hipFuncGetAttributes
#define PARTILE_SHFL_UP(v, d) __shfl_up((v), (d))
#define PARTILE_SHFL(v, src) __shfl((v), (src))
#define PARTILE_SHFL_XOR(v, m) __shfl_xor((v), (m))
#define PARTILE_GRID_CONSTANT
#define PARTILE_BALLOT(pred) ((unsigned long long)__ballot(pred))
/* A wavefront runs in lockstep; order its LDS accesses (unverified on AMD
 * hardware). */
#define PARTILE_SYNC_WARP()                                                     \
    do {                                                                        \
        __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "wavefront");                  \
        __builtin_amdgcn_wave_barrier();                                        \
    } while (0)
/* CDNA: 64 KiB of LDS per workgroup, always available, the kernel's static
 * arrays included. */
#define PARTILE_MAX_DYNAMIC_SHARED (64 * 1024)
#define PARTILE_BLOCK_SHARED_LIMIT (64 * 1024)
#define PARTILE_SET_DYNAMIC_SHARED(kernel, bytes) hipSuccess
#define PARTILE_PREFER_SHARED(kernel) hipSuccess
#else
#define gpuStream_t cudaStream_t
#define gpuError_t cudaError_t
#define gpuSuccess cudaSuccess
#define gpuErrorMemoryAllocation cudaErrorMemoryAllocation
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuHostMalloc(p, bytes) cudaMallocHost((p), (bytes))
#define gpuGetDevice cudaGetDevice
#define gpuDeviceGetAttribute cudaDeviceGetAttribute
#define gpuDeviceAttr cudaDeviceAttr
#define gpuDevAttrSharedPerSM cudaDevAttrMaxSharedMemoryPerMultiprocessor
#define gpuDevAttrSharedPerBlock cudaDevAttrMaxSharedMemoryPerBlockOptin
#define gpuFreeHost cudaFreeHost
#define gpuMemsetAsync cudaMemsetAsync
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuGetLastError cudaGetLastError
#define gpuFuncAttributes cudaFuncAttributes
#define gpuFuncGetAttributes cudaFuncGetAttributes
#define gpuGetErrorString cudaGetErrorString
#define gpuGetErrorName cudaGetErrorName
#define PARTILE_SHFL_UP(v, d) __shfl_up_sync(0xffffffffu, (v), (d))
#define PARTILE_SHFL(v, src) __shfl_sync(0xffffffffu, (v), (src))
#define PARTILE_SHFL_XOR(v, m) __shfl_xor_sync(0xffffffffu, (v), (m))
/* a kernel parameter whose address is taken, read in place (no local copy) */
#define PARTILE_GRID_CONSTANT __grid_constant__
#define PARTILE_BALLOT(pred) ((unsigned long long)__ballot_sync(0xffffffffu, (pred)))
#define PARTILE_SYNC_WARP() __syncwarp()
/* sm_80 and sm_90 give a block up to 163 / 227 KiB once asked for, static
 * arrays included (sm_86, sm_89 and sm_120, which run the sm_80 code, only
 * 99 KiB: partile_block_shared). */
#define PARTILE_MAX_DYNAMIC_SHARED (160 * 1024)
#define PARTILE_BLOCK_SHARED_LIMIT (163 * 1024)
#define PARTILE_SET_DYNAMIC_SHARED(kernel, bytes)                               \
    cudaFuncSetAttribute((const void *)(kernel), cudaFuncAttributeMaxDynamicSharedMemorySize, \
                         (int)(bytes))
/* The largest shared-memory carveout, so that more blocks of a kernel with
 * big per-warp staging fit on an SM (the default may leave 64 KiB). */
#define PARTILE_PREFER_SHARED(kernel)                                           \
    cudaFuncSetAttribute((const void *)(kernel),                                \
                         cudaFuncAttributePreferredSharedMemoryCarveout,        \
                         (int)cudaSharedmemCarveoutMaxShared)
#endif

/* An attribute of the current device; 0 if the query fails (its error
 * cleared: not the next launch check's). */
static inline int partile_device_attribute(gpuDeviceAttr attr)
{
    int dev = 0, v = 0;
    if (gpuGetDevice(&dev) != gpuSuccess || gpuDeviceGetAttribute(&v, attr, dev) != gpuSuccess) {
        (void)gpuGetLastError();
        return 0;
    }
    return v;
}

/* Shared memory (LDS) of one multiprocessor, bytes; 0 if the query fails. */
static inline int partile_shared_per_sm(void)
{
    return partile_device_attribute(gpuDevAttrSharedPerSM);
}

/* The dynamic shared memory a block of a kernel with static_bytes of its
 * own __shared__ arrays may have on the current device: what the device
 * allows a block (once asked for) less those, at most
 * PARTILE_MAX_DYNAMIC_SHARED; 0 if the query fails. A kernel sized for
 * PARTILE_MAX_DYNAMIC_SHARED checks against this before it launches, and
 * takes another path where it is less (sm_86/89/120: 99 KiB a block).
 * PARTILE_BLOCK_SHARED_LIMIT in the environment (bytes) lowers the device's
 * figure, so that those paths run, and are tested, on a larger GPU. */
static inline size_t partile_block_shared(size_t static_bytes)
{
    int v = partile_device_attribute(gpuDevAttrSharedPerBlock);
    if (v == 0)
        return 0;
    const char *limit = getenv("PARTILE_BLOCK_SHARED_LIMIT");
    if (limit && *limit) {
        const long long l = strtoll(limit, NULL, 10);
        v = l > 0 && l < v ? (int)l : v;
    }
    const long long room = (long long)v - (long long)static_bytes;
    return room <= 0 ? 0 : room < PARTILE_MAX_DYNAMIC_SHARED ? (size_t)room
                                                             : (size_t)PARTILE_MAX_DYNAMIC_SHARED;
}

/* Copy 8 bytes from global to shared memory without a register round trip
 * (sm_80+: cp.async), so that all of a thread's copies are in flight at
 * once; PARTILE_ASYNC_WAIT waits for the calling thread's copies, and a
 * __syncthreads after it makes them visible to the block. Elsewhere (HIP,
 * older CUDA) a plain copy: the same values; a loop of them is unrolled
 * (PARTILE_UNROLL_COPIES) so that several loads are in flight before their
 * stores (unverified on AMD hardware). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define PARTILE_ASYNC_COPY8(dst, src)                                           \
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(           \
                     (unsigned)__cvta_generic_to_shared(dst)),                 \
                 "l"(src)                                                       \
                 : "memory")
#define PARTILE_ASYNC_WAIT() asm volatile("cp.async.wait_all;\n" ::: "memory")
#define PARTILE_UNROLL_COPIES
#else
#define PARTILE_ASYNC_COPY8(dst, src) (void)(*(dst) = *(src))
#define PARTILE_ASYNC_WAIT() ((void)0)
#define PARTILE_UNROLL_COPIES _Pragma("unroll 8")
#endif

/* Check a runtime call; keep the vendor's message; clear a non-sticky
 * error so the next call does not see it. */
#define PARTILE_GPU_TRY(call)                                                   \
    do {                                                                        \
        gpuError_t err_ = (call);                                               \
        if (err_ != gpuSuccess)                                                 \
            return (void)gpuGetLastError(),                                     \
                   partile_fail(err_ == gpuErrorMemoryAllocation                \
                                    ? PARTILE_ERROR_OUT_OF_MEMORY               \
                                    : PARTILE_ERROR_DEVICE,                     \
                                "%s: %s (%s)", #call, gpuGetErrorString(err_),  \
                                gpuGetErrorName(err_));                         \
    } while (0)

#endif
