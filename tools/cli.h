/* Shared pieces of the `partile` subcommands: grid options, positions from
 * .npy, contexts with a fallback, output folders, messages. Each
 * subcommand lives in its own file (tools/cmd_*.c). */
#ifndef PARTILE_TOOLS_CLI_H
#define PARTILE_TOOLS_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "partile/partile.h"
#include "tools/npy.h"

/* The grid and particle options every particle command takes. */
typedef struct grid_opts {
    const char *backend, *positions;
    const char *cells_arg, *lower_arg, *upper_arg;
    int device, periodic;
} grid_opts;

/* Positions read from a .npy file, split per axis (SoA) on the host. */
typedef struct host_positions {
    size_t n, esize;
    npy_dtype_t npy_type;
    partile_dtype_t type;
    void *axis[3]; /* at least one element each, so that n = 0 passes no NULL */
} host_positions;

int cmd_error(const char *cmd, const char *what, int status);
int parse_numbers(const char *s, int max, int integers, double *dval, int64_t *ival);
int parse_list(const char *s, int integers, double *dval, int64_t *ival);
void grid_opts_init(grid_opts *o);
int parse_grid_option(const char *cmd, grid_opts *o, int argc, char **argv, int *i);
int fill_grid(const char *cmd, int dim, const int64_t *cells, const double *lower,
                     const double *upper, int periodic, partile_grid_t *grid);
int build_grid(const char *cmd, const grid_opts *o, partile_grid_t *grid);
void host_positions_free(host_positions *p);
int load_positions(const char *cmd, const char *path, int dim, host_positions *p);
int device_copy_of(partile_context_t *ctx, const void *host, size_t bytes, void **dev);
partile_context_t *open_context(const char *cmd, const grid_opts *o);
/* The grid of the backend probes: 3 unit cells, 1-D, periodic (the
 * smallest every operation accepts). */
partile_grid_t cli_probe_grid(void);
partile_context_t *open_context_with(const char *cmd, const grid_opts *o,
                                            int (*probe)(partile_context_t *),
                                            const char *feature, const char *doing);
double now_s(void);
int make_dir(const char *cmd, const char *dir);
char *join_path(const char *dir, const char *name);

/* One output of a command: a file name (in the command's folder, or the
 * path itself) and what npy_write_nd takes. */
typedef struct output_array {
    const char *name;
    npy_dtype_t dtype;
    int ndim;
    int64_t shape[3];
    const void *data;
} output_array;

/* Writes count (at most 4) outputs so that a failure replaces no existing
 * file: each goes to a temporary file beside its name, and only once all
 * are written are they renamed over their names. dir (NULL: the names are
 * paths) is created if missing, and removed again on failure if this call
 * created it. 0, or -1 after a message. */
int write_outputs(const char *cmd, const char *dir, const output_array *arrays, int count);
void describe_field(const partile_grid_t *g, partile_centering_t c, const int64_t pts[3],
                           int64_t total, char *buf, size_t size);
int read_f64(const char *cmd, const char *path, const char *what, npy_array_t *a);
void report_sorted_particle(const char *cmd, partile_context_t *ctx, const int64_t *d_perm,
                                   int64_t bad, size_t n, const char *positions);
int parse_number_option(const char *cmd, const char *opt, const char *arg, double *v);
int parse_order_option(const char *cmd, const char *arg, partile_deposit_order_t *order);
void describe_grid(const partile_grid_t *g, char *buf, size_t size);

/* One option of a subcommand: "--name VALUE" stores VALUE in *value;
 * a flag (value NULL) sets *flag to 1. */
typedef struct cli_option {
    const char *name;
    const char **value;
    int *flag;
} cli_option;

/* Parses argv: the grid options (go) and the listed ones; an unknown or
 * incomplete option is a usage error. Returns 0, or 2 after the message. */
int parse_options(const char *cmd, grid_opts *go, int argc, char **argv, const cli_option *opts,
                  int count);

/* a (read from path) must hold one value per particle, shape (n,) for
 * cols = 0, or one 3-vector, (n, 3) for cols = 3; else a message naming it
 * ("WHAT VERB shape …", e.g. "charges have") and -1. */
int check_per_particle(const char *cmd, const char *path, const char *what, const char *verb,
                       const npy_array_t *a, size_t n, int cols);

/* Names of the shapes, indexed by partile_shape_t. */
extern const char *const shape_names[];

/* "partile CMD: missing --a, --b (required: LIST)" for the options whose
 * value is NULL; returns 2 if any is missing, else 0. */
int require_options(const char *cmd, int count, const char *const *values,
                    const char *const *names, const char *required);

/* The usage text (tools/partile.c). */
void usage(FILE *f);

/* The subcommands. */
int cmd_sort(int argc, char **argv);
int cmd_transfer(int argc, char **argv, int is_deposit);
int cmd_assemble(int argc, char **argv);
int cmd_pairs(int argc, char **argv);
int cmd_apply(int argc, char **argv);

#endif
