/* Mass-matrix assembly on HIP: the kernels and launch code written once in
 * backends/gpu/mass_*.inc, with the f64 16x16x4 MFMA as the tile engine
 * (engine 0) and the f32 16x16x4 MFMA for the TF32 precision (engine 1:
 * FP32 inputs, at least TF32's accuracy, on gfx90a and gfx940 alike).
 * Compiled and disassembled here; unverified on AMD hardware. */
#define PARTILE_GPU_ENTRY(name) partile_hip_##name
#include "backends/gpu/dialect.h"
#include "backends/gpu/particles_entry.h"
#include "backends/hip/mma_hip.h"
#include "backends/gpu/mass_device.inc"

#include "backends/hip/mass_tiles_f64.inc"

#define MASS_E f32_16x16x4
#define MASS_MT 16
#define MASS_NT 16
#define MASS_KT 4
#define MASS_TILE_BATCH 8
#define MASS_ACC_T float
#define MASS_IN(x) ((float)(x))
#include "backends/gpu/mass_tile.inc"

static mass_kernel_t mass_tile_kernel(int engine, int npts, int comps, int resident)
{
    return engine == 1 ? mass_tile_variant_f32_16x16x4(npts, comps, resident)
                       : mass_tile_variant_f64_16x16x4(npts, comps, resident);
}

#include "backends/gpu/mass_gpu.inc"
