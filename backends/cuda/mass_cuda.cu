/* Mass-matrix assembly on CUDA: the kernels and launch code written once in
 * backends/gpu/mass_*.inc, with three tile engines — f64 m8n8k4 (engine 0,
 * sm_80 on), f64 m16n8k16 (engine 1, sm_90), tf32 m16n8k8 with FP32
 * accumulators (engine 2, the TF32 precision). */
#define PARTILE_GPU_ENTRY(name) partile_cuda_##name
#include "backends/gpu/dialect.h"
#include "backends/gpu/particles_entry.h"
#include "backends/cuda/mma_cuda.h"
#include "backends/gpu/mass_device.inc"

#include "backends/cuda/mass_tiles_f64.inc"

#define MASS_E tf32_m16n8k8
#define MASS_MT 16
#define MASS_NT 8
#define MASS_KT 8
#define MASS_TILE_BATCH 8
#define MASS_ACC_T float
#define MASS_IN(x) tf32_m16n8k8_in((float)(x))
#include "backends/gpu/mass_tile.inc"

static mass_kernel_t mass_tile_kernel(int engine, int npts, int comps, int resident)
{
    return engine == 2   ? mass_tile_variant_tf32_m16n8k8(npts, comps, resident)
           : engine == 1 ? mass_tile_variant_f64_m16n8k16(npts, comps, resident)
                         : mass_tile_variant_f64_m8n8k4(npts, comps, resident);
}

#include "backends/gpu/mass_gpu.inc"
