/* Binning, sorting, deposit and gather on CUDA: the kernels and launch code written once in
 * backends/gpu/sort_gpu.inc and deposit_gpu.inc, instantiated with CUDA's entry-point names. */
#define PARTILE_GPU_ENTRY(name) partile_cuda_##name
#include "backends/gpu/dialect.h"
#include "backends/gpu/particles_entry.h"
#include "backends/gpu/sort_gpu.inc"
#include "backends/gpu/deposit_gpu.inc"
#include "backends/gpu/pairs_gpu.inc"
#include "backends/gpu/apply_gpu.inc"
