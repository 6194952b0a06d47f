/* partile — command line tool.
 *   partile info                 backends, devices, tile shapes
 *   partile check [options]      tile conformance against the reference
 *   partile sort [options]       sort particles of a .npy file by cell
 *   partile version
 * Exit status: 0 success, 1 a check failed or an operation failed, 2 usage
 * error, 77 (with --skip-unavailable) the asked-for backend cannot run here. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "partile/partile.h"
#include "tools/conformance.h"
#include "tools/npy.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: partile <command> [options]\n"
            "commands:\n"
            "  info                       backends compiled in, devices, tile shapes\n"
            "  check [options]            tile engines against the reference, bit for bit in FP64\n"
            "      --backend NAME         reference, cuda, hip (default: every backend that runs here)\n"
            "      --shape NAME           only this shape (as `partile check --list` names it)\n"
            "      --seed N               random seed (default: from the clock; printed)\n"
            "      --list                 list the shapes that would be checked, run nothing\n"
            "      --bench                also measure each shape's peak rate (operands in registers)\n"
            "      --device N             device index (default 0)\n"
            "      --skip-unavailable     exit 77 if the named backend cannot run here\n"
            "  sort [options]             sort particles by cell (stable counting sort)\n"
            "      --backend NAME         reference, cuda, hip, auto (default auto)\n"
            "      --device N             device index (default 0)\n"
            "      --cells NX[,NY[,NZ]]   cells per axis; their count is the dimension d\n"
            "      --lower X0[,Y0[,Z0]]   lower corner (default 0 on every axis)\n"
            "      --upper X1[,Y1[,Z1]]   upper corner (default lower + cells: spacing 1)\n"
            "      --periodic             every axis wraps (else outside the box is an error)\n"
            "      --positions P.npy      (Np, d) float64 or float32, C order; (Np,) if d = 1\n"
            "      --out DIR              writes DIR/perm.npy, DIR/offsets.npy (cells + 1),\n"
            "                             DIR/cell.npy, all int64; DIR is created if missing\n"
            "  version                    print the library version\n");
}

static int report_error(const char *what, int status)
{
    const char *detail = partile_last_error_detail();
    fprintf(stderr, "partile: %s: %s%s%s\n", what, partile_status_string(status),
            detail[0] ? ": " : "", detail);
    return 1;
}

/* The shape table of a backend: of ctx's device if given, else by name. */
static void print_shapes(const char *backend, partile_context_t *ctx)
{
    int n = 0;
    if (ctx)
        partile_mma_shape_count(ctx, &n);
    else
        partile_backend_shape_count(backend, &n);
    printf("    %-16s %3s %3s %3s %-5s %-5s %-15s %-7s %s\n", "shape", "Mt", "Nt", "Kt", "Fin",
           "Facc", "available", "bitwise", "instruction");
    for (int i = 0; i < n; i++) {
        partile_mma_shape_t s;
        if (ctx)
            partile_mma_shape_get(ctx, i, &s);
        else
            partile_backend_shape_get(backend, i, &s);
        char avail[32];
        if (!ctx)
            snprintf(avail, sizeof avail, "needs %s", s.required_target[0] ? s.required_target : "-");
        else if (s.available)
            snprintf(avail, sizeof avail, "yes");
        else
            snprintf(avail, sizeof avail, "no, needs %s", s.required_target);
        printf("    %-16s %3d %3d %3d %-5s %-5s %-15s %-7s %s\n", s.name, s.tile.m, s.tile.n,
               s.tile.k, partile_format_name(s.tile.fin), partile_format_name(s.tile.facc), avail,
               s.bitwise ? "yes" : "tol", s.instruction);
    }
}

static int cmd_info(void)
{
    printf("partile %s\n", partile_version());
    for (int b = 0; b < partile_backend_count(); b++) {
        partile_backend_info_t info;
        partile_backend_query(b, &info);
        printf("\nbackend %-9s %s", info.name, info.compiled ? "compiled" : "not compiled");
        if (info.compiled)
            printf(" [targets: %s], %d device(s)%s%s", info.targets, info.device_count,
                   info.note[0] ? " — " : "", info.note);
        printf("\n");
        if (!info.compiled)
            continue;
        /* The shape table is known without a device; availability needs one. */
        if (info.device_count == 0) {
            printf("  no device: shapes this engine offers (availability unknown)\n");
            print_shapes(info.name, NULL);
            continue;
        }
        for (int d = 0; d < info.device_count; d++) {
            partile_context_t *ctx = NULL;
            int st = partile_context_create(info.name, d, &ctx);
            if (st < 0) {
                report_error(info.name, st);
                continue;
            }
            printf("  device %d: %s\n", d, partile_context_device(ctx));
            print_shapes(info.name, ctx);
            partile_context_destroy(ctx);
        }
    }
    return 0;
}

typedef struct check_opts {
    const char *backend, *shape;
    uint64_t seed;
    int list, bench, device, skip_unavailable;
} check_opts;

/* Checks every shape of one backend; returns the number of failures, or -1
 * if the backend could not run. */
static int check_backend(const char *name, const check_opts *o, int *shapes_run)
{
    partile_context_t *ctx = NULL;
    int st = partile_context_create(name, o->device, &ctx);
    if (st < 0) {
        report_error(name, st);
        return -1;
    }
    printf("== %s: %s\n", name, partile_context_device(ctx));
    double fma_rate = 0.0;
    if (o->bench && partile_fma_peak(ctx, &fma_rate) == 0)
        printf("   plain FP64 fma peak: %.2f TFLOP/s (measured now)\n", fma_rate * 1e-12);
    int n = 0, failures = 0;
    partile_mma_shape_count(ctx, &n);
    for (int i = 0; i < n; i++) {
        partile_mma_shape_t s;
        partile_mma_shape_get(ctx, i, &s);
        if (o->shape && strcmp(o->shape, s.name) != 0)
            continue;
        if (!s.available) {
            printf("   %-16s skipped: needs %s\n", s.name, s.required_target);
            continue;
        }
        if (o->list) {
            printf("   %-16s m%dn%dk%d %s->%s %s\n", s.name, s.tile.m, s.tile.n, s.tile.k,
                   partile_format_name(s.tile.fin), partile_format_name(s.tile.facc),
                   s.bitwise ? "bitwise" : "tolerance");
            continue;
        }
        partile_check_result_t r;
        st = partile_check_shape(ctx, &s, o->seed, 8, stdout, &r);
        (*shapes_run)++;
        if (st < 0) {
            report_error(s.name, st);
            failures++;
            continue;
        }
        int ok = partile_check_passed(&r);
        failures += !ok;
        printf("   %-16s %s  %lld values, %d sizes", s.name, ok ? "ok  " : "FAIL", r.compared,
               r.cases);
        if (s.tile.facc == PARTILE_FP64)
            printf(", bitwise: %lld differ (max %.0f ulp)", r.mismatches, r.max_ulp);
        else
            printf(", tol %.2g: %lld beyond (max %.3g)", PARTILE_CHECK_F32_TOL, r.mismatches,
                   r.max_rel);
        if (r.unwritten || r.guard_hits)
            printf(", %lld unwritten, %lld guard writes", r.unwritten, r.guard_hits);
        printf("\n");
        if (o->bench) {
            double rate;
            st = partile_mma_peak(ctx, &s.tile, &rate);
            if (st == PARTILE_ERROR_UNSUPPORTED)
                printf("   %-16s bench: no peak microbenchmark on this backend\n", s.name);
            else if (st < 0)
                report_error("bench", st);
            else if (fma_rate > 0)
                printf("   %-16s bench: %.2f TFLOP/s = %.2fx plain FP64 fma\n", s.name,
                       rate * 1e-12, rate / fma_rate);
            else
                printf("   %-16s bench: %.2f TFLOP/s\n", s.name, rate * 1e-12);
        }
    }
    partile_context_destroy(ctx);
    return failures;
}

static int cmd_check(int argc, char **argv)
{
    check_opts o = { 0 };
    o.seed = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (!strcmp(a, "--backend") && has_value)
            o.backend = argv[++i];
        else if (!strcmp(a, "--shape") && has_value)
            o.shape = argv[++i];
        else if (!strcmp(a, "--seed") && has_value) {
            char *end;
            errno = 0;
            o.seed = strtoull(argv[++i], &end, 0);
            if (errno || *end || argv[i][0] == '\0' || argv[i][0] == '-') {
                fprintf(stderr, "partile check: --seed needs a non-negative integer, got \"%s\"\n",
                        argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--device") && has_value) {
            char *end;
            long d = strtol(argv[++i], &end, 10);
            if (*end || d < 0 || d > 1024) {
                fprintf(stderr, "partile check: --device needs an index, got \"%s\"\n", argv[i]);
                return 2;
            }
            o.device = (int)d;
        } else if (!strcmp(a, "--list"))
            o.list = 1;
        else if (!strcmp(a, "--bench"))
            o.bench = 1;
        else if (!strcmp(a, "--skip-unavailable"))
            o.skip_unavailable = 1;
        else {
            fprintf(stderr, "partile check: unknown or incomplete option \"%s\"\n", a);
            usage(stderr);
            return 2;
        }
    }
    printf("partile check, seed %" PRIu64 " (repeat with --seed %" PRIu64 ")\n", o.seed, o.seed);
    int failures = 0, ran_backends = 0, shapes_run = 0;
    if (o.backend) {
        partile_context_t *probe = NULL;
        int st = partile_context_create(o.backend, o.device, &probe);
        partile_context_destroy(probe);
        if (st < 0) {
            report_error(o.backend, st);
            return o.skip_unavailable && (st == PARTILE_ERROR_NOT_COMPILED ||
                                          st == PARTILE_ERROR_NO_DEVICE) ? 77 : 1;
        }
        int f = check_backend(o.backend, &o, &shapes_run);
        failures += f < 0 ? 1 : f;
        ran_backends++;
    } else {
        for (int b = 0; b < partile_backend_count(); b++) {
            partile_backend_info_t info;
            partile_backend_query(b, &info);
            if (!info.compiled || info.device_count == 0) {
                printf("== %s: not run (%s)\n", info.name,
                       info.compiled ? info.note : "not compiled");
                continue;
            }
            int f = check_backend(info.name, &o, &shapes_run);
            failures += f < 0 ? 1 : f;
            ran_backends++;
        }
    }
    if (o.shape && shapes_run == 0 && !o.list) {
        fprintf(stderr, "partile check: no available shape named \"%s\"\n", o.shape);
        return 2;
    }
    if (!o.list)
        printf("%s: %d backend(s), %d shape check(s), %d failure(s)\n",
               failures ? "FAILED" : "PASSED", ran_backends, shapes_run, failures);
    return failures ? 1 : 0;
}

/* ---- partile sort ------------------------------------------------------- */

static int sort_error(const char *what, int status)
{
    const char *detail = partile_last_error_detail();
    fprintf(stderr, "partile sort: %s: %s%s%s\n", what, partile_status_string(status),
            detail[0] ? ": " : "", detail);
    return 1;
}

/* "a[,b[,c]]": 1 to 3 comma-separated numbers, each consumed entirely. */
static int parse_list(const char *s, int integers, double *dval, int64_t *ival)
{
    int n = 0;
    const char *p = s;
    for (;;) {
        if (n == 3 || *p == '\0' || *p == ',')
            return -1;
        char *end;
        errno = 0;
        if (integers) {
            long long v = strtoll(p, &end, 10);
            if (errno || end == p)
                return -1;
            ival[n] = (int64_t)v;
        } else {
            double v = strtod(p, &end);
            if (end == p || !isfinite(v))
                return -1;
            dval[n] = v;
        }
        n++;
        if (*end == '\0')
            return n;
        if (*end != ',')
            return -1;
        p = end + 1;
    }
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Creates dir if missing (one level); an existing directory is fine. */
static int make_dir(const char *dir)
{
    if (mkdir(dir, 0777) == 0)
        return 0;
    int e = errno;
    struct stat st;
    if (e == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    fprintf(stderr, "partile sort: cannot create directory \"%s\": %s\n", dir,
            e == EEXIST ? "exists and is not a directory" : strerror(e));
    return -1;
}

static char *join_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static int cmd_sort(int argc, char **argv)
{
    const char *backend = "auto", *positions = NULL, *out = NULL;
    const char *cells_arg = NULL, *lower_arg = NULL, *upper_arg = NULL;
    int device = 0, periodic = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (!strcmp(a, "--backend") && has_value)
            backend = argv[++i];
        else if (!strcmp(a, "--device") && has_value) {
            char *end;
            long d = strtol(argv[++i], &end, 10);
            if (*end || argv[i][0] == '\0' || d < 0 || d > 1024) {
                fprintf(stderr, "partile sort: --device needs an index, got \"%s\"\n", argv[i]);
                return 2;
            }
            device = (int)d;
        } else if (!strcmp(a, "--cells") && has_value)
            cells_arg = argv[++i];
        else if (!strcmp(a, "--lower") && has_value)
            lower_arg = argv[++i];
        else if (!strcmp(a, "--upper") && has_value)
            upper_arg = argv[++i];
        else if (!strcmp(a, "--periodic"))
            periodic = 1;
        else if (!strcmp(a, "--positions") && has_value)
            positions = argv[++i];
        else if (!strcmp(a, "--out") && has_value)
            out = argv[++i];
        else {
            fprintf(stderr, "partile sort: unknown or incomplete option \"%s\"\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!cells_arg || !positions || !out) {
        fprintf(stderr, "partile sort: --cells, --positions and --out are required\n");
        usage(stderr);
        return 2;
    }
    if (out[0] == '\0') {
        fprintf(stderr, "partile sort: --out needs a directory name\n");
        return 2;
    }

    /* The grid. */
    partile_grid_t grid;
    memset(&grid, 0, sizeof grid);
    int64_t cells[3] = { 0 };
    double lower[3] = { 0, 0, 0 }, upper[3];
    int dim = parse_list(cells_arg, 1, NULL, cells);
    if (dim < 1) {
        fprintf(stderr, "partile sort: --cells needs 1 to 3 comma-separated integers, got \"%s\"\n",
                cells_arg);
        return 2;
    }
    for (int m = 0; m < dim; m++)
        if (cells[m] < 1) {
            fprintf(stderr, "partile sort: --cells: axis %d has %" PRId64 " cells, needs >= 1\n",
                    m, cells[m]);
            return 2;
        }
    if (lower_arg && parse_list(lower_arg, 0, lower, NULL) != dim) {
        fprintf(stderr, "partile sort: --lower needs %d finite number(s) (one per --cells "
                        "entry), got \"%s\"\n", dim, lower_arg);
        return 2;
    }
    for (int m = 0; m < dim; m++)
        upper[m] = lower[m] + (double)cells[m];
    if (upper_arg && parse_list(upper_arg, 0, upper, NULL) != dim) {
        fprintf(stderr, "partile sort: --upper needs %d finite number(s) (one per --cells "
                        "entry), got \"%s\"\n", dim, upper_arg);
        return 2;
    }
    grid.dim = dim;
    for (int m = 0; m < dim; m++) {
        double h = (upper[m] - lower[m]) / (double)cells[m];
        if (!isfinite(h) || !(h > 0.0)) {
            fprintf(stderr, "partile sort: axis %d: lower %g, upper %g and %" PRId64 " cells "
                            "give spacing %g; it must be finite and > 0\n",
                    m, lower[m], upper[m], cells[m], h);
            return 2;
        }
        grid.cells[m] = cells[m];
        grid.lower[m] = lower[m];
        grid.spacing[m] = h;
        grid.periodic[m] = periodic;
    }

    /* The positions. */
    npy_array_t pos;
    char err[NPY_ERR_SIZE];
    if (npy_read(positions, &pos, err) < 0) {
        fprintf(stderr, "partile sort: %s: %s\n", positions, err);
        return 1;
    }
    int rc = 1;
    partile_context_t *ctx = NULL;
    void *host_axis[3] = { NULL, NULL, NULL }, *dev_axis[3] = { NULL, NULL, NULL };
    int64_t *offsets = NULL, *perm = NULL, *cell = NULL;
    int64_t *d_offsets = NULL, *d_perm = NULL, *d_cell = NULL;
    char *paths[3] = { NULL, NULL, NULL };
    int written = 0;

    if (pos.dtype != NPY_DTYPE_F8 && pos.dtype != NPY_DTYPE_F4) {
        fprintf(stderr, "partile sort: %s: positions must be float64 or float32, not %s\n",
                positions, npy_dtype_name(pos.dtype));
        goto done;
    }
    if ((pos.ndim == 2 && pos.shape[1] != dim) || (pos.ndim == 1 && dim != 1)) {
        if (pos.ndim == 2)
            fprintf(stderr, "partile sort: %s: positions have shape (%" PRId64 ", %" PRId64 "), "
                            "need (Np, %d) for the %d --cells axes\n",
                    positions, pos.shape[0], pos.shape[1], dim, dim);
        else
            fprintf(stderr, "partile sort: %s: positions have shape (%" PRId64 ",), need "
                            "(Np, %d) for the %d --cells axes\n",
                    positions, pos.shape[0], dim, dim);
        goto done;
    }
    size_t n = (size_t)pos.shape[0];
    size_t esize = npy_dtype_size(pos.dtype);
    partile_dtype_t ptype = pos.dtype == NPY_DTYPE_F8 ? PARTILE_DTYPE_FLOAT64 : PARTILE_DTYPE_FLOAT32;

    int st = partile_context_create(backend, device, &ctx);
    if (st < 0) {
        char what[128];
        snprintf(what, sizeof what, "backend \"%s\"", backend);
        sort_error(what, st);
        goto done;
    }
    int64_t ncells = 0;
    st = partile_grid_cell_count(&grid, &ncells);
    if (st < 0) {
        sort_error("grid", st);
        goto done;
    }
    if (n > SIZE_MAX / 8 || (uint64_t)ncells >= SIZE_MAX / 8) {
        fprintf(stderr, "partile sort: %zu particles, %" PRId64 " cells: sizes overflow\n", n,
                ncells);
        goto done;
    }
    /* Context memory: at least one element each, so that n = 0 passes no NULL. */
    size_t axis_bytes = (n ? n : 1) * esize, idx_bytes = (n ? n : 1) * sizeof(int64_t);
    size_t off_bytes = ((size_t)ncells + 1) * sizeof(int64_t);

    /* AoS (Np, d) -> SoA, one array per axis. */
    const unsigned char *src = pos.data;
    for (int m = 0; m < dim; m++) {
        host_axis[m] = malloc(axis_bytes);
        if (!host_axis[m]) {
            fprintf(stderr, "partile sort: out of host memory\n");
            goto done;
        }
        for (size_t p = 0; p < n; p++)
            memcpy((unsigned char *)host_axis[m] + p * esize,
                   src + (p * (size_t)dim + (size_t)m) * esize, esize);
    }
    offsets = malloc(off_bytes);
    perm = malloc(idx_bytes);
    cell = malloc(idx_bytes);
    if (!offsets || !perm || !cell) {
        fprintf(stderr, "partile sort: out of host memory (%" PRId64 " cells)\n", ncells);
        goto done;
    }
    for (int m = 0; m < dim; m++) {
        if ((st = partile_malloc(ctx, axis_bytes, &dev_axis[m])) < 0 ||
            (st = partile_memcpy(ctx, dev_axis[m], host_axis[m], axis_bytes,
                                 PARTILE_COPY_HOST_TO_DEVICE)) < 0) {
            sort_error("copying positions to the device", st);
            goto done;
        }
    }
    if ((st = partile_malloc(ctx, off_bytes, (void **)&d_offsets)) < 0 ||
        (st = partile_malloc(ctx, idx_bytes, (void **)&d_perm)) < 0 ||
        (st = partile_malloc(ctx, idx_bytes, (void **)&d_cell)) < 0) {
        sort_error("allocating the outputs", st);
        goto done;
    }

    partile_vectors_t vec;
    memset(&vec, 0, sizeof vec);
    vec.type = ptype;
    for (int m = 0; m < dim; m++)
        vec.axis[m] = dev_axis[m];
    int64_t bad = -1;
    double t0 = now_s();
    st = partile_sort(ctx, &grid, n, &vec, d_offsets, d_perm, d_cell, &bad);
    if (st == 0)
        st = partile_context_synchronize(ctx);
    double elapsed_ms = (now_s() - t0) * 1e3;
    if (st < 0) {
        char what[4200];
        snprintf(what, sizeof what, "sorting %s", positions);
        sort_error(what, st);
        goto done;
    }
    if ((st = partile_memcpy(ctx, offsets, d_offsets, off_bytes, PARTILE_COPY_DEVICE_TO_HOST)) < 0 ||
        (st = partile_memcpy(ctx, perm, d_perm, idx_bytes, PARTILE_COPY_DEVICE_TO_HOST)) < 0 ||
        (st = partile_memcpy(ctx, cell, d_cell, idx_bytes, PARTILE_COPY_DEVICE_TO_HOST)) < 0) {
        sort_error("copying results from the device", st);
        goto done;
    }

    /* The outputs. */
    if (make_dir(out) < 0)
        goto done;
    static const char *names[3] = { "perm.npy", "offsets.npy", "cell.npy" };
    const int64_t *arrays[3] = { perm, offsets, cell };
    const size_t counts[3] = { n, (size_t)ncells + 1, n };
    for (int k = 0; k < 3; k++) {
        paths[k] = join_path(out, names[k]);
        if (!paths[k]) {
            fprintf(stderr, "partile sort: out of host memory\n");
            goto done;
        }
        if (npy_write_i64(paths[k], arrays[k], counts[k], err) < 0) {
            fprintf(stderr, "partile sort: %s: %s\n", paths[k], err);
            goto done;
        }
        written = k + 1;
    }
    printf("partile sort: %zu particles, %" PRId64 " cells (", n, ncells);
    for (int m = 0; m < dim; m++)
        printf("%s%" PRId64, m ? "x" : "", cells[m]);
    printf("%s), backend %s, %s positions, %.3f ms; wrote %s/{perm,offsets,cell}.npy\n",
           periodic ? ", periodic" : "", partile_context_backend(ctx),
           npy_dtype_name(pos.dtype), elapsed_ms, out);
    rc = 0;
done:
    if (rc != 0)
        for (int k = 0; k < written; k++)
            remove(paths[k]);
    for (int k = 0; k < 3; k++)
        free(paths[k]);
    if (ctx) {
        for (int m = 0; m < 3; m++)
            partile_free(ctx, dev_axis[m]);
        partile_free(ctx, d_offsets);
        partile_free(ctx, d_perm);
        partile_free(ctx, d_cell);
        partile_context_destroy(ctx);
    }
    for (int m = 0; m < 3; m++)
        free(host_axis[m]);
    free(offsets);
    free(perm);
    free(cell);
    npy_array_free(&pos);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "info"))
        return cmd_info();
    if (!strcmp(argv[1], "check"))
        return cmd_check(argc - 2, argv + 2);
    if (!strcmp(argv[1], "sort"))
        return cmd_sort(argc - 2, argv + 2);
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
        printf("partile %s\n", partile_version());
        return 0;
    }
    if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "partile: unknown command \"%s\"\n", argv[1]);
    usage(stderr);
    return 2;
}
