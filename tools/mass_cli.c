/* Shared pieces of the mass-matrix commands (tools/mass_cli.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partile/partile.h"
#include "tools/mass_cli.h"

int parse_mass_options(const char *cmd, const char *shape_arg, const char *kind_arg,
                       const char *omega_path, const char *sigma_arg, partile_shape_t *shape,
                       partile_mass_kind_t *kind, double *sigma)
{
    if (!strcmp(shape_arg, "cic"))
        *shape = PARTILE_SHAPE_CIC;
    else if (!strcmp(shape_arg, "tsc"))
        *shape = PARTILE_SHAPE_TSC;
    else {
        fprintf(stderr, "partile %s: --shape needs cic or tsc, got \"%s\"\n", cmd, shape_arg);
        return 2;
    }
    if (!strcmp(kind_arg, "scalar"))
        *kind = PARTILE_MASS_SCALAR;
    else if (!strcmp(kind_arg, "tensor"))
        *kind = PARTILE_MASS_TENSOR;
    else {
        fprintf(stderr, "partile %s: --kind needs scalar or tensor, got \"%s\"\n", cmd, kind_arg);
        return 2;
    }
    if (*kind == PARTILE_MASS_TENSOR && !omega_path) {
        fprintf(stderr, "partile %s: --kind tensor needs --omega W.npy ((Np, 3) float64, omega "
                        "per particle)\n", cmd);
        return 2;
    }
    if (*kind == PARTILE_MASS_SCALAR && omega_path) {
        fprintf(stderr, "partile %s: --omega is only for --kind tensor (the kind is scalar)\n",
                cmd);
        return 2;
    }
    *sigma = 1.0;
    if (sigma_arg) {
        char *end;
        *sigma = strtod(sigma_arg, &end);
        if (end == sigma_arg || *end || !isfinite(*sigma)) {
            fprintf(stderr, "partile %s: --sigma needs a finite number, got \"%s\"\n", cmd,
                    sigma_arg);
            return 2;
        }
    }
    return 0;
}

int mass_particles_load(const char *cmd, partile_context_t *ctx, const partile_grid_t *grid,
                        const host_positions *hp, const char *positions_path,
                        const char *charges_path, const char *omega_path, mass_particles *mp)
{
    memset(mp, 0, sizeof *mp);
    const size_t n = hp->n, nn = n ? n : 1;
    const int dim = grid->dim;
    mp->n = n;
    npy_array_t charges = { 0 }, omega = { 0 };
    double *h_omega = NULL, *d_omega = NULL;
    int64_t ncells;
    partile_grid_cell_count(grid, &ncells);
    int rc = -1, st;
    if (read_f64(cmd, charges_path, "charges", &charges) < 0 ||
        check_per_particle(cmd, charges_path, "charges", "have", &charges, n, 0) < 0)
        goto done;
    if (omega_path) {
        if (read_f64(cmd, omega_path, "omega", &omega) < 0 ||
            check_per_particle(cmd, omega_path, "omega", "has", &omega, n, 3) < 0)
            goto done;
        /* (Np, 3) -> SoA x, y, z */
        if (!(h_omega = malloc(3 * nn * sizeof(double)))) {
            fprintf(stderr, "partile %s: out of host memory\n", cmd);
            goto done;
        }
        const double *w = omega.data;
        for (size_t p = 0; p < n; p++)
            for (int c = 0; c < 3; c++)
                h_omega[(size_t)c * nn + p] = w[3 * p + (size_t)c];
    }
    mp->pos.type = hp->type;
    for (int a = 0; a < dim; a++)
        if ((st = device_copy_of(ctx, hp->axis[a], nn * hp->esize, (void **)&mp->pos.axis[a])) < 0) {
            cmd_error(cmd, "copying positions to the device", st);
            goto done;
        }
    if ((st = device_copy_of(ctx, n ? charges.data : NULL, nn * sizeof(double),
                             (void **)&mp->q)) < 0 ||
        (h_omega &&
         (st = device_copy_of(ctx, h_omega, 3 * nn * sizeof(double), (void **)&d_omega)) < 0)) {
        cmd_error(cmd, "copying the inputs to the device", st);
        goto done;
    }
    mp->omega.type = PARTILE_DTYPE_FLOAT64;
    if (d_omega)
        for (int c = 0; c < 3; c++)
            mp->omega.axis[c] = d_omega + (size_t)c * nn;
    if ((st = partile_malloc(ctx, ((size_t)ncells + 1) * sizeof(int64_t),
                             (void **)&mp->offsets)) < 0 ||
        (st = partile_malloc(ctx, nn * sizeof(int64_t), (void **)&mp->perm)) < 0) {
        cmd_error(cmd, "allocating the cell list", st);
        goto done;
    }
    /* sort by cell, reorder positions, charges and omega */
    int64_t bad = -1;
    double t0 = now_s();
    if ((st = partile_sort(ctx, grid, n, &mp->pos, mp->offsets, mp->perm, NULL, &bad)) < 0) {
        char what[4200];
        snprintf(what, sizeof what, "sorting %s", positions_path);
        cmd_error(cmd, what, st);
        goto done;
    }
    /* ω checked here, in the file's order, once the positions are known to
     * be good (as the library checks a particle's position before its ω),
     * so that the message names the file's row; the library, given the
     * sorted arrays, would name the sorted one */
    for (size_t p = 0; h_omega && p < n; p++)
        if (!isfinite(h_omega[p]) || !isfinite(h_omega[nn + p]) ||
            !isfinite(h_omega[2 * nn + p])) {
            fprintf(stderr, "partile %s: %s: row %zu holds omega (%.17g, %.17g, %.17g), which is "
                            "not finite\n", cmd, omega_path, p, h_omega[p], h_omega[nn + p],
                    h_omega[2 * nn + p]);
            goto done;
        }
    partile_array_t arrays[3 + 1 + 3];
    int count = 0;
    for (int a = 0; a < dim; a++)
        arrays[count++] = (partile_array_t){ (void *)mp->pos.axis[a], hp->type };
    arrays[count++] = (partile_array_t){ mp->q, PARTILE_DTYPE_FLOAT64 };
    if (d_omega)
        for (int c = 0; c < 3; c++)
            arrays[count++] = (partile_array_t){ d_omega + (size_t)c * nn, PARTILE_DTYPE_FLOAT64 };
    if ((st = partile_permute(ctx, n, mp->perm, count, arrays, NULL, 0)) == 0)
        st = partile_context_synchronize(ctx);
    if (st < 0) {
        cmd_error(cmd, "reordering the particles", st);
        goto done;
    }
    mp->sort_s = now_s() - t0;
    rc = 0;
done:
    free(h_omega);
    npy_array_free(&charges);
    npy_array_free(&omega);
    return rc;
}

void mass_particles_free(partile_context_t *ctx, mass_particles *mp)
{
    if (!ctx)
        return;
    for (int a = 0; a < 3; a++)
        partile_free(ctx, (void *)mp->pos.axis[a]);
    partile_free(ctx, (void *)mp->omega.axis[0]);
    partile_free(ctx, mp->q);
    partile_free(ctx, mp->offsets);
    partile_free(ctx, mp->perm);
    memset(mp, 0, sizeof *mp);
}

int mass_assemble_probe(partile_context_t *ctx)
{
    const partile_grid_t g = cli_probe_grid();
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

int mass_cli_error(const char *cmd, const char *positions_path, const char *omega_path,
                   int status)
{
    char what[512];
    if (omega_path)
        snprintf(what, sizeof what, "%s, %s", positions_path, omega_path);
    else
        snprintf(what, sizeof what, "%s", positions_path);
    return cmd_error(cmd, what, status);
}
