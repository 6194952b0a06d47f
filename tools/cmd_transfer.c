/* partile deposit / partile gather: particle values to grid points and back. */
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

/* deposit (is_deposit = 1) or gather (0). */
int cmd_transfer(int argc, char **argv, int is_deposit)
{
    const char *cmd = is_deposit ? "deposit" : "gather";
    grid_opts go;
    grid_opts_init(&go);
    const char *shape_arg = NULL, *centering_arg = "node", *sizes_path = NULL;
    const char *values_path = NULL, *grid_path = NULL, *out = NULL, *order_arg = "point";
    int sorted = 0;
    const cli_option opts[] = {
        { "--shape", &shape_arg, NULL },       { "--centering", &centering_arg, NULL },
        { "--sizes", &sizes_path, NULL },      { "--grid", &grid_path, NULL },
        { "--out", &out, NULL },               { "--values", &values_path, NULL }, /* deposit only */
        { "--sorted", NULL, &sorted },                                             /* deposit only */
        { "--order", &order_arg, NULL },                                           /* deposit only */
    };
    if (parse_options(cmd, &go, argc, argv, opts, is_deposit ? 8 : 5))
        return 2;
    {
        const char *const need[5] = { go.cells_arg, go.positions, shape_arg,
                                      is_deposit ? values_path : grid_path, out };
        const char *const names[5] = { "--cells", "--positions", "--shape",
                                       is_deposit ? "--values" : "--grid", "--out" };
        if (require_options(cmd, 5, need, names,
                            is_deposit ? "--cells, --positions, --shape, --values, --out"
                                       : "--cells, --positions, --shape, --grid, --out"))
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
    partile_deposit_order_t order;
    if (parse_order_option(cmd, order_arg, &order))
        return 2;
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
        if (check_per_particle(cmd, sizes_path, "sizes", "have", &sizes, n, 0) < 0)
            goto done;
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
    t.order = order;

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
    const output_array result = { out, NPY_DTYPE_F8, out_1d ? 1 : 2, { shape_out[0], shape_out[1] },
                                  is_deposit ? (const void *)h_field : h_values };
    if (write_outputs(cmd, NULL, &result, 1) < 0)
        goto done;
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
