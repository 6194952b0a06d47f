/* Shared pieces of the `partile` subcommands (tools/cli.h). */
#define _XOPEN_SOURCE 700 /* realpath (the build asks for POSIX 2008 only) */
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
#include "tools/cli.h"
#include "tools/npy.h"


/* "partile CMD: WHAT: status: detail" for a library error; returns 1. */
int cmd_error(const char *cmd, const char *what, int status)
{
    const char *detail = partile_last_error_detail();
    fprintf(stderr, "partile %s: %s: %s%s%s\n", cmd, what, partile_status_string(status),
            detail[0] ? ": " : "", detail);
    return 1;
}

/* 1 to max comma-separated numbers, each consumed entirely: their count,
 * or -1. */
int parse_numbers(const char *s, int max, int integers, double *dval, int64_t *ival)
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
int parse_list(const char *s, int integers, double *dval, int64_t *ival)
{
    return parse_numbers(s, 3, integers, dval, ival);
}


void grid_opts_init(grid_opts *o)
{
    memset(o, 0, sizeof *o);
    o->backend = "auto";
}

/* An option's value: argv[i + 1], unless it is missing or is itself an
 * option ("--out --periodic" would write a folder named --periodic); NULL
 * after a message then (a usage error). An option given twice takes the
 * last value, so that scripts can override a common set of options. */
static const char *option_value(const char *cmd, int argc, char **argv, int i)
{
    if (i + 1 >= argc) {
        fprintf(stderr, "partile %s: %s needs a value\n", cmd, argv[i]);
        return NULL;
    }
    const char *v = argv[i + 1];
    if (v[0] == '-' && v[1] == '-') {
        fprintf(stderr, "partile %s: %s needs a value, got the option \"%s\" (a file of that "
                        "name: write ./%s)\n", cmd, argv[i], v, v);
        return NULL;
    }
    return v;
}

/* If argv[*i] is one of --backend, --device, --cells, --lower, --upper,
 * --periodic, --positions (with its value where it takes one), consumes it
 * (advancing *i past a value) and returns 1; returns 0 if it is not one of
 * them, -1 after a message if its value is bad or missing (a usage error). */
int parse_grid_option(const char *cmd, grid_opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (!strcmp(a, "--periodic")) {
        o->periodic = 1;
        return 1;
    }
    const char **text = !strcmp(a, "--backend")     ? &o->backend
                        : !strcmp(a, "--cells")     ? &o->cells_arg
                        : !strcmp(a, "--lower")     ? &o->lower_arg
                        : !strcmp(a, "--upper")     ? &o->upper_arg
                        : !strcmp(a, "--positions") ? &o->positions
                                                    : NULL;
    if (!text && strcmp(a, "--device") != 0)
        return 0;
    const char *v = option_value(cmd, argc, argv, *i);
    if (!v)
        return -1;
    if (text) {
        *text = v;
    } else { /* --device */
        char *end;
        long d = strtol(v, &end, 10);
        if (*end || v[0] == '\0' || d < 0 || d > 1024) {
            fprintf(stderr, "partile %s: --device needs an index from 0 to 1024, got \"%s\"\n",
                    cmd, v);
            return -1;
        }
        o->device = (int)d;
    }
    (*i)++;
    return 1;
}

/* The grid of dim axes with cells[m] cells from lower[m] to upper[m]
 * (every axis periodic or none); 0, or -1 after a message (a usage error)
 * if a spacing is not finite and > 0. */
int fill_grid(const char *cmd, int dim, const int64_t *cells, const double *lower,
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
int build_grid(const char *cmd, const grid_opts *o, partile_grid_t *grid)
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


void host_positions_free(host_positions *p)
{
    for (int m = 0; m < 3; m++)
        free(p->axis[m]);
    memset(p, 0, sizeof *p);
}

/* Reads path: (Np, dim) float64 or float32, or (Np,) if dim = 1. 0, or -1
 * after a message (a data error). */
int load_positions(const char *cmd, const char *path, int dim, host_positions *p)
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
int device_copy_of(partile_context_t *ctx, const void *host, size_t bytes, void **dev)
{
    int st = partile_malloc(ctx, bytes, dev);
    if (st >= 0 && host)
        st = partile_memcpy(ctx, *dev, host, bytes, PARTILE_COPY_HOST_TO_DEVICE);
    return st;
}

/* The context for --backend / --device; NULL after a message. */
partile_context_t *open_context(const char *cmd, const grid_opts *o)
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
partile_grid_t cli_probe_grid(void)
{
    partile_grid_t g;
    memset(&g, 0, sizeof g);
    g.dim = 1;
    g.cells[0] = 3;
    g.spacing[0] = 1.0;
    g.periodic[0] = 1;
    return g;
}

partile_context_t *open_context_with(const char *cmd, const grid_opts *o,
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

double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}


/* Creates dir if missing (one level); an existing directory is fine.
 * Returns 1 if it was created, 0 if it existed, -1 after a message. */
int make_dir(const char *cmd, const char *dir)
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

char *join_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

int write_outputs(const char *cmd, const char *dir, const output_array *arrays, int count)
{
    enum { MOST = 4 };
    char *final[MOST] = { NULL }, *temp[MOST] = { NULL }; /* temp NULL: written in place */
    int created = 0, written = 0, rc = -1;
    if (count > MOST) {
        fprintf(stderr, "partile %s: internal error: %d outputs\n", cmd, count);
        return -1;
    }
    if (dir && (created = make_dir(cmd, dir)) < 0)
        return -1;
    char err[NPY_ERR_SIZE];
    for (int k = 0; k < count; k++) {
        final[k] = dir ? join_path(dir, arrays[k].name) : malloc(strlen(arrays[k].name) + 1);
        if (!final[k]) {
            fprintf(stderr, "partile %s: out of host memory\n", cmd);
            goto done;
        }
        if (!dir)
            strcpy(final[k], arrays[k].name);
        /* a symbolic link: the file it names is replaced, not the link; what
         * is not a regular file (a pipe, /dev/stdout) is written into, as a
         * rename would replace it */
        struct stat st, lst;
        const int exists = stat(final[k], &st) == 0;
        if (exists && lstat(final[k], &lst) == 0 && S_ISLNK(lst.st_mode)) {
            char *real = realpath(final[k], NULL);
            if (real) {
                free(final[k]);
                final[k] = real;
            }
        }
        const char *path = final[k];
        if (!exists || S_ISREG(st.st_mode)) {
            char suffix[64];
            snprintf(suffix, sizeof suffix, ".partile-%ld-%d.tmp", (long)getpid(), k);
            if (!(temp[k] = malloc(strlen(final[k]) + strlen(suffix) + 1))) {
                fprintf(stderr, "partile %s: out of host memory\n", cmd);
                goto done;
            }
            path = strcat(strcpy(temp[k], final[k]), suffix);
        }
        if (npy_write_nd(path, arrays[k].dtype, arrays[k].ndim, arrays[k].shape, arrays[k].data,
                         err) < 0) {
            fprintf(stderr, "partile %s: %s: %s\n", cmd, final[k], err);
            goto done;
        }
        written = k + 1;
    }
    for (int k = 0; k < count; k++)
        if (temp[k] && rename(temp[k], final[k]) != 0) {
            fprintf(stderr, "partile %s: %s: cannot replace it: %s%s\n", cmd, final[k],
                    strerror(errno), k ? " (the outputs before it were replaced)" : "");
            for (int j = k; j < count; j++)
                if (temp[j])
                    remove(temp[j]);
            written = 0;
            if (k)
                created = 0; /* what was renamed stays */
            goto done;
        }
    written = 0;
    rc = 0;
done:
    for (int k = 0; k < written; k++)
        if (temp[k])
            remove(temp[k]);
    if (rc < 0 && created)
        rmdir(dir);
    for (int k = 0; k < count; k++)
        free(final[k]), free(temp[k]);
    return rc;
}


const char *const shape_names[] = { "ngp", "cic", "tsc", "overlap" };

/* "7x6 = 42 node points; non-periodic axes: cells + 3, one ghost layer on each side" */
void describe_field(const partile_grid_t *g, partile_centering_t c, const int64_t pts[3],
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
int read_f64(const char *cmd, const char *path, const char *what, npy_array_t *a)
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
void report_sorted_particle(const char *cmd, partile_context_t *ctx, const int64_t *d_perm,
                                   int64_t bad, size_t n, const char *positions)
{
    int64_t orig;
    if (d_perm && bad >= 0 && (size_t)bad < n &&
        partile_memcpy(ctx, &orig, d_perm + bad, sizeof orig, PARTILE_COPY_DEVICE_TO_HOST) >= 0)
        fprintf(stderr, "partile %s: (particle %" PRId64 " of the sorted order is particle "
                        "%" PRId64 " of %s)\n", cmd, bad, orig, positions);
}


/* A finite number for option opt; 0, or -1 after a message (a usage error). */
int parse_number_option(const char *cmd, const char *opt, const char *arg, double *v)
{
    if (parse_numbers(arg, 1, 0, v, NULL) != 1) {
        fprintf(stderr, "partile %s: %s needs a finite number, got \"%s\"\n", cmd, opt, arg);
        return -1;
    }
    return 0;
}

/* --order point|cell: the deposit's summation order (deposit.h) */
int parse_order_option(const char *cmd, const char *arg, partile_deposit_order_t *order)
{
    if (!strcmp(arg, "point"))
        *order = PARTILE_ORDER_BY_POINT;
    else if (!strcmp(arg, "cell"))
        *order = PARTILE_ORDER_BY_CELL;
    else {
        fprintf(stderr, "partile %s: --order needs point or cell, got \"%s\"\n", cmd, arg);
        return -1;
    }
    return 0;
}

/* "5x5x6 periodic, spacing 1.2x1x1" */
void describe_grid(const partile_grid_t *g, char *buf, size_t size)
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

int require_options(const char *cmd, int count, const char *const *values,
                    const char *const *names, const char *required)
{
    char missing[160] = "";
    for (int k = 0; k < count; k++)
        if (!values[k]) {
            strncat(missing, missing[0] ? ", " : "", sizeof missing - strlen(missing) - 1);
            strncat(missing, names[k], sizeof missing - strlen(missing) - 1);
        }
    for (int k = 0; k < count && !missing[0]; k++)
        if (!values[k][0]) {
            fprintf(stderr, "partile %s: %s needs a value, got an empty one\n", cmd, names[k]);
            return 2;
        }
    if (!missing[0])
        return 0;
    fprintf(stderr, "partile %s: missing %s (required: %s; partile %s --help lists every "
                    "option)\n", cmd, missing, required, cmd);
    return 2;
}

int parse_options(const char *cmd, grid_opts *go, int argc, char **argv, const cli_option *opts,
                  int count)
{
    for (int i = 0; i < argc; i++) {
        int r = parse_grid_option(cmd, go, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        const char *a = argv[i];
        int k = 0;
        while (k < count && strcmp(a, opts[k].name) != 0)
            k++;
        if (k == count) {
            fprintf(stderr, "partile %s: unknown option \"%s\" (partile %s --help lists them)\n",
                    cmd, a, cmd);
            return 2;
        }
        if (!opts[k].value) { /* a flag */
            *opts[k].flag = 1;
            continue;
        }
        const char *v = option_value(cmd, argc, argv, i);
        if (!v)
            return 2;
        *opts[k].value = v;
        i++;
    }
    return 0;
}

int check_per_particle(const char *cmd, const char *path, const char *what, const char *verb,
                       const npy_array_t *a, size_t n, int cols)
{
    const int ok = cols ? a->ndim == 2 && a->shape[1] == cols && (size_t)a->shape[0] == n
                        : a->ndim == 1 && (size_t)a->shape[0] == n;
    if (ok)
        return 0;
    char need[48];
    if (cols)
        snprintf(need, sizeof need, "(%zu, %d): one %d-vector per particle", n, cols, cols);
    else
        snprintf(need, sizeof need, "(%zu,): one per particle", n);
    if (a->ndim == 1)
        fprintf(stderr, "partile %s: %s: %s %s shape (%" PRId64 ",), need %s\n", cmd, path, what,
                verb, a->shape[0], need);
    else
        fprintf(stderr, "partile %s: %s: %s %s shape (%" PRId64 ", %" PRId64 "), need %s\n", cmd,
                path, what, verb, a->shape[0], a->shape[1], need);
    return -1;
}
