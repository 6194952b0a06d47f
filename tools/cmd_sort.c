/* partile sort: particles of a .npy file sorted by cell. */
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

int cmd_sort(int argc, char **argv)
{
    grid_opts go;
    grid_opts_init(&go);
    const char *out = NULL;
    const cli_option opts[] = { { "--out", &out, NULL } };
    if (parse_options("sort", &go, argc, argv, opts, 1))
        return 2;
    {
        const char *const need[3] = { go.cells_arg, go.positions, out };
        const char *const names[3] = { "--cells", "--positions", "--out" };
        if (require_options("sort", 3, need, names, "--cells, --positions, --out"))
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

    const output_array outputs[3] = {
        { "perm.npy", NPY_DTYPE_I8, 1, { (int64_t)n }, perm },
        { "offsets.npy", NPY_DTYPE_I8, 1, { ncells + 1 }, offsets },
        { "cell.npy", NPY_DTYPE_I8, 1, { (int64_t)n }, cell },
    };
    if (write_outputs("sort", out, outputs, 3) < 0)
        goto done;
    printf("partile sort: %zu particles, %" PRId64 " cells (", n, ncells);
    for (int m = 0; m < dim; m++)
        printf("%s%" PRId64, m ? "x" : "", grid.cells[m]);
    printf("%s), backend %s, %s positions, %.3f ms; wrote %s/{perm,offsets,cell}.npy\n",
           go.periodic ? ", periodic" : "", partile_context_backend(ctx),
           npy_dtype_name(hp.npy_type), elapsed_ms, out);
    rc = 0;
done:
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
