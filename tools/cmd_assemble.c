/* partile assemble: the particle mass matrix as CSR/BSR .npy files. */
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
#include "tools/cli.h"
#include "tools/mass_cli.h"
#include "tools/npy.h"

int cmd_assemble(int argc, char **argv)
{
    const char *cmd = "assemble";
    grid_opts go;
    grid_opts_init(&go);
    const char *shape_arg = NULL, *kind_arg = NULL, *charges_path = NULL, *omega_path = NULL;
    const char *sigma_arg = NULL, *precision = "fp64", *mode = "bitwise", *out = NULL;
    const cli_option opts[] = {
        { "--shape", &shape_arg, NULL },    { "--kind", &kind_arg, NULL },
        { "--charges", &charges_path, NULL }, { "--omega", &omega_path, NULL },
        { "--sigma", &sigma_arg, NULL },    { "--precision", &precision, NULL },
        { "--mode", &mode, NULL },          { "--out", &out, NULL },
    };
    if (parse_options(cmd, &go, argc, argv, opts, (int)(sizeof opts / sizeof opts[0])))
        return 2;
    {
        const char *const need[6] = { go.cells_arg, go.positions, shape_arg, kind_arg, charges_path,
                                out };
        const char *const names[6] = { "--cells", "--positions", "--shape", "--kind", "--charges",
                                 "--out" };
        if (require_options(cmd, 6, need, names, "--cells, --positions, --shape, --kind, --charges, --out"))
            return 2;
    }
    partile_shape_t shape;
    partile_mass_kind_t kind;
    double sigma;
    if (parse_mass_options(cmd, shape_arg, kind_arg, omega_path, sigma_arg, &shape, &kind, &sigma))
        return 2;
    if (strcmp(precision, "fp64") != 0 && strcmp(precision, "tf32") != 0) {
        fprintf(stderr, "partile %s: --precision needs fp64 or tf32, got \"%s\"\n", cmd, precision);
        return 2;
    }
    if (strcmp(mode, "bitwise") != 0 && strcmp(mode, "relaxed") != 0) {
        fprintf(stderr, "partile %s: --mode needs bitwise or relaxed, got \"%s\"\n", cmd, mode);
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
    const size_t n = hp.n;
    int rc = 1;
    partile_context_t *ctx = NULL;
    mass_particles mp;
    memset(&mp, 0, sizeof mp);
    double *d_storage = NULL, *h_storage = NULL, *h_data = NULL;
    int64_t *h_indptr = NULL, *h_indices = NULL;

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
    if (!(ctx = open_context_with(cmd, &go, mass_assemble_probe, "mass-matrix assembly", "assembling")))
        goto done;
    /* charges and omega read and checked, everything on the device, sorted by cell */
    if (mass_particles_load(cmd, ctx, &grid, &hp, go.positions, charges_path, omega_path, &mp) < 0)
        goto done;
    if ((st = partile_malloc(ctx, layout.entries * sizeof(double), (void **)&d_storage)) < 0) {
        cmd_error(cmd, "allocating the matrix", st);
        goto done;
    }
    partile_mass_params_t params;
    memset(&params, 0, sizeof params); /* accumulate 0; omega given per particle */
    params.grid = &grid;
    params.shape = shape;
    params.kind = kind;
    params.sigma = sigma;
    params.mode = strcmp(mode, "relaxed") == 0 ? PARTILE_MASS_RELAXED : PARTILE_MASS_BITWISE;
    params.precision = strcmp(precision, "tf32") == 0 ? PARTILE_MASS_TF32 : PARTILE_MASS_FP64;
    int64_t bad = -1;
    const double t1 = now_s();
    st = partile_mass_assemble(ctx, &params, n, &mp.pos, mp.offsets, mp.q,
                               mp.omega.axis[0] ? &mp.omega : NULL, d_storage, &bad);
    if (st == 0)
        st = partile_context_synchronize(ctx);
    const double t2 = now_s();
    if (st < 0) {
        mass_cli_error(cmd, go.positions, omega_path, st);
        report_sorted_particle(cmd, ctx, mp.perm, bad, n, go.positions);
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

    const output_array outputs[3] = {
        { "indptr.npy", NPY_DTYPE_I8, 1, { layout.points + 1 }, h_indptr },
        { "indices.npy", NPY_DTYPE_I8, 1, { nnz }, h_indices },
        { "data.npy", NPY_DTYPE_F8, kind == PARTILE_MASS_TENSOR ? 3 : 1, { nnz, 3, 3 }, h_data },
    };
    if (write_outputs(cmd, out, outputs, 3) < 0)
        goto done;
    printf("partile %s: %zu particles, %" PRId64 " points, nnz %" PRId64 " (%s), shape %s, "
           "kind %s, sigma %g, cells ", cmd, n, layout.points, nnz,
           kind == PARTILE_MASS_TENSOR ? "3x3 blocks" : "entries", shape_arg, kind_arg, sigma);
    for (int a = 0; a < dim; a++)
        printf("%s%" PRId64, a ? "x" : "", grid.cells[a]);
    printf("%s, backend %s, %s positions, %s %s, %.3f ms (sort %.3f, assembly %.3f); "
           "wrote %s/{indptr,indices,data}.npy\n",
           go.periodic ? " periodic" : "", partile_context_backend(ctx),
           npy_dtype_name(hp.npy_type), precision, mode, (mp.sort_s + (t2 - t1)) * 1e3,
           mp.sort_s * 1e3, (t2 - t1) * 1e3, out);
    rc = 0;
done:
    if (ctx) {
        mass_particles_free(ctx, &mp);
        partile_free(ctx, d_storage);
        partile_context_destroy(ctx);
    }
    free(h_storage);
    free(h_data);
    free(h_indptr);
    free(h_indices);
    host_positions_free(&hp);
    return rc;
}
