/* The device part of backends/gpu/mass_device.inc (cut by
 * tests/device_part.awk) compiled as host C++ for the mass-matrix
 * emulation tests (emulate_mass_check.cc, emulate_mass_reduce.cc), which
 * run single-thread functions of it; its warp code is compiled but must
 * not run. */
#ifndef PARTILE_TESTS_EMULATE_MASS_DEVICE_H
#define PARTILE_TESTS_EMULATE_MASS_DEVICE_H

#include <cstdio>
#include <cstdlib>

#include "emulate_gpu.h"

/* Shims for warp code that these tests compile but never run. */
#define PARTILE_BALLOT(x) emu_not_run<unsigned long long>()
#define PARTILE_SYNC_WARP() emu_not_run<int>()
template <typename T> static T emu_not_run()
{
    fprintf(stderr, "a warp primitive ran in a test that runs none\n");
    exit(2);
}
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }

EMU_DEVICE_CODE_BEGIN
/* each cut file closes its include guard, so the full files named by the
 * next one's #include are skipped */
#include "gpu_common_device.inc"
#include "transfer_common_device.inc"
#include "mass_device_device.inc"
EMU_DEVICE_CODE_END
double mass_smem[1]; /* the per-cell kernels' dynamic shared memory: not run */

#endif
