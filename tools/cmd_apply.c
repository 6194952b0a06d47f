/* partile apply: y = M x for the particle mass matrix, matrix-free or
 * assembled (include/partile/apply.h), x and y as .npy files. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partile/partile.h"
#include "tools/cli.h"
#include "tools/mass_cli.h"
#include "tools/npy.h"

static int apply_fp32; /* the probe's precision */

/* 0 if ctx's backend has the matrix-free apply (in the precision asked):
 * a call with no particles on a 3-cell periodic 1-D grid. */
static int matfree_probe(partile_context_t *ctx)
{
    const partile_grid_t g = cli_probe_grid();
    const int64_t zeros[4] = { 0, 0, 0, 0 };
    int64_t *d_off = NULL;
    double *d_x = NULL, *d_y = NULL;
    int st;
    if ((st = device_copy_of(ctx, zeros, sizeof zeros, (void **)&d_off)) >= 0 &&
        (st = device_copy_of(ctx, NULL, 3 * sizeof(double), (void **)&d_x)) >= 0 &&
        (st = partile_memset(ctx, d_x, 0, 3 * sizeof(double))) >= 0 &&
        (st = device_copy_of(ctx, NULL, 3 * sizeof(double), (void **)&d_y)) >= 0) {
        partile_vectors_t v;
        memset(&v, 0, sizeof v);
        v.type = PARTILE_DTYPE_FLOAT64;
        v.axis[0] = d_x;
        partile_mass_params_t p;
        memset(&p, 0, sizeof p);
        p.grid = &g;
        p.shape = PARTILE_SHAPE_CIC;
        p.kind = PARTILE_MASS_SCALAR;
        p.sigma = 1.0;
        st = apply_fp32 ? partile_mass_apply_matfree_f32(ctx, &p, 0, &v, d_off, NULL, NULL,
                                                         (const float *)d_x, (float *)d_y, NULL)
                        : partile_mass_apply_matfree(ctx, &p, 0, &v, d_off, NULL, NULL, d_x, d_y,
                                                     NULL);
        if (st == 0)
            st = partile_context_synchronize(ctx);
    }
    partile_free(ctx, d_off);
    partile_free(ctx, d_x);
    partile_free(ctx, d_y);
    return st;
}

/* 0 if ctx's backend assembles and applies the assembled matrix. */
static int assembled_probe(partile_context_t *ctx)
{
    int st = mass_assemble_probe(ctx);
    if (st < 0)
        return st;
    const partile_grid_t g = cli_probe_grid();
    double *d = NULL;
    if ((st = device_copy_of(ctx, NULL, 12 * sizeof(double), (void **)&d)) >= 0 &&
        (st = partile_memset(ctx, d, 0, 12 * sizeof(double))) >= 0) {
        partile_mass_params_t p;
        memset(&p, 0, sizeof p);
        p.grid = &g;
        p.shape = PARTILE_SHAPE_CIC;
        p.kind = PARTILE_MASS_SCALAR;
        p.sigma = 1.0;
        st = partile_mass_apply_assembled(ctx, &p, d, d + 6, d + 9);
        if (st == 0)
            st = partile_context_synchronize(ctx);
    }
    partile_free(ctx, d);
    return st;
}

/* The first of count doubles that float32 cannot hold (finite, but rounding
 * to infinity: |v| >= FLT_MAX + half its ulp), or -1; the rest converted
 * into dst. Checked before converting: out of range, the conversion is
 * undefined in C. */
static long long narrow_to_float(const double *src, float *dst, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (isfinite(src[i]) && fabs(src[i]) >= 0x1.ffffffp127)
            return (long long)i;
        dst[i] = (float)src[i];
    }
    return -1;
}

static void report_beyond_float(const char *cmd, const char *what, const char *path, double v)
{
    fprintf(stderr, "partile %s: %s (%s) holds %.17g, beyond the float32 range of --precision "
                    "fp32 (|v| <= 3.4028235e38)\n", cmd, what, path, v);
}

int cmd_apply(int argc, char **argv)
{
    const char *cmd = "apply";
    grid_opts go;
    grid_opts_init(&go);
    const char *shape_arg = NULL, *kind_arg = NULL, *charges_path = NULL, *omega_path = NULL;
    const char *sigma_arg = NULL, *precision = "fp64", *mode = NULL, *x_path = NULL, *out = NULL;
    const char *order_arg = "point";
    const cli_option opts[] = {
        { "--shape", &shape_arg, NULL },      { "--kind", &kind_arg, NULL },
        { "--charges", &charges_path, NULL }, { "--omega", &omega_path, NULL },
        { "--sigma", &sigma_arg, NULL },      { "--precision", &precision, NULL },
        { "--mode", &mode, NULL },            { "--x", &x_path, NULL },
        { "--out", &out, NULL },              { "--order", &order_arg, NULL },
    };
    if (parse_options(cmd, &go, argc, argv, opts, (int)(sizeof opts / sizeof opts[0])))
        return 2;
    {
        const char *const need[8] = { go.cells_arg, go.positions, shape_arg, kind_arg,
                                      charges_path, mode, x_path, out };
        const char *const names[8] = { "--cells", "--positions", "--shape", "--kind",
                                       "--charges", "--mode", "--x", "--out" };
        if (require_options(cmd, 8, need, names,
                            "--cells, --positions, --shape, --kind, --charges, --mode, --x, --out"))
            return 2;
    }
    const int matfree = !strcmp(mode, "matfree");
    if (!matfree && strcmp(mode, "assembled") != 0) {
        fprintf(stderr, "partile %s: --mode needs matfree or assembled, got \"%s\"\n", cmd, mode);
        return 2;
    }
    if (strcmp(precision, "fp64") != 0 && strcmp(precision, "fp32") != 0) {
        fprintf(stderr, "partile %s: --precision needs fp64 or fp32, got \"%s\"\n", cmd, precision);
        return 2;
    }
    apply_fp32 = !strcmp(precision, "fp32");
    if (apply_fp32 && !matfree) {
        fprintf(stderr, "partile %s: --precision fp32 is for --mode matfree only (the assembled "
                        "matrix is FP64)\n", cmd);
        return 2;
    }
    partile_deposit_order_t order;
    if (parse_order_option(cmd, order_arg, &order))
        return 2;
    if (order != PARTILE_ORDER_BY_POINT && !(matfree && !apply_fp32)) {
        fprintf(stderr, "partile %s: --order cell is for --mode matfree with --precision fp64 "
                        "only\n", cmd);
        return 2;
    }
    partile_shape_t shape;
    partile_mass_kind_t kind;
    double sigma;
    if (parse_mass_options(cmd, shape_arg, kind_arg, omega_path, sigma_arg, &shape, &kind, &sigma))
        return 2;
    partile_grid_t grid;
    if (build_grid(cmd, &go, &grid) < 0)
        return 2;
    const int m = kind == PARTILE_MASS_TENSOR ? 3 : 1;
    partile_mass_layout_t layout;
    int st = partile_mass_layout(&grid, shape, kind, &layout);
    if (st < 0)
        return cmd_error(cmd, "grid", st);

    /* x: (points,) for scalar, (points, 3) for tensor, float64 */
    npy_array_t xa = { 0 };
    if (read_f64(cmd, x_path, "x", &xa) < 0)
        return 1;
    const int xok = m == 1 ? xa.ndim == 1 && xa.shape[0] == layout.points
                           : xa.ndim == 2 && xa.shape[0] == layout.points && xa.shape[1] == 3;
    if (!xok) {
        char grid_desc[256];
        describe_grid(&grid, grid_desc, sizeof grid_desc);
        if (xa.ndim == 1)
            fprintf(stderr, "partile %s: %s: x has shape (%" PRId64 ",), need ", cmd, x_path,
                    xa.shape[0]);
        else
            fprintf(stderr, "partile %s: %s: x has shape (%" PRId64 ", %" PRId64 "), need ", cmd,
                    x_path, xa.shape[0], xa.shape[1]);
        if (m == 1)
            fprintf(stderr, "(%" PRId64 ",)", layout.points);
        else
            fprintf(stderr, "(%" PRId64 ", 3)", layout.points);
        fprintf(stderr, ": one %s per grid point of the %s grid (node points, numbered as for "
                        "deposit)\n", m == 1 ? "value" : "3-vector", grid_desc);
        npy_array_free(&xa);
        return 1;
    }
    host_positions hp;
    if (load_positions(cmd, go.positions, grid.dim, &hp) < 0) {
        npy_array_free(&xa);
        return 1;
    }
    const size_t n = hp.n, nn = n ? n : 1, ycount = (size_t)layout.points * m;
    const size_t es = apply_fp32 ? sizeof(float) : sizeof(double);
    int rc = 1;
    partile_context_t *ctx = NULL;
    mass_particles mp;
    memset(&mp, 0, sizeof mp);
    void *d_x = NULL, *d_y = NULL, *h_y = NULL, *d_qf = NULL, *d_wf = NULL;
    double *d_storage = NULL;
    float *h_f = NULL;

    ctx = matfree ? open_context_with(cmd, &go, matfree_probe, "matrix-free apply", "applying")
                  : open_context_with(cmd, &go, assembled_probe, "assembly and assembled apply",
                                      "assembling and applying");
    if (!ctx)
        goto done;
    if (mass_particles_load(cmd, ctx, &grid, &hp, go.positions, charges_path, omega_path, &mp) < 0)
        goto done;
    if (!(h_y = malloc(ycount * es)) || !(h_f = malloc((3 * nn > ycount ? 3 * nn : ycount) * sizeof(float)))) {
        fprintf(stderr, "partile %s: out of host memory\n", cmd);
        goto done;
    }
    /* x in the precision asked */
    long long beyond = apply_fp32 ? narrow_to_float((const double *)xa.data, h_f, ycount) : -1;
    if (beyond >= 0) {
        char what[64];
        snprintf(what, sizeof what, "x, row %lld,", beyond / m);
        report_beyond_float(cmd, what, x_path, ((const double *)xa.data)[beyond]);
        goto done;
    }
    if ((st = device_copy_of(ctx, apply_fp32 ? (const void *)h_f : xa.data, ycount * es, &d_x)) < 0 ||
        (st = partile_malloc(ctx, ycount * es, &d_y)) < 0) {
        cmd_error(cmd, "copying x to the device", st);
        goto done;
    }
    partile_mass_params_t params;
    memset(&params, 0, sizeof params);
    params.grid = &grid;
    params.shape = shape;
    params.kind = kind;
    params.sigma = sigma;
    params.order = order;
    const partile_vectors_t *om = mp.omega.axis[0] ? &mp.omega : NULL;
    int64_t bad = -1;
    double t0 = now_s();
    if (matfree && apply_fp32) {
        /* charges and ω as float, on the device (sorted order) */
        double *hq = malloc(nn * sizeof(double)), *hw = om ? malloc(3 * nn * sizeof(double)) : NULL;
        float *hf = malloc(3 * nn * sizeof(float));
        st = hq && hf && (!om || hw) ? 0 : -1;
        if (st == 0 &&
            (st = partile_memcpy(ctx, hq, mp.q, nn * sizeof(double), PARTILE_COPY_DEVICE_TO_HOST)) >= 0) {
            if ((beyond = narrow_to_float(hq, hf, n)) >= 0)
                report_beyond_float(cmd, "a charge", charges_path, hq[beyond]);
            else
                st = device_copy_of(ctx, hf, nn * sizeof(float), &d_qf);
        }
        if (st >= 0 && beyond < 0 && om &&
            (st = partile_memcpy(ctx, hw, mp.omega.axis[0], 3 * nn * sizeof(double),
                                 PARTILE_COPY_DEVICE_TO_HOST)) >= 0) {
            if ((beyond = narrow_to_float(hw, hf, 3 * n)) >= 0) {
                report_beyond_float(cmd, "an omega", omega_path, hw[beyond]);
                beyond %= (long long)nn; /* ω's axes one after another */
            } else {
                st = device_copy_of(ctx, hf, 3 * nn * sizeof(float), &d_wf);
            }
        }
        free(hq), free(hw), free(hf);
        if (beyond >= 0) {
            report_sorted_particle(cmd, ctx, mp.perm, beyond, n, go.positions);
            goto done;
        }
        if (st < 0) {
            cmd_error(cmd, "FP32 copies of charges and omega", st);
            goto done;
        }
        partile_vectors_t omf = { PARTILE_DTYPE_FLOAT32,
                                  { d_wf, (float *)d_wf + nn, (float *)d_wf + 2 * nn } };
        st = partile_mass_apply_matfree_f32(ctx, &params, n, &mp.pos, mp.offsets, d_qf,
                                            om ? &omf : NULL, d_x, d_y, &bad);
    } else if (matfree) {
        st = partile_mass_apply_matfree(ctx, &params, n, &mp.pos, mp.offsets, mp.q, om, d_x, d_y,
                                        &bad);
    } else {
        if ((st = partile_malloc(ctx, layout.entries * sizeof(double), (void **)&d_storage)) >= 0)
            st = partile_mass_assemble(ctx, &params, n, &mp.pos, mp.offsets, mp.q, om, d_storage,
                                       &bad);
        if (st >= 0)
            st = partile_mass_apply_assembled(ctx, &params, d_storage, d_x, d_y);
    }
    if (st == 0)
        st = partile_context_synchronize(ctx);
    double t1 = now_s();
    if (st < 0) {
        mass_cli_error(cmd, go.positions, omega_path, st);
        report_sorted_particle(cmd, ctx, mp.perm, bad, n, go.positions);
        goto done;
    }
    if ((st = partile_memcpy(ctx, h_y, d_y, ycount * es, PARTILE_COPY_DEVICE_TO_HOST)) < 0) {
        cmd_error(cmd, "copying y from the device", st);
        goto done;
    }
    const output_array y_out = { out, apply_fp32 ? NPY_DTYPE_F4 : NPY_DTYPE_F8, m == 1 ? 1 : 2,
                                 { layout.points, 3 }, h_y };
    if (write_outputs(cmd, NULL, &y_out, 1) < 0)
        goto done;
    printf("partile %s: %zu particles, %" PRId64 " points, mode %s, shape %s, kind %s, sigma %g, "
           "cells ", cmd, n, layout.points, mode, shape_arg, kind_arg, sigma);
    for (int a = 0; a < grid.dim; a++)
        printf("%s%" PRId64, a ? "x" : "", grid.cells[a]);
    printf("%s, backend %s, %s positions, %s, %.3f ms (sort %.3f, %s %.3f); wrote %s\n",
           go.periodic ? " periodic" : "", partile_context_backend(ctx),
           npy_dtype_name(hp.npy_type), precision, (mp.sort_s + t1 - t0) * 1e3, mp.sort_s * 1e3,
           matfree ? "apply" : "assembly + apply", (t1 - t0) * 1e3, out);
    rc = 0;
done:
    if (ctx) {
        mass_particles_free(ctx, &mp);
        partile_free(ctx, d_x);
        partile_free(ctx, d_y);
        partile_free(ctx, d_qf);
        partile_free(ctx, d_wf);
        partile_free(ctx, d_storage);
        partile_context_destroy(ctx);
    }
    free(h_y);
    free(h_f);
    npy_array_free(&xa);
    host_positions_free(&hp);
    return rc;
}
