/* partile — command line tool.
 *   partile info                 backends, devices, tile shapes
 *   partile check [options]      tile conformance against the reference
 *   partile sort [options]       sort particles of a .npy file by cell
 *   partile deposit [options]    particle values onto grid points (.npy in and out)
 *   partile gather [options]     grid values at the particles (.npy in and out)
 *   partile assemble [options]   the particle mass matrix, exported as CSR/BSR .npy files
 *   partile apply [options]      y = M x for the mass matrix, matrix-free or assembled
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
#include "tools/cli.h"
#include "tools/npy.h"

void usage(FILE *f)
{
    fprintf(f,
            "usage: partile <command> [options]\n"
            "commands:\n"
            "  info                       backends compiled in, devices, tile shapes\n"
            "  check [options]            tile engines, sort, deposit/gather and the mass\n"
            "                             matrix against the reference, bit for bit in FP64\n"
            "      --backend NAME         reference, cuda, hip or auto (the first GPU backend with\n"
            "                             a device, else the reference); default: every backend\n"
            "                             that runs here\n"
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
            "      --order NAME           the sum's order: point (one chain per point, default)\n"
            "                             or cell (a chain per cell, then per point; the faster\n"
            "                             GPU path for node-centred CIC in 3-D; deposit.h)\n"
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
            "      --precision NAME       fp64 (default) or tf32 (GPU tiles round their inputs to\n"
            "                             TF32, FP32 sums per group: within 2^-8 of the largest\n"
            "                             entry; the reference computes fp64)\n"
            "      --mode NAME            bitwise (default: the order of mass.h, equal to the\n"
            "                             reference bit for bit) or relaxed (GPUs add with atomics;\n"
            "                             equal to rounding)\n"
            "      --out DIR              writes DIR/indptr.npy (points + 1), DIR/indices.npy\n"
            "                             (nnz), both int64, and DIR/data.npy, float64 (nnz,) or\n"
            "                             (nnz, 3, 3); DIR is created if missing. The backend must\n"
            "                             implement assembly (with --backend auto, the reference\n"
            "                             is used when the one picked does not)\n"
            "  apply [options]            y = M x for the particle mass matrix of assemble\n"
            "                             (include/partile/apply.h): matrix-free, or assembled first\n"
            "      grid and particle options, --shape, --kind, --charges, --omega, --sigma\n"
            "                             as for assemble\n"
            "      --mode NAME            matfree (gather x at the particles, scale by q_p alpha_p,\n"
            "                             deposit back) or assembled (assemble, then apply the\n"
            "                             canonical storage); the two agree to rounding\n"
            "      --precision NAME       fp64 (default; bitwise equal on every backend) or fp32\n"
            "                             (matfree only; y float32)\n"
            "      --order NAME           matfree fp64: the deposit half's order, point (default)\n"
            "                             or cell (as for deposit; apply.h)\n"
            "      --x X.npy              float64, (points,) for scalar, (points, 3) for tensor,\n"
            "                             points numbered as for deposit (node points)\n"
            "      --out Y.npy            y, the shape of x (float32 with --precision fp32)\n"
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
            "      --strategy NAME        auto (default), naive, all-in-sm, x-pencil or\n"
            "                             x-pencil-reg: how a GPU walks the cells; the same\n"
            "                             results (the order of pairs.h) for every one\n"
            "      --out DIR              lj: DIR/force.npy (Np, d) and DIR/energy.npy (Np,);\n"
            "                             sph: DIR/density.npy (Np,); in the positions' dtype and\n"
            "                             their order; DIR is created if missing. With --backend\n"
            "                             auto, the reference is used when the backend picked has\n"
            "                             no pair interactions\n"
            "  version                    print the library version\n");
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
                cmd_error("info", info.name, st);
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
        cmd_error("check", name, st);
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
            cmd_error("check", s.name, st);
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
                cmd_error("check", "bench", st);
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
        const char *group[4] = { "sort", "deposit/gather", "mass matrix", "mass apply" };
        for (int k = 0; k < 4; k++) {
            st = k == 0   ? partile_check_sort(ctx, o->seed, stdout, &r)
                 : k == 1 ? partile_check_transfer(ctx, o->seed, stdout, &r)
                 : k == 2 ? partile_check_mass(ctx, o->seed, stdout, &r)
                          : partile_check_apply(ctx, o->seed, stdout, &r);
            (*shapes_run)++;
            if (st < 0) {
                cmd_error("check", group[k], st);
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
            cmd_error("check", o.backend, st);
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

/* `partile CMD --help`: CMD's part of usage(), from its line to the next
 * command's (deposit and gather together: they share options and the field
 * points' numbering); all of usage() for a name that is not a command. */
static void command_usage(FILE *f, const char *cmd)
{
    char *text = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&text, &size);
    if (m)
        usage(m);
    if (!m || fclose(m) != 0 || !text) {
        free(text);
        usage(f);
        return;
    }
    const int transfer = !strcmp(cmd, "deposit") || !strcmp(cmd, "gather");
    const char *first = transfer ? "deposit" : cmd, *start = NULL, *end = NULL;
    const size_t len = strlen(first);
    for (const char *line = text; *line && !end;) {
        const char *next = strchr(line, '\n');
        next = next ? next + 1 : line + strlen(line);
        /* a command's line: two spaces, then its name */
        const int command = line[0] == ' ' && line[1] == ' ' && line[2] >= 'a' && line[2] <= 'z';
        if (command && start && !(transfer && !strncmp(line + 2, "gather ", 7)))
            end = line;
        else if (command && !start && !strncmp(line + 2, first, len) && line[2 + len] == ' ')
            start = line;
        line = next;
    }
    if (start) {
        const int options = !strncmp(start + 2 + len, " [options]", 10);
        fprintf(f, "usage: partile %s%s\n%.*s(partile --help: every command)\n", cmd,
                options ? " [options]" : "", (int)((end ? end : start + strlen(start)) - start),
                start);
    } else {
        fputs(text, f);
    }
    free(text);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    for (int i = 2; i < argc; i++) /* partile COMMAND ... --help, or -h right after it (later, a value) */
        if (!strcmp(argv[i], "--help") || (i == 2 && !strcmp(argv[i], "-h"))) {
            command_usage(stdout, argv[1]);
            return 0;
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
    if (!strcmp(argv[1], "apply"))
        return cmd_apply(argc - 2, argv + 2);
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
