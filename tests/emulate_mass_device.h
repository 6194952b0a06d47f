/* The device part of backends/gpu/mass_device.inc (cut by
 * tests/device_part.awk) compiled as host C++ for the mass-matrix
 * emulation tests: emulate_mass_check.cc and emulate_mass_reduce.cc run
 * single-thread functions of it, and its warp code is compiled but must
 * not run; emulate_mass_tile.cc defines EMU_MASS_WARPS_RUN and its own
 * warp primitives first, and runs the kernels. */
#ifndef PARTILE_TESTS_EMULATE_MASS_DEVICE_H
#define PARTILE_TESTS_EMULATE_MASS_DEVICE_H

#include <cstdio>
#include <cstdlib>

#include "emulate_gpu.h"

#ifndef EMU_MASS_WARPS_RUN
/* Shims for warp code that these tests compile but never run. */
#define PARTILE_BALLOT(x) emu_not_run<unsigned long long>()
#define PARTILE_SYNC_WARP() emu_not_run<int>()
template <typename T> static T emu_not_run()
{
    fprintf(stderr, "a warp primitive ran in a test that runs none\n");
    exit(2);
}
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
#endif

EMU_DEVICE_CODE_BEGIN
/* each cut file closes its include guard, so the full files named by the
 * next one's #include are skipped */
#include "gpu_common_device.inc"
#include "transfer_common_device.inc"
#include "mass_device_device.inc"
EMU_DEVICE_CODE_END
#ifndef EMU_MASS_WARPS_RUN
double mass_smem[1]; /* the per-cell kernels' dynamic shared memory: not run */
#endif

/* Pass 2 over [0, total) as the kernel of (TSC, COMPS) runs it: in 64-bit
 * indices if wide, else (where mass_reduce_fits_int allows it, as on the
 * GPU) in int. Returns whether it ran in int. */
[[maybe_unused]] static int run_reduce(const mass_args &m, int tsc, long long plane0,
                                       long long total, long long grid_cells, long long entries,
                                       double *sums, int wide)
{
    const int narrow = !wide && mass_reduce_fits_int(&m, total, grid_cells, entries);
    for (long long idx = 0; idx < total; idx++) {
        if (narrow && !tsc && m.comps == 1) /* k_mass_reduce_cic1_i32 */
            mass_reduce_coupling_cic1_i32(&m, m.pair_index, (int)plane0, (int)idx, sums);
        else if (narrow)
            mass_reduce_one_i32(&m, m.pair_index, (int)plane0, (int)idx, sums, tsc, m.comps);
        else if (!tsc && m.comps == 1) /* k_mass_reduce_cic1_i64 */
            mass_reduce_coupling_cic1_i64(&m, m.pair_index, plane0, idx, sums);
        else
            mass_reduce_one_i64(&m, m.pair_index, plane0, idx, sums, tsc, m.comps);
    }
    return narrow;
}

#endif
