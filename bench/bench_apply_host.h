/* Host SpMV and timing helpers of bench/bench_apply.cu (bench_apply_host.c). */
#ifndef PARTILE_BENCH_APPLY_HOST_H
#define PARTILE_BENCH_APPLY_HOST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* y = A x, A in CSR (b = 1) or BSR with b×b blocks (b = 3), int64 indices. */
void bench_spmv_host(int64_t rows, int b, const int64_t *ip, const int64_t *ix, const double *v,
                     const double *x, double *y);
void bench_spmv_host_f32(int64_t rows, int b, const int64_t *ip, const int64_t *ix, const float *v,
                         const float *x, float *y);
double bench_wtime(void);
int bench_threads(void);
/* Best of five 1 GiB copies, bytes read + written per second; < 0 on failure. */
double bench_host_copy_bandwidth(void);

#ifdef __cplusplus
}
#endif
#endif
