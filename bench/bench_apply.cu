/* Mass-matrix apply benchmark (issue #6), CUDA: y = M x on a 3-D periodic
 * grid (default 64^3) with uniformly random particles at ppc in {1, 2, 4,
 * 8, 16, 32, 64, 128}, CIC and TSC, scalar and tensor (ω per particle).
 * Per row: the relative error of matrix-free against assembled; GDofs/s
 * (grid values of y per second) and the fraction of the memory roofline
 * (bytes that must move over the copy bandwidth measured in this run) of
 *   - sparse-host: plain OpenMP CSR (scalar) / BSR 3×3 (tensor) SpMV over
 *     the arrays of partile_mass_export, FP64 and FP32 (host copy
 *     bandwidth as its roofline);
 *   - sparse-device: cuSPARSE SpMV (CSR, 32-bit indices; the tensor BSR
 *     expanded to scalar CSR), FP64 and FP32;
 *   - assembled-canonical-device: partile_mass_apply_assembled (FP64);
 *   - matrix-free-device: partile_mass_apply_matfree (FP64; its two paths,
 *     composed and fused, also timed directly) and _f32 (FP32 positions,
 *     charges, ω, x, y);
 *   - matrix-free-device by cell: partile_mass_apply_matfree with
 *     params.order = PARTILE_ORDER_BY_CELL (FP64; CIC only, whose 3-D grids
 *     take the by-cell deposit's two passes; TSC by cell takes the generic
 *     kernel and is not timed), bitwise against the reference's by-cell
 *     result where the reference runs (column bitc); for the tensor also
 *     with ω = β·B(x_p) from a node-centred B field (params.bfield, β 0.5;
 *     column mfcellB, checked in bitcB), whose first pass stages B's
 *     corners and forms ω per particle;
 * the assembly time (partile_mass_assemble on the CUDA context; on the
 * reference backend if CUDA has none, then said in the output), and the
 * break-even number of applications above which assembling pays:
 * t_assembly / (t_matfree − t_assembled_apply) (brkc: with the by-cell
 * matrix-free time; -1 in the JSON where it never pays). Bitwise checks: the two
 * matrix-free paths and the public call agree; against the reference
 * backend for n <= --ref-max. The sparse matrices' structure does not
 * depend on ppc, so the sparse rows are timed once per shape and kind (on
 * the first ppc's values) and repeated.
 * usage: bench_apply [--json FILE] [--side S] [--ppc LIST] [--ref-max N] [--budget S]
 *                    [--shapes cic|tsc|cic,tsc]
 * (--ppc: a comma-separated list of mean counts per cell, fractions allowed;
 * --budget: cases that would start later than S seconds in are skipped,
 * and say so). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#include <algorithm>

#include <cusparse.h>

#include "bench/bench_cuda.h"
#include "bench/bench_apply_host.h"

#define PARTILE_GPU_ENTRY(name) partile_cuda_##name
#include "backends/gpu/particles_entry.h"

#define CS(call)                                                                        \
    do {                                                                                \
        cusparseStatus_t s_ = (call);                                                   \
        if (s_ != CUSPARSE_STATUS_SUCCESS) {                                            \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,                \
                    cusparseGetErrorString(s_));                                        \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

/* x rounded to the nearest float, kept as double: positions the FP32
 * apply sees exactly, so both precisions bin every particle alike. */
static __global__ void round_to_float(long long n, double *x)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        x[i] = (double)(float)x[i];
}

static __global__ void to_float(long long n, const double *a, float *b)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        b[i] = (float)a[i];
}

typedef struct run_args {
    partile_mass_params_t p;
    size_t n;
    partile_vectors_t pos, posf, om, omf;
    int64_t *off;
    double *q, *x, *y, *storage, *bfield;
    float *qf, *xf, *yf;
} run_args;

static int do_matfree(partile_context_t *c, void *a_)
{
    run_args *a = (run_args *)a_;
    return partile_mass_apply_matfree(c, &a->p, a->n, &a->pos, a->off, a->q,
                                      a->p.kind && !a->p.bfield ? &a->om : NULL, a->x, a->y, NULL);
}
static int do_matfree_f32(partile_context_t *c, void *a_)
{
    run_args *a = (run_args *)a_;
    return partile_mass_apply_matfree_f32(c, &a->p, a->n, &a->posf, a->off, a->qf,
                                          a->p.kind ? &a->omf : NULL, a->xf, a->yf, NULL);
}
static int do_assembled(partile_context_t *c, void *a_)
{
    run_args *a = (run_args *)a_;
    return partile_mass_apply_assembled(c, &a->p, a->storage, a->x, a->y);
}
static int do_assemble(partile_context_t *c, void *a_)
{
    run_args *a = (run_args *)a_;
    return partile_mass_assemble(c, &a->p, a->n, &a->pos, a->off, a->q, a->p.kind ? &a->om : NULL,
                                 a->storage, NULL);
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* One direct path of the matrix-free apply, timed with events on stream. */
static double time_path(cudaStream_t stream, int sms, partile_gpu_workspace *ws, run_args *a,
                        int variant, int reps)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<double> t;
    for (int r = -1; r < reps; r++) {
        CK(cudaEventRecord(e0, stream));
        PK(partile_cuda_mass_apply_matfree(stream, sms, ws, &a->p, a->n, &a->pos, a->off, a->q,
                                           a->p.kind ? &a->om : NULL, a->x, a->y, NULL, variant));
        CK(cudaEventRecord(e1, stream));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 0)
            t.push_back(1e-3 * ms);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return median(t);
}

static double rel_err(const double *a, const double *b, size_t count)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < count; i++) {
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

/* The sparse rows of one shape and kind (timed once). */
typedef struct sparse_times {
    double host64, host32, dev64, dev32;     /* seconds */
    double hbytes64, hbytes32, dbytes64, dbytes32;
    double relerr_dev;                       /* cuSPARSE y against the canonical apply */
    int64_t nnz_scalar;
} sparse_times;

static sparse_times time_sparse(partile_context_t *ctx, cusparseHandle_t sp, cudaStream_t stream,
                                const run_args *a, const partile_mass_layout_t *L, int m,
                                const double *y_canonical)
{
    sparse_times s;
    memset(&s, 0, sizeof s);
    const partile_grid_t *g = a->p.grid;
    const int64_t P = L->points, rows = P * m;
    int64_t nnzb;
    PK(partile_mass_export_count(g, a->p.shape, &nnzb));
    std::vector<double> hs(L->entries);
    PK(partile_memcpy(ctx, hs.data(), a->storage, L->entries * 8, PARTILE_COPY_DEVICE_TO_HOST));
    std::vector<int64_t> ip(P + 1), ix(nnzb);
    std::vector<double> dv((size_t)nnzb * m * m);
    PK(partile_mass_export(g, a->p.shape, a->p.kind, hs.data(), ip.data(), ix.data(), dv.data()));
    std::vector<double> hx(rows), hy(rows);
    PK(partile_memcpy(ctx, hx.data(), a->x, rows * 8, PARTILE_COPY_DEVICE_TO_HOST));
    /* host SpMV, FP64 and FP32 */
    std::vector<double> t;
    for (int r = -1; r < 5; r++) {
        const double t0 = bench_wtime();
        bench_spmv_host(P, m, ip.data(), ix.data(), dv.data(), hx.data(), hy.data());
        if (r >= 0)
            t.push_back(bench_wtime() - t0);
    }
    s.host64 = median(t);
    const double e_host = rel_err(hy.data(), y_canonical, rows);
    if (!(e_host < 1e-13))
        fprintf(stderr, "host SpMV against the canonical apply: relative error %.3g\n", e_host);
    {
        std::vector<float> dvf(dv.size()), hxf(rows), hyf(rows);
        for (size_t i = 0; i < dv.size(); i++)
            dvf[i] = (float)dv[i];
        for (int64_t i = 0; i < rows; i++)
            hxf[i] = (float)hx[i];
        t.clear();
        for (int r = -1; r < 5; r++) {
            const double t0 = bench_wtime();
            bench_spmv_host_f32(P, m, ip.data(), ix.data(), dvf.data(), hxf.data(), hyf.data());
            if (r >= 0)
                t.push_back(bench_wtime() - t0);
        }
        s.host32 = median(t);
    }
    s.hbytes64 = nnzb * (8.0 * m * m + 8.0) + 8.0 * (P + 1) + 16.0 * rows;
    s.hbytes32 = nnzb * (4.0 * m * m + 8.0) + 8.0 * (P + 1) + 8.0 * rows;
    /* scalar CSR with 32-bit indices (the BSR expanded) for cuSPARSE */
    const int64_t nnz = nnzb * m * m;
    s.nnz_scalar = nnz;
    std::vector<int> rp(rows + 1), ci(nnz);
    std::vector<double> cv(nnz);
    int64_t k = 0;
    for (int64_t R = 0; R < P; R++)
        for (int i = 0; i < m; i++) {
            rp[R * m + i] = (int)k;
            for (int64_t b = ip[R]; b < ip[R + 1]; b++)
                for (int j = 0; j < m; j++) {
                    ci[k] = (int)(ix[b] * m + j);
                    cv[k++] = dv[(size_t)b * m * m + i * m + j];
                }
        }
    rp[rows] = (int)k;
    int *d_rp, *d_ci;
    double *d_cv, *d_y;
    float *d_cvf;
    CK(cudaMalloc(&d_rp, (rows + 1) * 4));
    CK(cudaMalloc(&d_ci, nnz * 4));
    CK(cudaMalloc(&d_cv, nnz * 8));
    CK(cudaMalloc(&d_cvf, nnz * 4));
    CK(cudaMalloc(&d_y, rows * 8));
    CK(cudaMemcpy(d_rp, rp.data(), (rows + 1) * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_ci, ci.data(), nnz * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_cv, cv.data(), nnz * 8, cudaMemcpyHostToDevice));
    to_float<<<1024, 256>>>(nnz, d_cv, d_cvf);
    CK(cudaDeviceSynchronize());
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int prec = 0; prec < 2; prec++) {
        const cudaDataType dt = prec ? CUDA_R_32F : CUDA_R_64F;
        cusparseSpMatDescr_t A;
        cusparseDnVecDescr_t vx, vy;
        CS(cusparseCreateCsr(&A, rows, rows, nnz, d_rp, d_ci, prec ? (void *)d_cvf : (void *)d_cv,
                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, dt));
        CS(cusparseCreateDnVec(&vx, rows, prec ? (void *)a->xf : (void *)a->x, dt));
        CS(cusparseCreateDnVec(&vy, rows, prec ? (void *)a->yf : (void *)d_y, dt));
        const double one = 1.0, zero = 0.0;
        const float onef = 1.0f, zerof = 0.0f;
        const void *alpha = prec ? (const void *)&onef : (const void *)&one;
        const void *beta = prec ? (const void *)&zerof : (const void *)&zero;
        size_t bytes = 0;
        CS(cusparseSpMV_bufferSize(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, A, vx, beta, vy, dt,
                                   CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
        void *buf = NULL;
        CK(cudaMalloc(&buf, bytes ? bytes : 8));
        t.clear();
        for (int r = -2; r < 10; r++) {
            CK(cudaEventRecord(e0, stream));
            CS(cusparseSpMV(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, A, vx, beta, vy, dt,
                            CUSPARSE_SPMV_ALG_DEFAULT, buf));
            CK(cudaEventRecord(e1, stream));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (r >= 0)
                t.push_back(1e-3 * ms);
        }
        (prec ? s.dev32 : s.dev64) = median(t);
        if (!prec) {
            CK(cudaMemcpy(hy.data(), d_y, rows * 8, cudaMemcpyDeviceToHost));
            s.relerr_dev = rel_err(hy.data(), y_canonical, rows);
        }
        cudaFree(buf);
        cusparseDestroySpMat(A);
        cusparseDestroyDnVec(vx);
        cusparseDestroyDnVec(vy);
    }
    s.dbytes64 = nnz * 12.0 + 4.0 * (rows + 1) + 16.0 * rows;
    s.dbytes32 = nnz * 8.0 + 4.0 * (rows + 1) + 8.0 * rows;
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(d_rp), cudaFree(d_ci), cudaFree(d_cv), cudaFree(d_cvf), cudaFree(d_y);
    return s;
}

/* Whether ctx assembles (0) or reports unsupported. */
static int assemble_probe(partile_context_t *ctx)
{
    partile_grid_t g;
    memset(&g, 0, sizeof g);
    g.dim = 1;
    g.cells[0] = 3;
    g.spacing[0] = 1.0;
    g.periodic[0] = 1;
    int64_t *off;
    double *st, *x;
    PK(partile_malloc(ctx, 32, (void **)&off));
    PK(partile_memset(ctx, off, 0, 32));
    PK(partile_malloc(ctx, 64, (void **)&st));
    PK(partile_malloc(ctx, 8, (void **)&x));
    partile_vectors_t v;
    memset(&v, 0, sizeof v);
    v.axis[0] = x;
    partile_mass_params_t p;
    memset(&p, 0, sizeof p);
    p.grid = &g;
    p.shape = PARTILE_SHAPE_CIC;
    p.sigma = 1;
    int s = partile_mass_assemble(ctx, &p, 0, &v, off, NULL, NULL, st, NULL);
    partile_free(ctx, off), partile_free(ctx, st), partile_free(ctx, x);
    return s;
}

int main(int argc, char **argv)
{
    const char *json_path = NULL;
    int side = 64;
    double ref_max = 2.2e6, budget = 1e30; /* seconds after which cases are skipped */
    std::vector<double> ppcs = { 1, 2, 4, 8, 16, 32, 64, 128 };
    int cic_rows = 1, tsc_rows = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json_path = argv[++i];
        else if (!strcmp(argv[i], "--side") && i + 1 < argc)
            side = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ref-max") && i + 1 < argc)
            ref_max = atof(argv[++i]);
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc)
            budget = atof(argv[++i]);
        else if (!strcmp(argv[i], "--ppc") && i + 1 < argc) {
            ppcs.clear();
            for (char *s = strtok(argv[++i], ","); s; s = strtok(NULL, ",")) {
                char *end = NULL;
                const double v = strtod(s, &end); /* fractional counts too, e.g. 1.5 */
                if (end == s || *end != '\0' || !(v > 0.0 && v <= 1e6)) {
                    fprintf(stderr, "bench_apply: --ppc wants counts in (0, 1e6], not '%s'\n", s);
                    return 2;
                }
                ppcs.push_back(v);
            }
        } else if (!strcmp(argv[i], "--shapes") && i + 1 < argc) {
            const char *v = argv[++i];
            cic_rows = strstr(v, "cic") != NULL;
            tsc_rows = strstr(v, "tsc") != NULL;
        } else {
            fprintf(stderr, "usage: bench_apply [--json FILE] [--side S] [--ppc LIST] [--ref-max N] "
                            "[--budget SECONDS] [--shapes cic|tsc|cic,tsc]\n");
            return 2;
        }
    }
    const double t_start = bench_wtime();
    partile_context_t *ctx = NULL, *ref = NULL;
    PK(partile_context_create("cuda", 0, &ctx));
    PK(partile_context_create("reference", 0, &ref));
    const int gpu_assembles = assemble_probe(ctx) == 0;
    FILE *jf = json_path ? fopen(json_path, "w") : NULL;
    bench_json j = { NULL, 1 };
    if (jf)
        bench_json_open(&j, jf, "apply", ctx);
    double bw = 0;
    PK(bench_copy_bandwidth(ctx, &bw));
    const double hbw = bench_host_copy_bandwidth();
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaStream_t stream;
    CK(cudaStreamCreate(&stream));
    cusparseHandle_t sp;
    CS(cusparseCreate(&sp));
    CS(cusparseSetStream(sp, stream));
    partile_gpu_workspace ws = { NULL, 0, NULL };
    printf("device %s, copy bandwidth %.0f GB/s; host %d threads, copy bandwidth %.0f GB/s\n",
           partile_context_device(ctx), bw * 1e-9, bench_threads(), hbw * 1e-9);
    printf("grid %d^3 periodic; assembly on %s%s\n", side, gpu_assembles ? "cuda" : "reference",
           gpu_assembles ? "" : " (the CUDA backend has no mass_assemble in this build: timed on the host)");
    printf("GDofs/s (roofline fraction): sparse-host, cuSPARSE, assembled canonical, matrix-free; "
           "FP64 | FP32; asm = assembly ms; brk = break-even applications (brkc: against the "
           "by-cell matrix-free apply)\n");
    printf("%3s %3s %4s %9s | %12s %12s %12s %12s %6s %6s %12s | %12s %12s %12s | %9s %8s %7s %7s %4s "
           "%4s | %12s %5s\n",
           "shp", "knd", "ppc", "relerr", "host64", "cusp64", "canon64", "mfree64", "cmp", "fused",
           "mfcell64", "host32", "cusp32", "mfree32", "f32err", "asm ms", "brk", "brkc", "bit",
           "bitc", "mfcellB", "bitcB");
    if (jf) {
        bench_json_row(&j, "copy_bandwidth", bw, "B/s", -1, "");
        bench_json_row(&j, "host_copy_bandwidth", hbw, "B/s", -1, "");
        bench_json_row(&j, "gpu_assembles", gpu_assembles, "1", -1, "");
    }
    for (int shape = PARTILE_SHAPE_CIC; shape <= PARTILE_SHAPE_TSC; shape++)
        for (int kind = 0; kind < 2; kind++) {
            if (!(shape == PARTILE_SHAPE_CIC ? cic_rows : tsc_rows))
                continue;
            const int m = kind ? 3 : 1;
            partile_grid_t grid = bench_unit_cube(side);
            const int64_t cells = (int64_t)side * side * side;
            partile_mass_layout_t L;
            PK(partile_mass_layout(&grid, (partile_shape_t)shape, (partile_mass_kind_t)kind, &L));
            const int64_t rows = L.points * m;
            run_args a;
            memset(&a, 0, sizeof a);
            a.p.grid = &grid;
            a.p.shape = (partile_shape_t)shape;
            a.p.kind = (partile_mass_kind_t)kind;
            a.p.sigma = 1.0;
            PK(partile_malloc(ctx, rows * 8, (void **)&a.x));
            PK(partile_malloc(ctx, rows * 8, (void **)&a.y));
            if (kind) { /* B at the points: 3 per point, as x */
                PK(partile_malloc(ctx, rows * 8, (void **)&a.bfield));
                fill_uniform<<<1024, 256>>>(rows, a.bfield, -1.0, 2.0, 5151ull + shape);
            }
            PK(partile_malloc(ctx, rows * 4, (void **)&a.xf));
            PK(partile_malloc(ctx, rows * 4, (void **)&a.yf));
            PK(partile_malloc(ctx, L.entries * 8, (void **)&a.storage));
            PK(partile_malloc(ctx, (size_t)(cells + 1) * 8, (void **)&a.off));
            fill_uniform<<<1024, 256>>>(rows, a.x, -1.0, 2.0, 4242ull + shape * 2 + kind);
            to_float<<<1024, 256>>>(rows, a.x, a.xf);
            CK(cudaDeviceSynchronize());
            std::vector<double> y_mf(rows), y_asm(rows), y_tmp(rows);
            std::vector<float> y32(rows);
            sparse_times sp_t;
            memset(&sp_t, 0, sizeof sp_t);
            int have_sparse = 0;
            for (size_t pi = 0; pi < ppcs.size(); pi++) {
                const double ppc = ppcs[pi];
                const size_t n = (size_t)llround(ppc * (double)cells);
                const unsigned long long ppc_seed = (unsigned long long)ppc; /* as when ppc was an int */
                if (bench_wtime() - t_start > budget) {
                    printf("%3s %3s %4g skipped: past the time budget of %.0f s\n",
                           shape == PARTILE_SHAPE_CIC ? "cic" : "tsc", kind ? "ten" : "sca", ppc, budget);
                    continue;
                }
                a.n = n;
                /* particles: uniform positions, q in [0.5, 1.5), ω in [-1, 1)^3 */
                double *buf;
                PK(partile_malloc(ctx, 7 * n * 8, (void **)&buf));
                float *buff;
                PK(partile_malloc(ctx, 7 * n * 4, (void **)&buff));
                int64_t *perm;
                PK(partile_malloc(ctx, n * 8, (void **)&perm));
                a.pos.type = PARTILE_DTYPE_FLOAT64;
                a.om.type = PARTILE_DTYPE_FLOAT64;
                a.posf.type = PARTILE_DTYPE_FLOAT32;
                a.omf.type = PARTILE_DTYPE_FLOAT32;
                for (int d = 0; d < 3; d++) {
                    a.pos.axis[d] = buf + d * n;
                    a.om.axis[d] = buf + (4 + d) * n;
                    a.posf.axis[d] = buff + d * n;
                    a.omf.axis[d] = buff + (4 + d) * n;
                    fill_uniform<<<1024, 256>>>((long long)n, buf + d * n, 0.0, 1.0, 77ull * (d + 1) + ppc_seed);
                    round_to_float<<<1024, 256>>>((long long)n, buf + d * n);
                    fill_uniform<<<1024, 256>>>((long long)n, buf + (4 + d) * n, -1.0, 2.0, 99ull * (d + 1) + ppc_seed);
                }
                a.q = buf + 3 * n;
                a.qf = buff + 3 * n;
                fill_uniform<<<1024, 256>>>((long long)n, a.q, 0.5, 1.0, 555ull + ppc_seed);
                CK(cudaDeviceSynchronize());
                PK(partile_sort(ctx, &grid, n, &a.pos, a.off, perm, NULL, NULL));
                partile_array_t arr[7];
                for (int k = 0; k < 7; k++)
                    arr[k] = (partile_array_t){ buf + k * n, PARTILE_DTYPE_FLOAT64 };
                PK(partile_permute(ctx, n, perm, 7, arr, NULL, 0));
                PK(partile_context_synchronize(ctx));
                /* FP32 copies (the positions are floats already: the same cells) */
                to_float<<<4096, 256>>>((long long)(7 * n), buf, buff);
                CK(cudaDeviceSynchronize());

                /* matrix-free FP64: the public call and both paths, same bits */
                partile_timing_t tmf, tmf32, tasm_apply, tasm;
                PK(partile_time(ctx, do_matfree, &a, 1, 5, &tmf));
                PK(partile_memcpy(ctx, y_mf.data(), a.y, rows * 8, PARTILE_COPY_DEVICE_TO_HOST));
                const double t_comp = time_path(stream, sms, &ws, &a, PARTILE_GPU_APPLY_COMPOSED, 3);
                PK(partile_memcpy(ctx, y_tmp.data(), a.y, rows * 8, PARTILE_COPY_DEVICE_TO_HOST));
                int bitwise = memcmp(y_tmp.data(), y_mf.data(), rows * 8) == 0;
                const double t_fused = time_path(stream, sms, &ws, &a, PARTILE_GPU_APPLY_FUSED, 5);
                PK(partile_memcpy(ctx, y_tmp.data(), a.y, rows * 8, PARTILE_COPY_DEVICE_TO_HOST));
                bitwise &= memcmp(y_tmp.data(), y_mf.data(), rows * 8) == 0;
                /* by cell (CIC): the public call */
                partile_timing_t tcell, tcellB;
                tcell.median_s = tcellB.median_s = -1;
                std::vector<double> y_cell(rows), y_cellB;
                const int time_cell = shape == PARTILE_SHAPE_CIC;
                if (time_cell) {
                    a.p.order = PARTILE_ORDER_BY_CELL;
                    PK(partile_time(ctx, do_matfree, &a, 1, 5, &tcell));
                    PK(partile_memcpy(ctx, y_cell.data(), a.y, rows * 8, PARTILE_COPY_DEVICE_TO_HOST));
                    if (kind) { /* ω from B (the ω arrays ignored) */
                        a.p.bfield = a.bfield, a.p.beta_over_c = 0.5;
                        PK(partile_time(ctx, do_matfree, &a, 1, 5, &tcellB));
                        y_cellB.resize(rows);
                        PK(partile_memcpy(ctx, y_cellB.data(), a.y, rows * 8, PARTILE_COPY_DEVICE_TO_HOST));
                        a.p.bfield = NULL, a.p.beta_over_c = 0.0;
                    }
                    a.p.order = PARTILE_ORDER_BY_POINT;
                }
                PK(partile_time(ctx, do_matfree_f32, &a, 1, 5, &tmf32));
                PK(partile_memcpy(ctx, y32.data(), a.yf, rows * 4, PARTILE_COPY_DEVICE_TO_HOST));
                double num = 0, den = 0;
                for (int64_t i = 0; i < rows; i++) {
                    num += ((double)y32[i] - y_mf[i]) * ((double)y32[i] - y_mf[i]);
                    den += y_mf[i] * y_mf[i];
                }
                const double f32err = sqrt(num / den);

                /* assembly (CUDA, or the reference when CUDA has none) */
                const int asm_cost = (shape == PARTILE_SHAPE_TSC ? 729 : 64) * (kind ? 9 : 1);
                int have_asm = 1;
                std::vector<double> hpos, hq, hom;
                std::vector<int64_t> hoff;
                run_args h = a;
                const int host_copy = !gpu_assembles || (double)n <= ref_max;
                if (host_copy) {
                    hpos.resize(3 * n), hq.resize(n), hom.resize(3 * n), hoff.resize(cells + 1);
                    PK(partile_memcpy(ctx, hpos.data(), buf, 3 * n * 8, PARTILE_COPY_DEVICE_TO_HOST));
                    PK(partile_memcpy(ctx, hq.data(), a.q, n * 8, PARTILE_COPY_DEVICE_TO_HOST));
                    PK(partile_memcpy(ctx, hom.data(), buf + 4 * n, 3 * n * 8, PARTILE_COPY_DEVICE_TO_HOST));
                    PK(partile_memcpy(ctx, hoff.data(), a.off, (cells + 1) * 8, PARTILE_COPY_DEVICE_TO_HOST));
                    for (int d = 0; d < 3; d++) {
                        h.pos.axis[d] = hpos.data() + d * n;
                        h.om.axis[d] = hom.data() + d * n;
                    }
                    h.q = hq.data();
                    h.off = hoff.data();
                }
                if (gpu_assembles) {
                    PK(partile_time(ctx, do_assemble, &a, 1, 3, &tasm));
                } else if ((double)n * asm_cost <= 2e9) {
                    std::vector<double> hs(L.entries);
                    h.storage = hs.data();
                    PK(partile_time(ref, do_assemble, &h, 0, 1, &tasm));
                    PK(partile_memcpy(ctx, a.storage, hs.data(), L.entries * 8, PARTILE_COPY_HOST_TO_DEVICE));
                } else {
                    have_asm = 0;
                }
                double relerr = -1, relerr_cell = -1, t_asm_apply = -1, brk = -1, brk_cell = -1;
                if (have_asm) {
                    PK(partile_time(ctx, do_assembled, &a, 1, 5, &tasm_apply));
                    t_asm_apply = tasm_apply.median_s;
                    PK(partile_memcpy(ctx, y_asm.data(), a.y, rows * 8, PARTILE_COPY_DEVICE_TO_HOST));
                    relerr = rel_err(y_mf.data(), y_asm.data(), rows);
                    relerr_cell = time_cell ? rel_err(y_cell.data(), y_asm.data(), rows) : -1;
                    brk = tmf.median_s > t_asm_apply ? tasm.median_s / (tmf.median_s - t_asm_apply) : INFINITY;
                    if (time_cell)
                        brk_cell = tcell.median_s > t_asm_apply
                                       ? tasm.median_s / (tcell.median_s - t_asm_apply)
                                       : INFINITY;
                    if (!have_sparse) {
                        sp_t = time_sparse(ctx, sp, stream, &a, &L, m, y_asm.data());
                        have_sparse = 1;
                    }
                }
                /* against the reference backend (smaller cases) */
                const char *bit = bitwise ? "ok" : "DIFF", *bitc = time_cell ? "-" : "n/a";
                const char *bitcB = time_cell && kind ? "-" : "n/a";
                if ((double)n <= ref_max && host_copy) {
                    std::vector<double> hx(rows), hy(rows), hs(L.entries);
                    PK(partile_memcpy(ctx, hx.data(), a.x, rows * 8, PARTILE_COPY_DEVICE_TO_HOST));
                    h.x = hx.data();
                    h.y = hy.data();
                    PK(do_matfree(ref, &h));
                    int ok = memcmp(hy.data(), y_mf.data(), rows * 8) == 0;
                    if (have_asm) {
                        PK(partile_memcpy(ctx, hs.data(), a.storage, L.entries * 8, PARTILE_COPY_DEVICE_TO_HOST));
                        h.storage = hs.data();
                        PK(do_assembled(ref, &h));
                        ok &= memcmp(hy.data(), y_asm.data(), rows * 8) == 0;
                    }
                    bit = !bitwise ? "DIFF" : ok ? "REF" : "RDIF";
                    if (time_cell) {
                        h.p.order = PARTILE_ORDER_BY_CELL;
                        PK(do_matfree(ref, &h));
                        bitc = memcmp(hy.data(), y_cell.data(), rows * 8) == 0 ? "REF" : "RDIF";
                        if (kind) {
                            std::vector<double> hB(rows);
                            PK(partile_memcpy(ctx, hB.data(), a.bfield, rows * 8, PARTILE_COPY_DEVICE_TO_HOST));
                            h.p.bfield = hB.data(), h.p.beta_over_c = 0.5;
                            PK(do_matfree(ref, &h));
                            h.p.bfield = NULL, h.p.beta_over_c = 0.0;
                            bitcB = memcmp(hy.data(), y_cellB.data(), rows * 8) == 0 ? "REF" : "RDIF";
                        }
                        h.p.order = PARTILE_ORDER_BY_POINT;
                    }
                }
                const double b64 = n * (24.0 + 8.0 + (kind ? 24.0 : 0.0)) + 8.0 * (cells + 1) + 16.0 * rows;
                const double b32 = n * (12.0 + 4.0 + (kind ? 12.0 : 0.0)) + 8.0 * (cells + 1) + 8.0 * rows;
                const double basm = 8.0 * L.entries + 16.0 * rows;
                /* ω from B: positions and q per particle, x, y and B per point */
                const double b64B = n * (24.0 + 8.0) + 8.0 * (cells + 1) + 24.0 * rows;
                const double dofs = (double)rows * 1e-9;
                const char *sn = shape == PARTILE_SHAPE_CIC ? "cic" : "tsc";
                const char *kn = kind ? "ten" : "sca";
#define GR(t, bytes, ceil) (t) > 0 ? dofs / (t) : 0.0, (t) > 0 ? (bytes) / (ceil) / (t) : 0.0
                printf("%3s %3s %4g %9.2e | %6.2f(%3.2f) %6.2f(%3.2f) %6.2f(%3.2f) %6.2f(%3.2f) %6.2f %6.2f "
                       "%6.2f(%3.2f) | %6.2f(%3.2f) %6.2f(%3.2f) %6.2f(%3.2f) | %9.2e %8.2f %7.1f %7.1f %4s "
                       "%4s | %6.2f(%3.2f) %5s\n",
                       sn, kn, ppc, relerr, GR(have_sparse ? sp_t.host64 : -1, sp_t.hbytes64, hbw),
                       GR(have_sparse ? sp_t.dev64 : -1, sp_t.dbytes64, bw), GR(t_asm_apply, basm, bw),
                       GR(tmf.median_s, b64, bw), dofs / t_comp, dofs / t_fused,
                       GR(tcell.median_s, b64, bw),
                       GR(have_sparse ? sp_t.host32 : -1, sp_t.hbytes32, hbw),
                       GR(have_sparse ? sp_t.dev32 : -1, sp_t.dbytes32, bw), GR(tmf32.median_s, b32, bw),
                       f32err, have_asm ? tasm.median_s * 1e3 : -1.0, brk, brk_cell, bit, bitc,
                       GR(tcellB.median_s, b64B, bw), bitcB);
                fflush(stdout);
                if (jf) {
                    char name[160];
#define ROW(what, v, unit, r, of)                                                               \
    snprintf(name, sizeof name, "%s.%s.%s.ppc%g", what, sn, kind ? "tensor" : "scalar", ppc);   \
    bench_json_row(&j, name, v, unit, r, of)
                    ROW("dofs", (double)rows, "1", -1, "");
                    ROW("particles", (double)n, "1", -1, "");
                    ROW("matfree_fp64_seconds", tmf.median_s, "s", b64 / bw / tmf.median_s, "roofline");
                    ROW("matfree_fp64_composed_seconds", t_comp, "s", b64 / bw / t_comp, "roofline");
                    ROW("matfree_fp64_fused_seconds", t_fused, "s", b64 / bw / t_fused, "roofline");
                    ROW("matfree_fp32_seconds", tmf32.median_s, "s", b32 / bw / tmf32.median_s, "roofline");
                    if (time_cell) {
                        ROW("matfree_fp64_by_cell_seconds", tcell.median_s, "s",
                            b64 / bw / tcell.median_s, "roofline");
                        ROW("by_cell_bitwise_vs_reference", !strcmp(bitc, "REF") ? 1.0 : !strcmp(bitc, "-") ? -1.0 : 0.0,
                            "1", -1, "");
                        if (have_asm)
                            ROW("relerr_matfree_by_cell_vs_assembled", relerr_cell, "1", -1, "");
                        if (kind) {
                            ROW("matfree_fp64_by_cell_bfield_seconds", tcellB.median_s, "s",
                                b64B / bw / tcellB.median_s, "roofline");
                            ROW("by_cell_bfield_bitwise_vs_reference",
                                !strcmp(bitcB, "REF") ? 1.0 : !strcmp(bitcB, "-") ? -1.0 : 0.0, "1", -1, "");
                        }
                    }
                    ROW("fp32_vs_fp64_relerr", f32err, "1", -1, "");
                    ROW("bitwise", bitwise ? 1.0 : 0.0, "1", -1, "");
                    if (have_asm) {
                        ROW("assembly_seconds", tasm.median_s, "s", -1, "");
                        ROW("assembly_backend_is_gpu", gpu_assembles, "1", -1, "");
                        ROW("assembled_canonical_fp64_seconds", t_asm_apply, "s", basm / bw / t_asm_apply, "roofline");
                        ROW("relerr_matfree_vs_assembled", relerr, "1", -1, "");
                        ROW("break_even_applications", isinf(brk) ? -1.0 : brk, "1", -1, "");
                        if (time_cell)
                            ROW("break_even_applications_by_cell", isinf(brk_cell) ? -1.0 : brk_cell,
                                "1", -1, "");
                    }
                    if (have_sparse) {
                        ROW("sparse_host_fp64_seconds", sp_t.host64, "s", sp_t.hbytes64 / hbw / sp_t.host64, "host_roofline");
                        ROW("sparse_host_fp32_seconds", sp_t.host32, "s", sp_t.hbytes32 / hbw / sp_t.host32, "host_roofline");
                        ROW("cusparse_fp64_seconds", sp_t.dev64, "s", sp_t.dbytes64 / bw / sp_t.dev64, "roofline");
                        ROW("cusparse_fp32_seconds", sp_t.dev32, "s", sp_t.dbytes32 / bw / sp_t.dev32, "roofline");
                        ROW("cusparse_vs_canonical_relerr", sp_t.relerr_dev, "1", -1, "");
                    }
                    fflush(jf);
                }
                partile_free(ctx, buf), partile_free(ctx, buff), partile_free(ctx, perm);
            }
            partile_free(ctx, a.x), partile_free(ctx, a.y), partile_free(ctx, a.xf), partile_free(ctx, a.yf);
            partile_free(ctx, a.storage), partile_free(ctx, a.off);
            if (a.bfield)
                partile_free(ctx, a.bfield);
        }
    if (jf) {
        bench_json_close(&j);
        fclose(jf);
    }
    partile_cuda_workspace_free(&ws);
    cusparseDestroy(sp);
    cudaStreamDestroy(stream);
    partile_context_destroy(ref);
    partile_context_destroy(ctx);
    return 0;
}
