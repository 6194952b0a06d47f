/* partile pairs: short-range pair interactions, .npy in and out. */
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
#include "tools/npy.h"

/* Whether ctx's backend computes pair interactions: one particle on a 3-cell
 * periodic 1-D grid (with no particles the library answers before asking
 * the backend). 0 if it does, PARTILE_ERROR_UNSUPPORTED if not, another
 * status (< 0) if the probe itself failed. */
static int pairs_probe(partile_context_t *ctx)
{
    const partile_grid_t g = cli_probe_grid();
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

/* Value k of an FP32 or FP64 host array, as a double. */
static double host_value(const void *data, size_t esize, size_t k)
{
    return esize == 4 ? (double)((const float *)data)[k] : ((const double *)data)[k];
}

/* The library computes what the formulas give: LJ divides by r², so two
 * particles at one position (or ε, σ so large that the powers overflow)
 * give an infinite or NaN force and energy. Rather than write them, name
 * the first particle (input order) whose results are not finite, and the
 * particle at its very position if there is one; nonzero then. */
static int report_non_finite(const char *cmd, const host_positions *hp, int dim, int lj,
                             const unsigned char *force, const unsigned char *scalar,
                             const partile_pair_params_t *params)
{
    size_t p = 0;
    for (; p < hp->n; p++) {
        int finite = isfinite(host_value(scalar, hp->esize, p));
        for (int a = 0; lj && a < dim; a++)
            finite &= isfinite(host_value(force, hp->esize, p * (size_t)dim + (size_t)a));
        if (!finite)
            break;
    }
    if (p == hp->n)
        return 0;
    char at[200] = "";
    int len = 0;
    for (int a = 0; a < dim; a++)
        len += snprintf(at + len, sizeof at - (size_t)len, "%s%.17g", a ? ", " : "",
                        host_value(hp->axis[a], hp->esize, p));
    fprintf(stderr, "partile %s: the %s of particle %zu at (%s) is not finite; nothing written\n",
            cmd, lj ? "LJ force or energy" : "SPH density", p, at);
    if (!lj)
        return 1;
    for (size_t q = 0; q < hp->n; q++) {
        int same = q != p;
        for (int a = 0; same && a < dim; a++)
            same = host_value(hp->axis[a], hp->esize, q) == host_value(hp->axis[a], hp->esize, p);
        if (same) {
            fprintf(stderr, "partile %s: particle %zu is at the same position: LJ divides by "
                            "r^2 = 0\n", cmd, q);
            return 1;
        }
    }
    fprintf(stderr, "partile %s: no other particle is at its position; --epsilon %g and --sigma "
                    "%g may overflow the %s powers (sigma/r)^12 for its closest pairs\n",
            cmd, params->epsilon, params->sigma, hp->esize == 4 ? "FP32" : "FP64");
    return 1;
}

int cmd_pairs(int argc, char **argv)
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
    const cli_option opts[] = {
        { "--cutoff", &number_args[CUTOFF], NULL }, { "--epsilon", &number_args[EPSILON], NULL },
        { "--sigma", &number_args[SIGMA], NULL },   { "--h", &number_args[H], NULL },
        { "--mass", &number_args[MASS], NULL },     { "--interaction", &interaction_arg, NULL },
        { "--box", &box_arg, NULL },                { "--strategy", &strategy, NULL },
        { "--shifted", NULL, &shifted },            { "--out", &out, NULL },
    };
    if (parse_options(cmd, &go, argc, argv, opts, (int)(sizeof opts / sizeof opts[0])))
        return 2;
    if (go.cells_arg || go.lower_arg || go.upper_arg) {
        fprintf(stderr, "partile %s: --cells, --lower and --upper are not for pairs: the cell "
                        "grid comes from --box and --cutoff\n", cmd);
        return 2;
    }
    {
        const char *const need[5] = { interaction_arg, number_args[CUTOFF], box_arg, go.positions,
                                out };
        const char *const names[5] = { "--interaction", "--cutoff", "--box", "--positions", "--out" };
        if (require_options(cmd, 5, need, names, "--interaction, --cutoff, --box, --positions, --out"))
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
    /* every strategy computes the one order of pairs.h */
    if (partile_pairs_strategy_from_name(strategy, &params.strategy) < 0) {
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

    if (report_non_finite(cmd, &hp, dim, lj, h_force, h_scalar, &params))
        goto done;

    const output_array outputs[2] = {
        { names[0], hp.npy_type, lj ? 2 : 1, { (int64_t)n, dim }, lj ? (void *)h_force : h_scalar },
        { lj ? names[1] : NULL, hp.npy_type, 1, { (int64_t)n }, h_scalar }, /* LJ only */
    };
    if (write_outputs(cmd, out, outputs, nfiles) < 0)
        goto done;
    printf("partile %s: %s %.17g, %zu particles, %" PRId64 " cells (%s), cutoff %g, ", cmd,
           lj ? "LJ total energy" : "SPH total density", total, n, ncells, grid_desc,
           params.cutoff);
    if (lj)
        printf("epsilon %g, sigma %g%s", params.epsilon, params.sigma,
               shifted ? ", shifted" : "");
    else
        printf("h %g, mass %g", params.h, params.mass);
    printf(", backend %s, strategy %s, %s positions, %.3f ms (sort %.3f, pairs %.3f); "
           "wrote %s/%s\n", partile_context_backend(ctx), strategy, npy_dtype_name(hp.npy_type),
           (t2 - t0) * 1e3, (t1 - t0) * 1e3, (t2 - t1) * 1e3, out,
           lj ? "{force,energy}.npy" : "density.npy");
    rc = 0;
done:
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
