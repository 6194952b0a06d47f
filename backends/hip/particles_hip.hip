/* Binning, sorting, deposit and gather on HIP: the kernels and launch code written once in
 * backends/gpu/sort_gpu.inc and deposit_gpu.inc, instantiated with HIP's entry-point names.
 * Compiled and disassembled here; unverified on AMD hardware. */
#define PARTILE_GPU_ENTRY(name) partile_hip_##name
#include "backends/gpu/dialect.h"
#include "backends/gpu/particles_entry.h"
#include "backends/gpu/sort_gpu.inc"
#include "backends/gpu/deposit_gpu.inc"
#include "backends/gpu/pairs_gpu.inc"
#include "backends/gpu/apply_gpu.inc"
