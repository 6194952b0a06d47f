/* partile — command line tool.
 *   partile info                 backends, devices, tile shapes
 *   partile check [options]      tile conformance against the reference
 *   partile sort [options]       sort particles of a .npy file by cell
 *   partile deposit [options]    particle values onto grid points (.npy in and out)
 *   partile gather [options]     grid values at the particles (.npy in and out)
 *   partile assemble [options]   the particle mass matrix, exported as CSR/BSR .npy files
 *   partile pairs [options]      short-range pair interactions (LJ, SPH density), .npy in and out
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
#include <unistd.h>

#include "partile/partile.h"
#include "tools/check_particles.h"
#include "tools/conformance.h"
#include "tools/npy.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: partile <command> [options]\n"
            "commands:\n"
            "  info                       backends compiled in, devices, tile shapes\n"
            "  check [options]            tile engines, sort and deposit/gather against the\n"
            "                             reference, bit for bit in FP64\n"
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
            "  deposit [options]          particle values onto grid points: field += sum W v\n"
            "      --backend, --device, --cells, --lower, --upper, --periodic, --positions\n"
            "                             the grid and particles, as for sort\n"
            "      --shape NAME           ngp, cic, tsc or overlap\n"
            "      --centering NAME       node (points at lower + i*h, default) or cell (centres)\n"
            "      --sizes D.npy          (Np,) float64 cube widths, 0 < d <= spacing: required\n"
            "                             for overlap, refused for the other shapes\n"
            "      --values V.npy         (Np, m) float64, m = 1 to 16 components; or (Np,)\n"
            "      --grid G.npy           initial field, (points, m) float64 (default zeros)\n"
            "      --sorted               sort by cell first (partile_sort, partile_permute) and\n"
            "                             deposit with the cell list: bitwise on every backend\n"
            "      --out OUT.npy          the field, (points, m) float64; (points,) if V is 1-D\n"
            "  gather [options]           grid values at the particles: v = sum W field\n"
            "      grid and particle options, --shape, --centering, --sizes as for deposit\n"
            "      --grid G.npy           the field, (points, m) float64, m = 1 to 16; or (points,)\n"
            "      --out OUT.npy          (Np, m) float64; (Np,) if G is 1-D\n"
            "    Field points (rows of G and OUT), per axis: periodic: one per cell, i = 0 ..\n"
            "    cells-1; non-periodic: one ghost layer on each side, i = -1 .. cells+1 for node\n"
            "    (cells + 3 points), -1 .. cells for cell (cells + 2), stored at i + 1. Row\n"
            "    g = a + Px*(b + Py*c), x fastest ((a, b, c) the stored indices, Px, Py the\n"
            "    points per axis); see include/partile/deposit.h.\n"
            "  assemble [options]         particle mass matrix M = sigma sum_p q_p W_gp W_g'p alpha_p\n"
            "                             (include/partile/mass.h), exported as CSR (scalar) or\n"
            "                             BSR with 3x3 blocks (tensor), both triangles\n"
            "      --backend, --device, --cells, --lower, --upper, --periodic, --positions\n"
            "                             the grid and particles, as for sort; positions in any\n"
            "                             order (sorted by cell first: partile_sort, partile_permute)\n"
            "      --shape NAME           cic or tsc (node points, numbered as for deposit); a\n"
            "                             periodic axis needs >= 3 cells (cic) or >= 5 (tsc)\n"
            "      --kind NAME            scalar (MPM, alpha = 1) or tensor (ECSIM: alpha_p =\n"
            "                             (I - C(w) + w w^T)/(1 + w.w), C(w)u = w x u)\n"
            "      --charges Q.npy        (Np,) float64, q_p\n"
            "      --omega W.npy          (Np, 3) float64, omega_p: required for tensor, refused\n"
            "                             for scalar\n"
            "      --sigma S              the factor sigma (default 1)\n"
            "      --precision NAME       fp64 (default; tf32 planned, not available yet)\n"
            "      --mode NAME            bitwise (default: the order of mass.h; relaxed planned,\n"
            "                             not available yet)\n"
            "      --out DIR              writes DIR/indptr.npy (points + 1), DIR/indices.npy\n"
            "                             (nnz), both int64, and DIR/data.npy, float64 (nnz,) or\n"
            "                             (nnz, 3, 3); DIR is created if missing. The backend must\n"
            "                             implement assembly (with --backend auto, the reference\n"
            "                             is used when the one picked does not)\n"
            "  pairs [options]            short-range pair interactions with a cutoff\n"
            "                             (include/partile/pairs.h), per particle\n"
            "      --backend, --device, --periodic, --positions\n"
            "                             as for sort; positions (Np, d) in any order (sorted by\n"
            "                             cell first: partile_sort, partile_permute)\n"
            "      --box X0[,Y0[,Z0]],X1[,Y1[,Z1]]\n"
            "                             lower then upper corner; d = 1, 2 or 3. The cell grid:\n"
            "                             per axis floor(length / cutoff) cells (at least 1),\n"
            "                             spacing length / cells >= cutoff; a periodic axis\n"
            "                             needs >= 3 cells\n"
            "      --interaction NAME     lj (Lennard-Jones force and energy) or sph (SPH\n"
            "                             cubic-spline density, self term included)\n"
            "      --cutoff R             cutoff radius r_c > 0\n"
            "      --epsilon E --sigma S [--shifted]\n"
            "                             lj: required; --shifted: energy 0 at r_c\n"
            "      --h H --mass M         sph: smoothing length (2h <= r_c) and particle mass\n"
            "      --strategy NAME        auto (default) or naive (the order of pairs.h);\n"
            "                             all-in-sm, x-pencil, x-pencil-reg planned, not\n"
            "                             available yet\n"
            "      --out DIR              lj: DIR/force.npy (Np, d) and DIR/energy.npy (Np,);\n"
            "                             sph: DIR/density.npy (Np,); in the positions' dtype and\n"
            "                             their order; DIR is created if missing. With --backend\n"
            "                             auto, the reference is used when the backend picked has\n"
            "                             no pair interactions\n"
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
    /* particle operations against the reference (the reference itself is
     * the specification: its own tests check it) */
    if (!o->shape && !o->list && strcmp(name, "reference") != 0) {
        partile_particle_check_t r;
        const char *group[2] = { "sort", "deposit/gather" };
        for (int k = 0; k < 2; k++) {
            st = k == 0 ? partile_check_sort(ctx, o->seed, stdout, &r)
                        : partile_check_transfer(ctx, o->seed, stdout, &r);
            (*shapes_run)++;
            if (st < 0) {
                report_error(group[k], st);
                failures++;
                continue;
            }
            failures += r.mismatches > 0;
            printf("   %-16s %s  %d cases, %d differ from the reference\n", group[k],
                   r.mismatches ? "FAIL" : "ok  ", r.cases, r.mismatches);
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

/* ---- options and inputs shared by sort, deposit and gather ------------- */

/* "partile CMD: WHAT: status: detail" for a library error; returns 1. */
static int cmd_error(const char *cmd, const char *what, int status)
{
    const char *detail = partile_last_error_detail();
    fprintf(stderr, "partile %s: %s: %s%s%s\n", cmd, what, partile_status_string(status),
            detail[0] ? ": " : "", detail);
    return 1;
}

/* 1 to max comma-separated numbers, each consumed entirely: their count,
 * or -1. */
static int parse_numbers(const char *s, int max, int integers, double *dval, int64_t *ival)
{
    int n = 0;
    const char *p = s;
    for (;;) {
        if (n == max || *p == '\0' || *p == ',')
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

/* "a[,b[,c]]": 1 to 3 comma-separated numbers, each consumed entirely. */
static int parse_list(const char *s, int integers, double *dval, int64_t *ival)
{
    return parse_numbers(s, 3, integers, dval, ival);
}

/* The grid and particle options every particle command takes. */
typedef struct grid_opts {
    const char *backend, *positions;
    const char *cells_arg, *lower_arg, *upper_arg;
    int device, periodic;
} grid_opts;

static void grid_opts_init(grid_opts *o)
{
    memset(o, 0, sizeof *o);
    o->backend = "auto";
}

/* If argv[*i] is one of --backend, --device, --cells, --lower, --upper,
 * --periodic, --positions (with its value where it takes one), consumes it
 * (advancing *i past a value) and returns 1; returns 0 if it is not one of
 * them, -1 after a message if its value is bad (a usage error). */
static int parse_grid_option(const char *cmd, grid_opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (!strcmp(a, "--periodic")) {
        o->periodic = 1;
        return 1;
    }
    if (*i + 1 >= argc)
        return 0;
    const char *v = argv[*i + 1];
    if (!strcmp(a, "--backend"))
        o->backend = v;
    else if (!strcmp(a, "--device")) {
        char *end;
        long d = strtol(v, &end, 10);
        if (*end || v[0] == '\0' || d < 0 || d > 1024) {
            fprintf(stderr, "partile %s: --device needs an index, got \"%s\"\n", cmd, v);
            return -1;
        }
        o->device = (int)d;
    } else if (!strcmp(a, "--cells"))
        o->cells_arg = v;
    else if (!strcmp(a, "--lower"))
        o->lower_arg = v;
    else if (!strcmp(a, "--upper"))
        o->upper_arg = v;
    else if (!strcmp(a, "--positions"))
        o->positions = v;
    else
        return 0;
    (*i)++;
    return 1;
}

/* The grid of dim axes with cells[m] cells from lower[m] to upper[m]
 * (every axis periodic or none); 0, or -1 after a message (a usage error)
 * if a spacing is not finite and > 0. */
static int fill_grid(const char *cmd, int dim, const int64_t *cells, const double *lower,
                     const double *upper, int periodic, partile_grid_t *grid)
{
    memset(grid, 0, sizeof *grid);
    grid->dim = dim;
    for (int m = 0; m < dim; m++) {
        double h = (upper[m] - lower[m]) / (double)cells[m];
        if (!isfinite(h) || !(h > 0.0)) {
            fprintf(stderr, "partile %s: axis %d: lower %g, upper %g and %" PRId64 " cells "
                            "give spacing %g; it must be finite and > 0\n",
                    cmd, m, lower[m], upper[m], cells[m], h);
            return -1;
        }
        grid->cells[m] = cells[m];
        grid->lower[m] = lower[m];
        grid->spacing[m] = h;
        grid->periodic[m] = periodic;
    }
    return 0;
}

/* The grid from --cells, --lower, --upper, --periodic; 0, or -1 after a
 * message (a usage error). */
static int build_grid(const char *cmd, const grid_opts *o, partile_grid_t *grid)
{
    memset(grid, 0, sizeof *grid);
    int64_t cells[3] = { 0 };
    double lower[3] = { 0, 0, 0 }, upper[3];
    int dim = parse_list(o->cells_arg, 1, NULL, cells);
    if (dim < 1) {
        fprintf(stderr, "partile %s: --cells needs 1 to 3 comma-separated integers, got \"%s\"\n",
                cmd, o->cells_arg);
        return -1;
    }
    for (int m = 0; m < dim; m++)
        if (cells[m] < 1) {
            fprintf(stderr, "partile %s: --cells: axis %d has %" PRId64 " cells, needs >= 1\n",
                    cmd, m, cells[m]);
            return -1;
        }
    if (o->lower_arg && parse_list(o->lower_arg, 0, lower, NULL) != dim) {
        fprintf(stderr, "partile %s: --lower needs %d finite number(s) (one per --cells "
                        "entry), got \"%s\"\n", cmd, dim, o->lower_arg);
        return -1;
    }
    for (int m = 0; m < dim; m++)
        upper[m] = lower[m] + (double)cells[m];
    if (o->upper_arg && parse_list(o->upper_arg, 0, upper, NULL) != dim) {
        fprintf(stderr, "partile %s: --upper needs %d finite number(s) (one per --cells "
                        "entry), got \"%s\"\n", cmd, dim, o->upper_arg);
        return -1;
    }
    return fill_grid(cmd, dim, cells, lower, upper, o->periodic, grid);
}

/* Positions read from a .npy file, split per axis (SoA) on the host. */
typedef struct host_positions {
    size_t n, esize;
    npy_dtype_t npy_type;
    partile_dtype_t type;
    void *axis[3]; /* at least one element each, so that n = 0 passes no NULL */
} host_positions;

static void host_positions_free(host_positions *p)
{
    for (int m = 0; m < 3; m++)
        free(p->axis[m]);
    memset(p, 0, sizeof *p);
}

/* Reads path: (Np, dim) float64 or float32, or (Np,) if dim = 1. 0, or -1
 * after a message (a data error). */
static int load_positions(const char *cmd, const char *path, int dim, host_positions *p)
{
    memset(p, 0, sizeof *p);
    npy_array_t pos;
    char err[NPY_ERR_SIZE];
    if (npy_read(path, &pos, err) < 0) {
        fprintf(stderr, "partile %s: %s: %s\n", cmd, path, err);
        return -1;
    }
    int rc = -1;
    if (pos.dtype != NPY_DTYPE_F8 && pos.dtype != NPY_DTYPE_F4) {
        fprintf(stderr, "partile %s: %s: positions must be float64 or float32, not %s\n", cmd,
                path, npy_dtype_name(pos.dtype));
        goto done;
    }
    if ((pos.ndim == 2 && pos.shape[1] != dim) || (pos.ndim == 1 && dim != 1)) {
        if (pos.ndim == 2)
            fprintf(stderr, "partile %s: %s: positions have shape (%" PRId64 ", %" PRId64 "), "
                            "need (Np, %d) for the %d grid axes\n",
                    cmd, path, pos.shape[0], pos.shape[1], dim, dim);
        else
            fprintf(stderr, "partile %s: %s: positions have shape (%" PRId64 ",), need "
                            "(Np, %d) for the %d grid axes\n",
                    cmd, path, pos.shape[0], dim, dim);
        goto done;
    }
    p->n = (size_t)pos.shape[0];
    p->npy_type = pos.dtype;
    p->esize = npy_dtype_size(pos.dtype);
    p->type = pos.dtype == NPY_DTYPE_F8 ? PARTILE_DTYPE_FLOAT64 : PARTILE_DTYPE_FLOAT32;
    if (p->n > SIZE_MAX / 64) {
        fprintf(stderr, "partile %s: %s: %zu particles: sizes overflow\n", cmd, path, p->n);
        goto done;
    }
    /* AoS (Np, d) -> SoA, one array per axis. */
    const unsigned char *src = pos.data;
    size_t n = p->n, esize = p->esize;
    for (int m = 0; m < dim; m++) {
        p->axis[m] = malloc((n ? n : 1) * esize);
        if (!p->axis[m]) {
            fprintf(stderr, "partile %s: out of host memory\n", cmd);
            goto done;
        }
        for (size_t q = 0; q < n; q++)
            memcpy((unsigned char *)p->axis[m] + q * esize,
                   src + (q * (size_t)dim + (size_t)m) * esize, esize);
    }
    rc = 0;
done:
    if (rc < 0)
        host_positions_free(p);
    npy_array_free(&pos);
    return rc;
}

/* Context memory of bytes (> 0), filled from host (when not NULL). */
static int device_copy_of(partile_context_t *ctx, const void *host, size_t bytes, void **dev)
{
    int st = partile_malloc(ctx, bytes, dev);
    if (st >= 0 && host)
        st = partile_memcpy(ctx, *dev, host, bytes, PARTILE_COPY_HOST_TO_DEVICE);
    return st;
}

/* The context for --backend / --device; NULL after a message. */
static partile_context_t *open_context(const char *cmd, const grid_opts *o)
{
    partile_context_t *ctx = NULL;
    int st = partile_context_create(o->backend, o->device, &ctx);
    if (st < 0) {
        char what[128];
        snprintf(what, sizeof what, "backend \"%s\"", o->backend);
        cmd_error(cmd, what, st);
        return NULL;
    }
    return ctx;
}

/* The context for --backend / --device that implements an operation:
 * probe(ctx) answers 0 if it does, PARTILE_ERROR_UNSUPPORTED if not. With
 * --backend auto, a backend without it gives way to the reference, with a
 * note on stderr ("... which has no FEATURE yet; DOING on \"reference\"
 * instead"). NULL after a message. */
static partile_context_t *open_context_with(const char *cmd, const grid_opts *o,
                                            int (*probe)(partile_context_t *),
                                            const char *feature, const char *doing)
{
    partile_context_t *ctx = open_context(cmd, o);
    if (!ctx)
        return NULL;
    int st = probe(ctx);
    if (st == PARTILE_ERROR_UNSUPPORTED && !strcmp(o->backend, "auto") &&
        strcmp(partile_context_backend(ctx), "reference") != 0) {
        fprintf(stderr, "partile %s: note: --backend auto picked \"%s\", which has no %s yet; "
                        "%s on \"reference\" instead\n",
                cmd, partile_context_backend(ctx), feature, doing);
        partile_context_destroy(ctx);
        grid_opts ref = *o;
        ref.backend = "reference";
        ref.device = 0;
        if (!(ctx = open_context(cmd, &ref)))
            return NULL;
        st = probe(ctx);
    }
    if (st < 0) {
        char what[160];
        snprintf(what, sizeof what, "backend \"%s\"", partile_context_backend(ctx));
        cmd_error(cmd, what, st);
        partile_context_destroy(ctx);
        return NULL;
    }
    return ctx;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- partile sort ------------------------------------------------------- */

/* Creates dir if missing (one level); an existing directory is fine.
 * Returns 1 if it was created, 0 if it existed, -1 after a message. */
static int make_dir(const char *cmd, const char *dir)
{
    if (mkdir(dir, 0777) == 0)
        return 1;
    int e = errno;
    struct stat st;
    if (e == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    fprintf(stderr, "partile %s: cannot create directory \"%s\": %s\n", cmd, dir,
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
    grid_opts go;
    grid_opts_init(&go);
    const char *out = NULL;
    for (int i = 0; i < argc; i++) {
        int r = parse_grid_option("sort", &go, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        const char *a = argv[i];
        if (!strcmp(a, "--out") && i + 1 < argc)
            out = argv[++i];
        else {
            fprintf(stderr, "partile sort: unknown or incomplete option \"%s\"\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!go.cells_arg || !go.positions || !out) {
        fprintf(stderr, "partile sort: --cells, --positions and --out are required\n");
        usage(stderr);
        return 2;
    }
    if (out[0] == '\0') {
        fprintf(stderr, "partile sort: --out needs a directory name\n");
        return 2;
    }
    partile_grid_t grid;
    if (build_grid("sort", &go, &grid) < 0)
        return 2;
    const int dim = grid.dim;
    const char *positions = go.positions;

    host_positions hp;
    if (load_positions("sort", positions, dim, &hp) < 0)
        return 1;
    int rc = 1;
    partile_context_t *ctx = NULL;
    void *dev_axis[3] = { NULL, NULL, NULL };
    int64_t *offsets = NULL, *perm = NULL, *cell = NULL;
    int64_t *d_offsets = NULL, *d_perm = NULL, *d_cell = NULL;
    char *paths[3] = { NULL, NULL, NULL };
    char err[NPY_ERR_SIZE];
    int written = 0;
    size_t n = hp.n;

    if (!(ctx = open_context("sort", &go)))
        goto done;
    int64_t ncells = 0;
    int st = partile_grid_cell_count(&grid, &ncells);
    if (st < 0) {
        cmd_error("sort", "grid", st);
        goto done;
    }
    if ((uint64_t)ncells >= SIZE_MAX / 8) {
        fprintf(stderr, "partile sort: %zu particles, %" PRId64 " cells: sizes overflow\n", n,
                ncells);
        goto done;
    }
    /* Context memory: at least one element each, so that n = 0 passes no NULL. */
    size_t axis_bytes = (n ? n : 1) * hp.esize, idx_bytes = (n ? n : 1) * sizeof(int64_t);
    size_t off_bytes = ((size_t)ncells + 1) * sizeof(int64_t);

    offsets = malloc(off_bytes);
    perm = malloc(idx_bytes);
    cell = malloc(idx_bytes);
    if (!offsets || !perm || !cell) {
        fprintf(stderr, "partile sort: out of host memory (%" PRId64 " cells)\n", ncells);
        goto done;
    }
    for (int m = 0; m < dim; m++)
        if ((st = device_copy_of(ctx, hp.axis[m], axis_bytes, &dev_axis[m])) < 0) {
            cmd_error("sort", "copying positions to the device", st);
            goto done;
        }
    if ((st = partile_malloc(ctx, off_bytes, (void **)&d_offsets)) < 0 ||
        (st = partile_malloc(ctx, idx_bytes, (void **)&d_perm)) < 0 ||
        (st = partile_malloc(ctx, idx_bytes, (void **)&d_cell)) < 0) {
        cmd_error("sort", "allocating the outputs", st);
        goto done;
    }

    partile_vectors_t vec;
    memset(&vec, 0, sizeof vec);
    vec.type = hp.type;
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
        cmd_error("sort", what, st);
        goto done;
    }
    if ((st = partile_memcpy(ctx, offsets, d_offsets, off_bytes, PARTILE_COPY_DEVICE_TO_HOST)) < 0 ||
        (st = partile_memcpy(ctx, perm, d_perm, idx_bytes, PARTILE_COPY_DEVICE_TO_HOST)) < 0 ||
        (st = partile_memcpy(ctx, cell, d_cell, idx_bytes, PARTILE_COPY_DEVICE_TO_HOST)) < 0) {
        cmd_error("sort", "copying results from the device", st);
        goto done;
    }

    /* The outputs. */
    if (make_dir("sort", out) < 0)
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
        printf("%s%" PRId64, m ? "x" : "", grid.cells[m]);
    printf("%s), backend %s, %s positions, %.3f ms; wrote %s/{perm,offsets,cell}.npy\n",
           go.periodic ? ", periodic" : "", partile_context_backend(ctx),
           npy_dtype_name(hp.npy_type), elapsed_ms, out);
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
    free(offsets);
    free(perm);
    free(cell);
    host_positions_free(&hp);
    return rc;
}

/* ---- partile deposit, partile gather ------------------------------------ */

static const char *const shape_names[] = { "ngp", "cic", "tsc", "overlap" };

/* "7x6 = 42 node points; non-periodic axes: cells + 3, one ghost layer on each side" */
static void describe_field(const partile_grid_t *g, partile_centering_t c, const int64_t pts[3],
                           int64_t total, char *buf, size_t size)
{
    int k = snprintf(buf, size, "%" PRId64, pts[0]);
    for (int m = 1; m < g->dim && k > 0 && (size_t)k < size; m++)
        k += snprintf(buf + k, size - (size_t)k, "x%" PRId64, pts[m]);
    if (k < 0 || (size_t)k >= size)
        return;
    if (g->periodic[0])
        snprintf(buf + k, size - (size_t)k, " = %" PRId64 " %s points; periodic: one per cell",
                 total, c == PARTILE_CENTERING_NODE ? "node" : "cell-centre");
    else
        snprintf(buf + k, size - (size_t)k, " = %" PRId64 " %s points; non-periodic: cells + %d "
                 "per axis, one ghost layer on each side", total,
                 c == PARTILE_CENTERING_NODE ? "node" : "cell-centre",
                 c == PARTILE_CENTERING_NODE ? 3 : 2);
}

/* A float64 .npy file; 0, or -1 after a message. */
static int read_f64(const char *cmd, const char *path, const char *what, npy_array_t *a)
{
    char err[NPY_ERR_SIZE];
    if (npy_read(path, a, err) < 0) {
        fprintf(stderr, "partile %s: %s: %s\n", cmd, path, err);
        return -1;
    }
    if (a->dtype != NPY_DTYPE_F8) {
        fprintf(stderr, "partile %s: %s: %s must be float64, not %s\n", cmd, path, what,
                npy_dtype_name(a->dtype));
        npy_array_free(a);
        return -1;
    }
    return 0;
}

/* After an error naming particle `bad` of the sorted order: which particle
 * of the input file it is (d_perm: the sort's permutation, context memory). */
static void report_sorted_particle(const char *cmd, partile_context_t *ctx, const int64_t *d_perm,
                                   int64_t bad, size_t n, const char *positions)
{
    int64_t orig;
    if (d_perm && bad >= 0 && (size_t)bad < n &&
        partile_memcpy(ctx, &orig, d_perm + bad, sizeof orig, PARTILE_COPY_DEVICE_TO_HOST) >= 0)
        fprintf(stderr, "partile %s: (particle %" PRId64 " of the sorted order is particle "
                        "%" PRId64 " of %s)\n", cmd, bad, orig, positions);
}

/* deposit (is_deposit = 1) or gather (0). */
static int cmd_transfer(int argc, char **argv, int is_deposit)
{
    const char *cmd = is_deposit ? "deposit" : "gather";
    grid_opts go;
    grid_opts_init(&go);
    const char *shape_arg = NULL, *centering_arg = "node", *sizes_path = NULL;
    const char *values_path = NULL, *grid_path = NULL, *out = NULL;
    int sorted = 0;
    for (int i = 0; i < argc; i++) {
        int r = parse_grid_option(cmd, &go, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (!strcmp(a, "--shape") && has_value)
            shape_arg = argv[++i];
        else if (!strcmp(a, "--centering") && has_value)
            centering_arg = argv[++i];
        else if (!strcmp(a, "--sizes") && has_value)
            sizes_path = argv[++i];
        else if (!strcmp(a, "--grid") && has_value)
            grid_path = argv[++i];
        else if (!strcmp(a, "--out") && has_value)
            out = argv[++i];
        else if (is_deposit && !strcmp(a, "--values") && has_value)
            values_path = argv[++i];
        else if (is_deposit && !strcmp(a, "--sorted"))
            sorted = 1;
        else {
            fprintf(stderr, "partile %s: unknown or incomplete option \"%s\"\n", cmd, a);
            usage(stderr);
            return 2;
        }
    }
    {
        const char *need[5] = { go.cells_arg, go.positions, shape_arg,
                                is_deposit ? values_path : grid_path, out };
        const char *names[5] = { "--cells", "--positions", "--shape",
                                 is_deposit ? "--values" : "--grid", "--out" };
        char missing[128] = "";
        for (int k = 0; k < 5; k++)
            if (!need[k]) {
                strcat(missing, missing[0] ? ", " : "");
                strcat(missing, names[k]);
            }
        if (missing[0]) {
            fprintf(stderr, "partile %s: missing %s (required: --cells, --positions, --shape, "
                            "%s, --out)\n", cmd, missing, names[3]);
            usage(stderr);
            return 2;
        }
    }
    if (out[0] == '\0') {
        fprintf(stderr, "partile %s: --out needs a file name\n", cmd);
        return 2;
    }
    partile_shape_t shape = PARTILE_SHAPE_NGP;
    int shape_ok = 0;
    for (int k = 0; k < 4; k++)
        if (!strcmp(shape_arg, shape_names[k])) {
            shape = (partile_shape_t)k;
            shape_ok = 1;
        }
    if (!shape_ok) {
        fprintf(stderr, "partile %s: --shape needs ngp, cic, tsc or overlap, got \"%s\"\n", cmd,
                shape_arg);
        return 2;
    }
    partile_centering_t centering;
    if (!strcmp(centering_arg, "node"))
        centering = PARTILE_CENTERING_NODE;
    else if (!strcmp(centering_arg, "cell"))
        centering = PARTILE_CENTERING_CELL;
    else {
        fprintf(stderr, "partile %s: --centering needs node or cell, got \"%s\"\n", cmd,
                centering_arg);
        return 2;
    }
    if (shape == PARTILE_SHAPE_OVERLAP && !sizes_path) {
        fprintf(stderr, "partile %s: --shape overlap needs --sizes D.npy (the width of each "
                        "particle's cube)\n", cmd);
        return 2;
    }
    if (shape != PARTILE_SHAPE_OVERLAP && sizes_path) {
        fprintf(stderr, "partile %s: --sizes is only for --shape overlap (the shape is %s)\n",
                cmd, shape_arg);
        return 2;
    }
    partile_grid_t grid;
    if (build_grid(cmd, &go, &grid) < 0)
        return 2;
    const int dim = grid.dim;
    int64_t points[3], total = 0;
    int st = partile_field_shape(&grid, centering, points, &total);
    if (st < 0)
        return cmd_error(cmd, "grid", st);
    char field_desc[256];
    describe_field(&grid, centering, points, total, field_desc, sizeof field_desc);
    if ((uint64_t)total > SIZE_MAX / (8 * PARTILE_MAX_COMPONENTS)) {
        fprintf(stderr, "partile %s: the field has %" PRId64 " points: sizes overflow\n", cmd,
                total);
        return 1;
    }

    /* The inputs. */
    host_positions hp;
    if (load_positions(cmd, go.positions, dim, &hp) < 0)
        return 1;
    const size_t n = hp.n;
    int rc = 1;
    npy_array_t vals = { 0 }, gfile = { 0 }, sizes = { 0 };
    partile_context_t *ctx = NULL;
    void *d_axis[3] = { NULL, NULL, NULL };
    double *d_sizes = NULL, *d_values = NULL, *d_field = NULL, *d_split = NULL;
    int64_t *d_offsets = NULL, *d_perm = NULL;
    double *h_field = NULL, *h_values = NULL, *h_split = NULL;
    int m = 1, out_1d = 0;

    if (is_deposit) {
        if (read_f64(cmd, values_path, "values", &vals) < 0)
            goto done;
        m = vals.ndim == 1 ? 1 : (int)(vals.shape[1] < 1000 ? vals.shape[1] : 1000);
        out_1d = vals.ndim == 1;
        if ((size_t)vals.shape[0] != n) {
            fprintf(stderr, "partile %s: %s: values have %" PRId64 " rows, %s has %zu "
                            "particles\n", cmd, values_path, vals.shape[0], go.positions, n);
            goto done;
        }
        if (m < 1 || m > PARTILE_MAX_COMPONENTS) {
            fprintf(stderr, "partile %s: %s: values have %" PRId64 " columns, need 1 to %d "
                            "components\n", cmd, values_path, vals.shape[1],
                    PARTILE_MAX_COMPONENTS);
            goto done;
        }
    }
    if (grid_path) {
        if (read_f64(cmd, grid_path, "the grid", &gfile) < 0)
            goto done;
        if (gfile.shape[0] != total) {
            fprintf(stderr, "partile %s: %s: grid has %" PRId64 " rows, the field needs %" PRId64
                            " points (%s)\n", cmd, grid_path, gfile.shape[0], total, field_desc);
            goto done;
        }
        int64_t cols = gfile.ndim == 1 ? 1 : gfile.shape[1];
        if (is_deposit && cols != m) {
            fprintf(stderr, "partile %s: %s: grid has %" PRId64 " columns, the values %d "
                            "component(s)\n", cmd, grid_path, cols, m);
            goto done;
        }
        if (!is_deposit) {
            if (cols < 1 || cols > PARTILE_MAX_COMPONENTS) {
                fprintf(stderr, "partile %s: %s: grid has %" PRId64 " columns, need 1 to %d "
                                "components\n", cmd, grid_path, cols, PARTILE_MAX_COMPONENTS);
                goto done;
            }
            m = (int)cols;
            out_1d = gfile.ndim == 1;
        }
    }
    if (sizes_path) {
        if (read_f64(cmd, sizes_path, "sizes", &sizes) < 0)
            goto done;
        if (sizes.ndim != 1 || (size_t)sizes.shape[0] != n) {
            if (sizes.ndim == 1)
                fprintf(stderr, "partile %s: %s: sizes have shape (%" PRId64 ",), need (%zu,): "
                                "one per particle\n", cmd, sizes_path, sizes.shape[0], n);
            else
                fprintf(stderr, "partile %s: %s: sizes have shape (%" PRId64 ", %" PRId64 "), "
                                "need (%zu,): one per particle\n",
                        cmd, sizes_path, sizes.shape[0], sizes.shape[1], n);
            goto done;
        }
    }

    /* Host buffers; context memory holds at least one element each. */
    const size_t nn = n ? n : 1, mm = (size_t)m;
    const size_t field_bytes = (size_t)total * mm * sizeof(double);
    const size_t values_bytes = nn * mm * sizeof(double);
    h_field = malloc(field_bytes);
    h_values = malloc(values_bytes);
    if (!h_field || !h_values) {
        fprintf(stderr, "partile %s: out of host memory\n", cmd);
        goto done;
    }
    if (gfile.count)
        memcpy(h_field, gfile.data, field_bytes);
    else
        memset(h_field, 0, field_bytes); /* deposit without --grid: zeros */

    if (!(ctx = open_context(cmd, &go)))
        goto done;
    for (int a = 0; a < dim; a++)
        if ((st = device_copy_of(ctx, hp.axis[a], nn * hp.esize, &d_axis[a])) < 0) {
            cmd_error(cmd, "copying positions to the device", st);
            goto done;
        }
    if ((st = device_copy_of(ctx, h_field, field_bytes, (void **)&d_field)) < 0 ||
        (st = device_copy_of(ctx, is_deposit && n ? vals.data : NULL, values_bytes,
                             (void **)&d_values)) < 0 ||
        (sizes_path && (st = device_copy_of(ctx, n ? sizes.data : NULL, nn * sizeof(double),
                                            (void **)&d_sizes)) < 0)) {
        cmd_error(cmd, "copying the inputs to the device", st);
        goto done;
    }
    partile_vectors_t vec;
    memset(&vec, 0, sizeof vec);
    vec.type = hp.type;
    for (int a = 0; a < dim; a++)
        vec.axis[a] = d_axis[a];
    partile_transfer_t t;
    memset(&t, 0, sizeof t);
    t.grid = &grid;
    t.shape = shape;
    t.centering = centering;
    t.components = m;
    t.sizes = d_sizes;

    int64_t bad = -1;
    double t0 = now_s();
    if (sorted) {
        /* Sort by cell, reorder positions, sizes and each value component
         * (SoA: partile_permute takes arrays of n elements), then deposit
         * with the cell list. */
        int64_t ncells = 0;
        if ((st = partile_grid_cell_count(&grid, &ncells)) < 0) {
            cmd_error(cmd, "grid", st);
            goto done;
        }
        h_split = malloc(values_bytes);
        if (!h_split) {
            fprintf(stderr, "partile %s: out of host memory\n", cmd);
            goto done;
        }
        const double *v = vals.data;
        for (size_t p = 0; p < n; p++)
            for (size_t k = 0; k < mm; k++)
                h_split[k * n + p] = v[p * mm + k];
        if ((st = device_copy_of(ctx, h_split, values_bytes, (void **)&d_split)) < 0 ||
            (st = partile_malloc(ctx, ((size_t)ncells + 1) * sizeof(int64_t),
                                 (void **)&d_offsets)) < 0 ||
            (st = partile_malloc(ctx, nn * sizeof(int64_t), (void **)&d_perm)) < 0) {
            cmd_error(cmd, "allocating the cell list", st);
            goto done;
        }
        st = partile_sort(ctx, &grid, n, &vec, d_offsets, d_perm, NULL, &bad);
        if (st < 0) {
            char what[4200];
            snprintf(what, sizeof what, "sorting %s", go.positions);
            cmd_error(cmd, what, st);
            goto done;
        }
        partile_array_t arrays[3 + 1 + PARTILE_MAX_COMPONENTS];
        int count = 0;
        for (int a = 0; a < dim; a++)
            arrays[count++] = (partile_array_t){ d_axis[a], hp.type };
        if (d_sizes)
            arrays[count++] = (partile_array_t){ d_sizes, PARTILE_DTYPE_FLOAT64 };
        for (size_t k = 0; k < mm; k++)
            arrays[count++] = (partile_array_t){ d_split + k * n, PARTILE_DTYPE_FLOAT64 };
        if ((st = partile_permute(ctx, n, d_perm, count, arrays, NULL, 0)) < 0 ||
            (st = partile_memcpy(ctx, h_split, d_split, values_bytes,
                                 PARTILE_COPY_DEVICE_TO_HOST)) < 0) {
            cmd_error(cmd, "reordering the particles", st);
            goto done;
        }
        for (size_t p = 0; p < n; p++)
            for (size_t k = 0; k < mm; k++)
                h_values[p * mm + k] = h_split[k * n + p];
        if ((st = partile_memcpy(ctx, d_values, h_values, values_bytes,
                                 PARTILE_COPY_HOST_TO_DEVICE)) < 0) {
            cmd_error(cmd, "copying the sorted values to the device", st);
            goto done;
        }
    }
    if (is_deposit)
        st = partile_deposit(ctx, &t, n, &vec, d_values, sorted ? d_offsets : NULL, d_field,
                             &bad);
    else
        st = partile_gather(ctx, &t, n, &vec, d_field, d_values, &bad);
    if (st == 0)
        st = partile_context_synchronize(ctx);
    double elapsed_ms = (now_s() - t0) * 1e3;
    if (st < 0) {
        cmd_error(cmd, go.positions, st);
        if (sorted)
            report_sorted_particle(cmd, ctx, d_perm, bad, n, go.positions);
        goto done;
    }

    /* The output. */
    char err[NPY_ERR_SIZE];
    int64_t shape_out[2];
    if (is_deposit) {
        if ((st = partile_memcpy(ctx, h_field, d_field, field_bytes,
                                 PARTILE_COPY_DEVICE_TO_HOST)) < 0) {
            cmd_error(cmd, "copying the field from the device", st);
            goto done;
        }
        shape_out[0] = total;
    } else {
        if ((st = partile_memcpy(ctx, h_values, d_values, values_bytes,
                                 PARTILE_COPY_DEVICE_TO_HOST)) < 0) {
            cmd_error(cmd, "copying the values from the device", st);
            goto done;
        }
        shape_out[0] = (int64_t)n;
    }
    shape_out[1] = m;
    if (npy_write(out, NPY_DTYPE_F8, out_1d ? 1 : 2, shape_out, is_deposit ? h_field : h_values,
                  err) < 0) {
        fprintf(stderr, "partile %s: %s: %s\n", cmd, out, err);
        goto done;
    }
    printf("partile %s: %zu particles, %d component(s), shape %s, field %s, backend %s, "
           "%s positions%s, %.3f ms; wrote %s\n",
           cmd, n, m, shape_names[shape], field_desc, partile_context_backend(ctx),
           npy_dtype_name(hp.npy_type), sorted ? ", sorted first" : "", elapsed_ms, out);
    rc = 0;
done:
    if (ctx) {
        for (int a = 0; a < 3; a++)
            partile_free(ctx, d_axis[a]);
        partile_free(ctx, d_sizes);
        partile_free(ctx, d_values);
        partile_free(ctx, d_field);
        partile_free(ctx, d_split);
        partile_free(ctx, d_offsets);
        partile_free(ctx, d_perm);
        partile_context_destroy(ctx);
    }
    free(h_field);
    free(h_values);
    free(h_split);
    npy_array_free(&vals);
    npy_array_free(&gfile);
    npy_array_free(&sizes);
    host_positions_free(&hp);
    return rc;
}

/* ---- partile assemble --------------------------------------------------- */

/* Whether ctx's backend assembles mass matrices: a call with no particles on
 * a 3-cell periodic 1-D grid. 0 if it does, PARTILE_ERROR_UNSUPPORTED if
 * not, another status (< 0) if the probe itself failed. */
static int mass_probe(partile_context_t *ctx)
{
    partile_grid_t g;
    memset(&g, 0, sizeof g);
    g.dim = 1;
    g.cells[0] = 3;
    g.spacing[0] = 1.0;
    g.periodic[0] = 1;
    partile_mass_layout_t lay;
    int st = partile_mass_layout(&g, PARTILE_SHAPE_CIC, PARTILE_MASS_SCALAR, &lay);
    if (st < 0)
        return st;
    const int64_t zeros[4] = { 0, 0, 0, 0 };
    int64_t *d_off = NULL;
    double *d_store = NULL, *d_x = NULL;
    if ((st = device_copy_of(ctx, zeros, sizeof zeros, (void **)&d_off)) >= 0 &&
        (st = device_copy_of(ctx, NULL, lay.entries * sizeof(double), (void **)&d_store)) >= 0 &&
        (st = device_copy_of(ctx, NULL, sizeof(double), (void **)&d_x)) >= 0) {
        partile_vectors_t v;
        memset(&v, 0, sizeof v);
        v.type = PARTILE_DTYPE_FLOAT64;
        v.axis[0] = d_x;
        partile_mass_params_t p;
        memset(&p, 0, sizeof p); /* fields beyond these: zero / NULL */
        p.grid = &g;
        p.shape = PARTILE_SHAPE_CIC;
        p.kind = PARTILE_MASS_SCALAR;
        p.sigma = 1.0;
        st = partile_mass_assemble(ctx, &p, 0, &v, d_off, NULL, NULL, d_store, NULL);
        if (st == 0)
            st = partile_context_synchronize(ctx);
    }
    partile_free(ctx, d_off);
    partile_free(ctx, d_store);
    partile_free(ctx, d_x);
    return st;
}

static int cmd_assemble(int argc, char **argv)
{
    const char *cmd = "assemble";
    grid_opts go;
    grid_opts_init(&go);
    const char *shape_arg = NULL, *kind_arg = NULL, *charges_path = NULL, *omega_path = NULL;
    const char *sigma_arg = NULL, *precision = "fp64", *mode = "bitwise", *out = NULL;
    for (int i = 0; i < argc; i++) {
        int r = parse_grid_option(cmd, &go, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (!strcmp(a, "--shape") && has_value)
            shape_arg = argv[++i];
        else if (!strcmp(a, "--kind") && has_value)
            kind_arg = argv[++i];
        else if (!strcmp(a, "--charges") && has_value)
            charges_path = argv[++i];
        else if (!strcmp(a, "--omega") && has_value)
            omega_path = argv[++i];
        else if (!strcmp(a, "--sigma") && has_value)
            sigma_arg = argv[++i];
        else if (!strcmp(a, "--precision") && has_value)
            precision = argv[++i];
        else if (!strcmp(a, "--mode") && has_value)
            mode = argv[++i];
        else if (!strcmp(a, "--out") && has_value)
            out = argv[++i];
        else {
            fprintf(stderr, "partile %s: unknown or incomplete option \"%s\"\n", cmd, a);
            usage(stderr);
            return 2;
        }
    }
    {
        const char *need[6] = { go.cells_arg, go.positions, shape_arg, kind_arg, charges_path,
                                out };
        const char *names[6] = { "--cells", "--positions", "--shape", "--kind", "--charges",
                                 "--out" };
        char missing[128] = "";
        for (int k = 0; k < 6; k++)
            if (!need[k]) {
                strcat(missing, missing[0] ? ", " : "");
                strcat(missing, names[k]);
            }
        if (missing[0]) {
            fprintf(stderr, "partile %s: missing %s (required: --cells, --positions, --shape, "
                            "--kind, --charges, --out)\n", cmd, missing);
            usage(stderr);
            return 2;
        }
    }
    if (out[0] == '\0') {
        fprintf(stderr, "partile %s: --out needs a directory name\n", cmd);
        return 2;
    }
    partile_shape_t shape;
    if (!strcmp(shape_arg, "cic"))
        shape = PARTILE_SHAPE_CIC;
    else if (!strcmp(shape_arg, "tsc"))
        shape = PARTILE_SHAPE_TSC;
    else {
        fprintf(stderr, "partile %s: --shape needs cic or tsc, got \"%s\"\n", cmd, shape_arg);
        return 2;
    }
    partile_mass_kind_t kind;
    if (!strcmp(kind_arg, "scalar"))
        kind = PARTILE_MASS_SCALAR;
    else if (!strcmp(kind_arg, "tensor"))
        kind = PARTILE_MASS_TENSOR;
    else {
        fprintf(stderr, "partile %s: --kind needs scalar or tensor, got \"%s\"\n", cmd, kind_arg);
        return 2;
    }
    if (kind == PARTILE_MASS_TENSOR && !omega_path) {
        fprintf(stderr, "partile %s: --kind tensor needs --omega W.npy ((Np, 3) float64, omega "
                        "per particle)\n", cmd);
        return 2;
    }
    if (kind == PARTILE_MASS_SCALAR && omega_path) {
        fprintf(stderr, "partile %s: --omega is only for --kind tensor (the kind is scalar)\n",
                cmd);
        return 2;
    }
    double sigma = 1.0;
    if (sigma_arg) {
        char *end;
        sigma = strtod(sigma_arg, &end);
        if (end == sigma_arg || *end || !isfinite(sigma)) {
            fprintf(stderr, "partile %s: --sigma needs a finite number, got \"%s\"\n", cmd,
                    sigma_arg);
            return 2;
        }
    }
    if (strcmp(precision, "fp64") != 0) {
        fprintf(stderr, "partile %s: --precision \"%s\" is not available yet: only fp64 is "
                        "implemented (tf32 is planned)\n", cmd, precision);
        return 2;
    }
    if (strcmp(mode, "bitwise") != 0) {
        fprintf(stderr, "partile %s: --mode \"%s\" is not available yet: only bitwise is "
                        "implemented (relaxed is planned)\n", cmd, mode);
        return 2;
    }
    partile_grid_t grid;
    if (build_grid(cmd, &go, &grid) < 0)
        return 2;
    const int dim = grid.dim;
    const int comps = kind == PARTILE_MASS_TENSOR ? 9 : 1;
    partile_mass_layout_t layout;
    int64_t nnz = 0, ncells = 0;
    int st;
    if ((st = partile_mass_layout(&grid, shape, kind, &layout)) < 0 ||
        (st = partile_mass_export_count(&grid, shape, &nnz)) < 0 ||
        (st = partile_grid_cell_count(&grid, &ncells)) < 0)
        return cmd_error(cmd, "grid", st);
    if ((uint64_t)nnz > SIZE_MAX / (9 * sizeof(double)) ||
        (uint64_t)layout.points >= SIZE_MAX / sizeof(int64_t) ||
        (uint64_t)ncells >= SIZE_MAX / sizeof(int64_t)) {
        fprintf(stderr, "partile %s: %" PRId64 " points, %" PRId64 " nonzeros: sizes overflow\n",
                cmd, layout.points, nnz);
        return 1;
    }

    /* The inputs. */
    host_positions hp;
    if (load_positions(cmd, go.positions, dim, &hp) < 0)
        return 1;
    const size_t n = hp.n, nn = n ? n : 1;
    int rc = 1;
    npy_array_t charges = { 0 }, omega = { 0 };
    partile_context_t *ctx = NULL;
    void *d_axis[3] = { NULL, NULL, NULL };
    double *d_q = NULL, *d_omega = NULL, *d_storage = NULL;
    int64_t *d_offsets = NULL, *d_perm = NULL;
    double *h_omega = NULL, *h_storage = NULL, *h_data = NULL;
    int64_t *h_indptr = NULL, *h_indices = NULL;
    char *paths[3] = { NULL, NULL, NULL };
    int written = 0, created = 0;

    if (read_f64(cmd, charges_path, "charges", &charges) < 0)
        goto done;
    if (charges.ndim != 1 || (size_t)charges.shape[0] != n) {
        if (charges.ndim == 1)
            fprintf(stderr, "partile %s: %s: charges have shape (%" PRId64 ",), need (%zu,): "
                            "one per particle\n", cmd, charges_path, charges.shape[0], n);
        else
            fprintf(stderr, "partile %s: %s: charges have shape (%" PRId64 ", %" PRId64 "), "
                            "need (%zu,): one per particle\n",
                    cmd, charges_path, charges.shape[0], charges.shape[1], n);
        goto done;
    }
    if (omega_path) {
        if (read_f64(cmd, omega_path, "omega", &omega) < 0)
            goto done;
        if (omega.ndim != 2 || omega.shape[1] != 3 || (size_t)omega.shape[0] != n) {
            if (omega.ndim == 1)
                fprintf(stderr, "partile %s: %s: omega has shape (%" PRId64 ",), need (%zu, 3): "
                                "one 3-vector per particle\n", cmd, omega_path, omega.shape[0], n);
            else
                fprintf(stderr, "partile %s: %s: omega has shape (%" PRId64 ", %" PRId64 "), "
                                "need (%zu, 3): one 3-vector per particle\n",
                        cmd, omega_path, omega.shape[0], omega.shape[1], n);
            goto done;
        }
        /* (Np, 3) -> SoA x, y, z */
        h_omega = malloc(3 * nn * sizeof(double));
        if (!h_omega) {
            fprintf(stderr, "partile %s: out of host memory\n", cmd);
            goto done;
        }
        const double *w = omega.data;
        for (size_t p = 0; p < n; p++)
            for (int c = 0; c < 3; c++)
                h_omega[(size_t)c * nn + p] = w[3 * p + (size_t)c];
    }
    h_storage = malloc(layout.entries * sizeof(double));
    h_indptr = malloc(((size_t)layout.points + 1) * sizeof(int64_t));
    h_indices = malloc((nnz ? (size_t)nnz : 1) * sizeof(int64_t));
    h_data = malloc((nnz ? (size_t)nnz : 1) * (size_t)comps * sizeof(double));
    if (!h_storage || !h_indptr || !h_indices || !h_data) {
        fprintf(stderr, "partile %s: out of host memory (%" PRId64 " points, %" PRId64
                        " nonzeros)\n", cmd, layout.points, nnz);
        goto done;
    }

    /* The backend: it must implement assembly; auto falls back to the reference. */
    if (!(ctx = open_context_with(cmd, &go, mass_probe, "mass-matrix assembly", "assembling")))
        goto done;

    for (int a = 0; a < dim; a++)
        if ((st = device_copy_of(ctx, hp.axis[a], nn * hp.esize, &d_axis[a])) < 0) {
            cmd_error(cmd, "copying positions to the device", st);
            goto done;
        }
    if ((st = device_copy_of(ctx, n ? charges.data : NULL, nn * sizeof(double),
                             (void **)&d_q)) < 0 ||
        (h_omega && (st = device_copy_of(ctx, h_omega, 3 * nn * sizeof(double),
                                         (void **)&d_omega)) < 0)) {
        cmd_error(cmd, "copying the inputs to the device", st);
        goto done;
    }
    if ((st = partile_malloc(ctx, ((size_t)ncells + 1) * sizeof(int64_t),
                             (void **)&d_offsets)) < 0 ||
        (st = partile_malloc(ctx, nn * sizeof(int64_t), (void **)&d_perm)) < 0 ||
        (st = partile_malloc(ctx, layout.entries * sizeof(double), (void **)&d_storage)) < 0) {
        cmd_error(cmd, "allocating the cell list and the matrix", st);
        goto done;
    }
    partile_vectors_t vec, om;
    memset(&vec, 0, sizeof vec);
    memset(&om, 0, sizeof om);
    vec.type = hp.type;
    for (int a = 0; a < dim; a++)
        vec.axis[a] = d_axis[a];
    om.type = PARTILE_DTYPE_FLOAT64;
    if (d_omega)
        for (int c = 0; c < 3; c++)
            om.axis[c] = d_omega + (size_t)c * nn;

    /* Sort by cell, reorder positions, charges and omega, assemble. */
    int64_t bad = -1;
    double t0 = now_s();
    st = partile_sort(ctx, &grid, n, &vec, d_offsets, d_perm, NULL, &bad);
    if (st < 0) {
        char what[4200];
        snprintf(what, sizeof what, "sorting %s", go.positions);
        cmd_error(cmd, what, st);
        goto done;
    }
    partile_array_t arrays[3 + 1 + 3];
    int count = 0;
    for (int a = 0; a < dim; a++)
        arrays[count++] = (partile_array_t){ d_axis[a], hp.type };
    arrays[count++] = (partile_array_t){ d_q, PARTILE_DTYPE_FLOAT64 };
    if (d_omega)
        for (int c = 0; c < 3; c++)
            arrays[count++] = (partile_array_t){ d_omega + (size_t)c * nn, PARTILE_DTYPE_FLOAT64 };
    if ((st = partile_permute(ctx, n, d_perm, count, arrays, NULL, 0)) == 0)
        st = partile_context_synchronize(ctx);
    if (st < 0) {
        cmd_error(cmd, "reordering the particles", st);
        goto done;
    }
    double t1 = now_s();
    partile_mass_params_t params;
    memset(&params, 0, sizeof params); /* accumulate 0; omega given per particle */
    params.grid = &grid;
    params.shape = shape;
    params.kind = kind;
    params.sigma = sigma;
    st = partile_mass_assemble(ctx, &params, n, &vec, d_offsets, d_q, d_omega ? &om : NULL,
                               d_storage, &bad);
    if (st == 0)
        st = partile_context_synchronize(ctx);
    double t2 = now_s();
    if (st < 0) {
        cmd_error(cmd, go.positions, st);
        report_sorted_particle(cmd, ctx, d_perm, bad, n, go.positions);
        goto done;
    }
    if ((st = partile_memcpy(ctx, h_storage, d_storage, layout.entries * sizeof(double),
                             PARTILE_COPY_DEVICE_TO_HOST)) < 0) {
        cmd_error(cmd, "copying the matrix from the device", st);
        goto done;
    }
    if ((st = partile_mass_export(&grid, shape, kind, h_storage, h_indptr, h_indices,
                                  h_data)) < 0) {
        cmd_error(cmd, "export", st);
        goto done;
    }

    /* The outputs. */
    if ((created = make_dir(cmd, out)) < 0) {
        created = 0;
        goto done;
    }
    {
        static const char *names[3] = { "indptr.npy", "indices.npy", "data.npy" };
        char err[NPY_ERR_SIZE];
        for (int k = 0; k < 3; k++) {
            paths[k] = join_path(out, names[k]);
            if (!paths[k]) {
                fprintf(stderr, "partile %s: out of host memory\n", cmd);
                goto done;
            }
            int w;
            if (k == 0)
                w = npy_write_i64(paths[k], h_indptr, (size_t)layout.points + 1, err);
            else if (k == 1)
                w = npy_write_i64(paths[k], h_indices, (size_t)nnz, err);
            else {
                const int64_t shape_out[3] = { nnz, 3, 3 };
                w = npy_write_nd(paths[k], NPY_DTYPE_F8, kind == PARTILE_MASS_TENSOR ? 3 : 1,
                                 shape_out, h_data, err);
            }
            if (w < 0) {
                fprintf(stderr, "partile %s: %s: %s\n", cmd, paths[k], err);
                goto done;
            }
            written = k + 1;
        }
    }
    printf("partile %s: %zu particles, %" PRId64 " points, nnz %" PRId64 " (%s), shape %s, "
           "kind %s, sigma %g, cells ", cmd, n, layout.points, nnz,
           kind == PARTILE_MASS_TENSOR ? "3x3 blocks" : "entries", shape_arg, kind_arg, sigma);
    for (int a = 0; a < dim; a++)
        printf("%s%" PRId64, a ? "x" : "", grid.cells[a]);
    printf("%s, backend %s, %s positions, fp64 bitwise, %.3f ms (sort %.3f, assembly %.3f); "
           "wrote %s/{indptr,indices,data}.npy\n",
           go.periodic ? " periodic" : "", partile_context_backend(ctx),
           npy_dtype_name(hp.npy_type), (t2 - t0) * 1e3, (t1 - t0) * 1e3, (t2 - t1) * 1e3, out);
    rc = 0;
done:
    if (rc != 0) {
        for (int k = 0; k < written; k++)
            remove(paths[k]);
        if (created)
            rmdir(out);
    }
    for (int k = 0; k < 3; k++)
        free(paths[k]);
    if (ctx) {
        for (int a = 0; a < 3; a++)
            partile_free(ctx, d_axis[a]);
        partile_free(ctx, d_q);
        partile_free(ctx, d_omega);
        partile_free(ctx, d_storage);
        partile_free(ctx, d_offsets);
        partile_free(ctx, d_perm);
        partile_context_destroy(ctx);
    }
    free(h_omega);
    free(h_storage);
    free(h_data);
    free(h_indptr);
    free(h_indices);
    npy_array_free(&charges);
    npy_array_free(&omega);
    host_positions_free(&hp);
    return rc;
}

/* ---- partile pairs ------------------------------------------------------ */

/* Whether ctx's backend computes pair interactions: one particle on a 3-cell
 * periodic 1-D grid (with no particles the library answers before asking
 * the backend). 0 if it does, PARTILE_ERROR_UNSUPPORTED if not, another
 * status (< 0) if the probe itself failed. */
static int pairs_probe(partile_context_t *ctx)
{
    partile_grid_t g;
    memset(&g, 0, sizeof g);
    g.dim = 1;
    g.cells[0] = 3;
    g.spacing[0] = 1.0;
    g.periodic[0] = 1;
    partile_pair_params_t p;
    memset(&p, 0, sizeof p);
    p.interaction = PARTILE_PAIRS_LJ;
    p.cutoff = 1.0;
    p.epsilon = 1.0;
    p.sigma = 0.5;
    const int64_t offsets[4] = { 0, 1, 1, 1 };
    const double x = 0.5;
    int64_t *d_off = NULL;
    double *d_x = NULL, *d_e = NULL;
    int st;
    if ((st = device_copy_of(ctx, offsets, sizeof offsets, (void **)&d_off)) >= 0 &&
        (st = device_copy_of(ctx, &x, sizeof x, (void **)&d_x)) >= 0 &&
        (st = device_copy_of(ctx, NULL, sizeof(double), (void **)&d_e)) >= 0) {
        partile_vectors_t v;
        memset(&v, 0, sizeof v);
        v.type = PARTILE_DTYPE_FLOAT64;
        v.axis[0] = d_x;
        st = partile_pairs(ctx, &g, &p, 1, &v, d_off, NULL, d_e, NULL, NULL);
        if (st == 0)
            st = partile_context_synchronize(ctx);
    }
    partile_free(ctx, d_off);
    partile_free(ctx, d_x);
    partile_free(ctx, d_e);
    return st;
}

/* A finite number for option opt; 0, or -1 after a message (a usage error). */
static int parse_number_option(const char *cmd, const char *opt, const char *arg, double *v)
{
    if (parse_numbers(arg, 1, 0, v, NULL) != 1) {
        fprintf(stderr, "partile %s: %s needs a finite number, got \"%s\"\n", cmd, opt, arg);
        return -1;
    }
    return 0;
}

/* "5x5x6 periodic, spacing 1.2x1x1" */
static void describe_grid(const partile_grid_t *g, char *buf, size_t size)
{
    int k = 0;
    for (int m = 0; m < g->dim && k >= 0 && (size_t)k < size; m++)
        k += snprintf(buf + k, size - (size_t)k, "%s%" PRId64, m ? "x" : "", g->cells[m]);
    if (k >= 0 && (size_t)k < size)
        k += snprintf(buf + k, size - (size_t)k, "%s, spacing ",
                      g->periodic[0] ? " periodic" : "");
    for (int m = 0; m < g->dim && k >= 0 && (size_t)k < size; m++)
        k += snprintf(buf + k, size - (size_t)k, "%s%.17g", m ? "x" : "", g->spacing[m]);
}

static int cmd_pairs(int argc, char **argv)
{
    const char *cmd = "pairs";
    grid_opts go;
    grid_opts_init(&go);
    const char *interaction_arg = NULL, *box_arg = NULL, *strategy = "auto", *out = NULL;
    /* the numbers: cutoff, epsilon, sigma, h, mass */
    enum { CUTOFF, EPSILON, SIGMA, H, MASS, NUMBERS };
    static const char *const number_opts[NUMBERS] = { "--cutoff", "--epsilon", "--sigma", "--h",
                                                      "--mass" };
    const char *number_args[NUMBERS] = { NULL };
    double number[NUMBERS] = { 0 };
    int shifted = 0;
    for (int i = 0; i < argc; i++) {
        int r = parse_grid_option(cmd, &go, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        const char *a = argv[i];
        int has_value = i + 1 < argc, known = 0;
        for (int k = 0; k < NUMBERS; k++)
            if (!strcmp(a, number_opts[k]) && has_value) {
                number_args[k] = argv[++i];
                known = 1;
            }
        if (known)
            continue;
        if (!strcmp(a, "--interaction") && has_value)
            interaction_arg = argv[++i];
        else if (!strcmp(a, "--box") && has_value)
            box_arg = argv[++i];
        else if (!strcmp(a, "--strategy") && has_value)
            strategy = argv[++i];
        else if (!strcmp(a, "--shifted"))
            shifted = 1;
        else if (!strcmp(a, "--out") && has_value)
            out = argv[++i];
        else {
            fprintf(stderr, "partile %s: unknown or incomplete option \"%s\"\n", cmd, a);
            usage(stderr);
            return 2;
        }
    }
    if (go.cells_arg || go.lower_arg || go.upper_arg) {
        fprintf(stderr, "partile %s: --cells, --lower and --upper are not for pairs: the cell "
                        "grid comes from --box and --cutoff\n", cmd);
        return 2;
    }
    {
        const char *need[5] = { interaction_arg, number_args[CUTOFF], box_arg, go.positions,
                                out };
        const char *names[5] = { "--interaction", "--cutoff", "--box", "--positions", "--out" };
        char missing[128] = "";
        for (int k = 0; k < 5; k++)
            if (!need[k]) {
                strcat(missing, missing[0] ? ", " : "");
                strcat(missing, names[k]);
            }
        if (missing[0]) {
            fprintf(stderr, "partile %s: missing %s (required: --interaction, --cutoff, --box, "
                            "--positions, --out)\n", cmd, missing);
            usage(stderr);
            return 2;
        }
    }
    if (out[0] == '\0') {
        fprintf(stderr, "partile %s: --out needs a directory name\n", cmd);
        return 2;
    }
    partile_pair_params_t params;
    memset(&params, 0, sizeof params);
    int lj;
    if (!strcmp(interaction_arg, "lj"))
        lj = 1;
    else if (!strcmp(interaction_arg, "sph"))
        lj = 0;
    else {
        fprintf(stderr, "partile %s: --interaction needs lj or sph, got \"%s\"\n", cmd,
                interaction_arg);
        return 2;
    }
    params.interaction = lj ? PARTILE_PAIRS_LJ : PARTILE_PAIRS_SPH_DENSITY;
    {
        /* each interaction's own parameters are required, the other's refused */
        const int mine[2][2] = { { H, MASS }, { EPSILON, SIGMA } }; /* [lj] */
        const int theirs[2][2] = { { EPSILON, SIGMA }, { H, MASS } };
        for (int k = 0; k < 2; k++)
            if (!number_args[mine[lj][k]]) {
                fprintf(stderr, "partile %s: --interaction %s needs %s %s and %s %s\n", cmd,
                        interaction_arg, number_opts[mine[lj][0]], lj ? "E" : "H",
                        number_opts[mine[lj][1]], lj ? "S" : "M");
                return 2;
            }
        for (int k = 0; k < 2; k++)
            if (number_args[theirs[lj][k]]) {
                fprintf(stderr, "partile %s: %s is only for --interaction %s (the interaction "
                                "is %s)\n", cmd, number_opts[theirs[lj][k]], lj ? "sph" : "lj",
                        interaction_arg);
                return 2;
            }
        if (!lj && shifted) {
            fprintf(stderr, "partile %s: --shifted is only for --interaction lj (the "
                            "interaction is sph)\n", cmd);
            return 2;
        }
    }
    for (int k = 0; k < NUMBERS; k++)
        if (number_args[k] && parse_number_option(cmd, number_opts[k], number_args[k],
                                                  &number[k]) < 0)
            return 2;
    params.cutoff = number[CUTOFF];
    params.epsilon = number[EPSILON];
    params.sigma = number[SIGMA];
    params.shifted = shifted;
    params.h = number[H];
    params.mass = number[MASS];
    if (!(params.cutoff > 0.0)) {
        fprintf(stderr, "partile %s: --cutoff needs a number > 0, got \"%s\"\n", cmd,
                number_args[CUTOFF]);
        return 2;
    }
    /* The reference computes the one order of pairs.h; the faster GPU
     * strategies will reproduce it. */
    if (strcmp(strategy, "auto") != 0 && strcmp(strategy, "naive") != 0) {
        static const char *const planned[3] = { "all-in-sm", "x-pencil", "x-pencil-reg" };
        int is_planned = 0;
        for (int k = 0; k < 3; k++)
            is_planned |= !strcmp(strategy, planned[k]);
        if (is_planned)
            fprintf(stderr, "partile %s: --strategy \"%s\" is not available yet: only auto and "
                            "naive are implemented\n", cmd, strategy);
        else
            fprintf(stderr, "partile %s: --strategy needs auto, naive, all-in-sm, x-pencil or "
                            "x-pencil-reg, got \"%s\"\n", cmd, strategy);
        return 2;
    }

    /* The grid: --box X0[,Y0[,Z0]],X1[,Y1[,Z1]], cells floor(length / cutoff). */
    partile_grid_t grid;
    {
        double box[6];
        int count = parse_numbers(box_arg, 6, 0, box, NULL);
        if (count < 2 || count % 2) {
            fprintf(stderr, "partile %s: --box needs the lower then the upper corner, 2, 4 or 6 "
                            "finite numbers (X0,X1 or X0,Y0,X1,Y1 or X0,Y0,Z0,X1,Y1,Z1), got "
                            "\"%s\"\n", cmd, box_arg);
            return 2;
        }
        const int dim = count / 2;
        int64_t cells[3];
        for (int m = 0; m < dim; m++) {
            const double len = box[dim + m] - box[m];
            if (!(len > 0.0) || !isfinite(len)) {
                fprintf(stderr, "partile %s: --box: axis %d runs from %g to %g; the upper "
                                "corner must lie above the lower\n", cmd, m, box[m],
                        box[dim + m]);
                return 2;
            }
            const double k = floor(len / params.cutoff);
            if (!(k < 0x1p53)) {
                fprintf(stderr, "partile %s: --box: axis %d is %g long, %g cutoffs: too many "
                                "cells\n", cmd, m, len, len / params.cutoff);
                return 2;
            }
            cells[m] = k < 1.0 ? 1 : (int64_t)k;
            /* a cell at least a cutoff wide, also where len / cutoff rounded up */
            while (cells[m] > 1 && len / (double)cells[m] < params.cutoff)
                cells[m]--;
        }
        if (fill_grid(cmd, dim, cells, box, box + dim, go.periodic, &grid) < 0)
            return 2;
    }
    const int dim = grid.dim;
    int64_t ncells = 0;
    int st = partile_grid_cell_count(&grid, &ncells);
    if (st < 0)
        return cmd_error(cmd, "grid", st);
    char grid_desc[256];
    describe_grid(&grid, grid_desc, sizeof grid_desc);
    if ((uint64_t)ncells >= SIZE_MAX / (2 * sizeof(int64_t))) {
        fprintf(stderr, "partile %s: %" PRId64 " cells (%s): sizes overflow\n", cmd, ncells,
                grid_desc);
        return 1;
    }

    /* The inputs. */
    host_positions hp;
    if (load_positions(cmd, go.positions, dim, &hp) < 0)
        return 1;
    const size_t n = hp.n, nn = n ? n : 1, esize = hp.esize;
    int rc = 1;
    partile_context_t *ctx = NULL;
    void *d_axis[3] = { NULL, NULL, NULL }, *d_force[3] = { NULL, NULL, NULL };
    void *d_scalar = NULL;
    int64_t *d_offsets = NULL, *d_perm = NULL, *h_perm = NULL;
    unsigned char *h_sorted = NULL, *h_force = NULL, *h_scalar = NULL;
    static const char *const lj_names[2] = { "force.npy", "energy.npy" };
    static const char *const sph_names[1] = { "density.npy" };
    const char *const *names = lj ? lj_names : sph_names;
    const int nfiles = lj ? 2 : 1;
    char *paths[2] = { NULL, NULL };
    int written = 0, created = 0;

    h_perm = malloc(nn * sizeof(int64_t));
    h_sorted = malloc(nn * esize);
    h_scalar = malloc(nn * esize);
    h_force = lj ? malloc(nn * (size_t)dim * esize) : NULL;
    if (!h_perm || !h_sorted || !h_scalar || (lj && !h_force)) {
        fprintf(stderr, "partile %s: out of host memory (%zu particles)\n", cmd, n);
        goto done;
    }

    /* The backend: it must compute pairs; auto falls back to the reference. */
    if (!(ctx = open_context_with(cmd, &go, pairs_probe, "pair interactions",
                                  "computing the pairs")))
        goto done;
    for (int a = 0; a < dim; a++)
        if ((st = device_copy_of(ctx, hp.axis[a], nn * esize, &d_axis[a])) < 0) {
            cmd_error(cmd, "copying positions to the device", st);
            goto done;
        }
    if ((st = partile_malloc(ctx, ((size_t)ncells + 1) * sizeof(int64_t),
                             (void **)&d_offsets)) < 0 ||
        (st = partile_malloc(ctx, nn * sizeof(int64_t), (void **)&d_perm)) < 0 ||
        (st = partile_malloc(ctx, nn * esize, &d_scalar)) < 0) {
        cmd_error(cmd, "allocating the cell list and the outputs", st);
        goto done;
    }
    for (int a = 0; lj && a < dim; a++)
        if ((st = partile_malloc(ctx, nn * esize, &d_force[a])) < 0) {
            cmd_error(cmd, "allocating the forces", st);
            goto done;
        }
    partile_vectors_t vec, force;
    memset(&vec, 0, sizeof vec);
    memset(&force, 0, sizeof force);
    vec.type = force.type = hp.type;
    for (int a = 0; a < dim; a++) {
        vec.axis[a] = d_axis[a];
        force.axis[a] = d_force[a];
    }

    /* Sort by cell, reorder the positions, the pairs. */
    int64_t bad = -1;
    double t0 = now_s();
    st = partile_sort(ctx, &grid, n, &vec, d_offsets, d_perm, NULL, &bad);
    if (st < 0) {
        char what[4200];
        snprintf(what, sizeof what, "sorting %s", go.positions);
        cmd_error(cmd, what, st);
        goto done;
    }
    partile_array_t arrays[3];
    for (int a = 0; a < dim; a++)
        arrays[a] = (partile_array_t){ d_axis[a], hp.type };
    if ((st = partile_permute(ctx, n, d_perm, dim, arrays, NULL, 0)) == 0)
        st = partile_context_synchronize(ctx);
    if (st < 0) {
        cmd_error(cmd, "reordering the particles", st);
        goto done;
    }
    double t1 = now_s(), total = 0.0;
    st = partile_pairs(ctx, &grid, &params, n, &vec, d_offsets, lj ? &force : NULL, d_scalar,
                       &total, &bad);
    if (st == 0)
        st = partile_context_synchronize(ctx);
    double t2 = now_s();
    if (st < 0) {
        char what[4200];
        snprintf(what, sizeof what, "%s of %s", lj ? "LJ" : "SPH density", go.positions);
        cmd_error(cmd, what, st);
        report_sorted_particle(cmd, ctx, d_perm, bad, n, go.positions);
        if (st == PARTILE_ERROR_INVALID_ARGUMENT)
            fprintf(stderr, "partile %s: (the cell grid from --box and --cutoff %g: %s)\n", cmd,
                    params.cutoff, grid_desc);
        goto done;
    }

    /* Back to the input order: sorted particle i is particle perm[i]. */
    if ((st = partile_memcpy(ctx, h_perm, d_perm, nn * sizeof(int64_t),
                             PARTILE_COPY_DEVICE_TO_HOST)) < 0) {
        cmd_error(cmd, "copying the permutation from the device", st);
        goto done;
    }
    for (int k = 0; k < (lj ? dim + 1 : 1); k++) {
        const void *src = k < (lj ? dim : 0) ? d_force[k] : d_scalar;
        if ((st = partile_memcpy(ctx, h_sorted, src, nn * esize,
                                 PARTILE_COPY_DEVICE_TO_HOST)) < 0) {
            cmd_error(cmd, "copying the results from the device", st);
            goto done;
        }
        for (size_t i = 0; i < n; i++) {
            const size_t p = (size_t)h_perm[i];
            if (k < (lj ? dim : 0))
                memcpy(h_force + (p * (size_t)dim + (size_t)k) * esize, h_sorted + i * esize,
                       esize);
            else
                memcpy(h_scalar + p * esize, h_sorted + i * esize, esize);
        }
    }

    /* The outputs. */
    if ((created = make_dir(cmd, out)) < 0) {
        created = 0;
        goto done;
    }
    {
        char err[NPY_ERR_SIZE];
        for (int k = 0; k < nfiles; k++) {
            paths[k] = join_path(out, names[k]);
            if (!paths[k]) {
                fprintf(stderr, "partile %s: out of host memory\n", cmd);
                goto done;
            }
            const int64_t shape_out[2] = { (int64_t)n, dim };
            const int is_force = lj && k == 0;
            if (npy_write(paths[k], hp.npy_type, is_force ? 2 : 1, shape_out,
                          is_force ? (void *)h_force : (void *)h_scalar, err) < 0) {
                fprintf(stderr, "partile %s: %s: %s\n", cmd, paths[k], err);
                goto done;
            }
            written = k + 1;
        }
    }
    printf("partile %s: %s %.17g, %zu particles, %" PRId64 " cells (%s), cutoff %g, ", cmd,
           lj ? "LJ total energy" : "SPH total density", total, n, ncells, grid_desc,
           params.cutoff);
    if (lj)
        printf("epsilon %g, sigma %g%s", params.epsilon, params.sigma,
               shifted ? ", shifted" : "");
    else
        printf("h %g, mass %g", params.h, params.mass);
    printf(", backend %s, strategy naive, %s positions, %.3f ms (sort %.3f, pairs %.3f); "
           "wrote %s/%s\n", partile_context_backend(ctx), npy_dtype_name(hp.npy_type),
           (t2 - t0) * 1e3, (t1 - t0) * 1e3, (t2 - t1) * 1e3, out,
           lj ? "{force,energy}.npy" : "density.npy");
    rc = 0;
done:
    if (rc != 0) {
        for (int k = 0; k < written; k++)
            remove(paths[k]);
        if (created)
            rmdir(out);
    }
    for (int k = 0; k < 2; k++)
        free(paths[k]);
    if (ctx) {
        for (int a = 0; a < 3; a++) {
            partile_free(ctx, d_axis[a]);
            partile_free(ctx, d_force[a]);
        }
        partile_free(ctx, d_scalar);
        partile_free(ctx, d_offsets);
        partile_free(ctx, d_perm);
        partile_context_destroy(ctx);
    }
    free(h_perm);
    free(h_sorted);
    free(h_force);
    free(h_scalar);
    host_positions_free(&hp);
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
    if (!strcmp(argv[1], "deposit"))
        return cmd_transfer(argc - 2, argv + 2, 1);
    if (!strcmp(argv[1], "gather"))
        return cmd_transfer(argc - 2, argv + 2, 0);
    if (!strcmp(argv[1], "assemble"))
        return cmd_assemble(argc - 2, argv + 2);
    if (!strcmp(argv[1], "pairs"))
        return cmd_pairs(argc - 2, argv + 2);
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
