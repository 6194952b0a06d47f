/* What `partile assemble` and `partile apply` share: the mass-matrix
 * options (--shape, --kind, --omega, --sigma), the particles' charges and ω
 * read and checked, copied to the device, sorted by cell with the
 * positions, and a probe of the backend's mass operations. */
#ifndef PARTILE_TOOLS_MASS_CLI_H
#define PARTILE_TOOLS_MASS_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "tools/cli.h"

/* --shape cic|tsc, --kind scalar|tensor (tensor needs --omega, scalar
 * refuses it), --sigma (default 1). 0, or 2 after a message (usage). */
int parse_mass_options(const char *cmd, const char *shape_arg, const char *kind_arg,
                       const char *omega_path, const char *sigma_arg, partile_shape_t *shape,
                       partile_mass_kind_t *kind, double *sigma);

/* The particles of a mass-matrix command on the device, sorted by cell. */
typedef struct mass_particles {
    size_t n;
    partile_vectors_t pos;   /* device positions (sorted) */
    partile_vectors_t omega; /* device ω SoA (sorted), FLOAT64; axis[0] NULL if none */
    double *q;               /* device charges (sorted) */
    int64_t *offsets, *perm; /* the cell list and the sort's permutation */
    double sort_s;           /* seconds spent sorting and permuting */
} mass_particles;

/* Reads --charges (and --omega if given) for the hp.n positions, copies
 * them and the positions to ctx, sorts by cell and permutes them. 0, or -1
 * after a message; free with mass_particles_free in every case. */
int mass_particles_load(const char *cmd, partile_context_t *ctx, const partile_grid_t *grid,
                        const host_positions *hp, const char *positions_path,
                        const char *charges_path, const char *omega_path, mass_particles *mp);
void mass_particles_free(partile_context_t *ctx, mass_particles *mp);

/* cmd_error for an assembly or apply: names the positions file, and the
 * omega file beside it where one was given (a non-finite ω fails the call
 * as a non-finite position does; the detail says which). Returns 1. */
int mass_cli_error(const char *cmd, const char *positions_path, const char *omega_path,
                   int status);

/* 0 if ctx's backend assembles mass matrices (a call with no particles on
 * a 3-cell periodic 1-D grid), PARTILE_ERROR_UNSUPPORTED if not, another
 * status (< 0) if the probe itself failed. */
int mass_assemble_probe(partile_context_t *ctx);

#endif
