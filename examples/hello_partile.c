/* The smallest partile program: pick a backend, stage data, run one batched
 * tile product, bring the result back. Build against an installed partile:
 *   cc hello_partile.c $(pkg-config --cflags --libs partile) */
#include <stdio.h>

#include <partile/partile.h>

static int check(int status, const char *what)
{
    if (status < 0)
        fprintf(stderr, "%s: %s: %s\n", what, partile_status_string(status),
                partile_last_error_detail());
    return status < 0;
}

int main(int argc, char **argv)
{
    const char *backend = argc > 1 ? argv[1] : "auto";
    partile_context_t *ctx = NULL;
    if (check(partile_context_create(backend, 0, &ctx), backend))
        return 1;
    printf("partile %s on %s: %s\n", partile_version(), partile_context_backend(ctx),
           partile_context_device(ctx));

    /* D = A·B + C with A 2×3, B 3×2, using the reference-any/f64 8×8×4 tile */
    double a[6] = { 1, 2, 3, 4, 5, 6 }, b[6] = { 1, 0, 0, 1, 1, 1 }, c[4] = { 0.5, 0, 0, 0 };
    double d[4] = { 0 };
    void *da = NULL, *db = NULL, *dc = NULL, *dd = NULL;
    partile_tile_t tile = { 8, 8, 4, PARTILE_FP64, PARTILE_FP64 };
    int bad = check(partile_malloc(ctx, sizeof a, &da), "malloc") ||
              check(partile_malloc(ctx, sizeof b, &db), "malloc") ||
              check(partile_malloc(ctx, sizeof c, &dc), "malloc") ||
              check(partile_malloc(ctx, sizeof d, &dd), "malloc") ||
              check(partile_memcpy(ctx, da, a, sizeof a, PARTILE_COPY_HOST_TO_DEVICE), "copy") ||
              check(partile_memcpy(ctx, db, b, sizeof b, PARTILE_COPY_HOST_TO_DEVICE), "copy") ||
              check(partile_memcpy(ctx, dc, c, sizeof c, PARTILE_COPY_HOST_TO_DEVICE), "copy") ||
              check(partile_mma_batched(ctx, &tile, 1, 2, 2, 3, da, db, dc, dd), "mma") ||
              check(partile_memcpy(ctx, d, dd, sizeof d, PARTILE_COPY_DEVICE_TO_HOST), "copy");
    if (!bad)
        printf("D = [%g %g; %g %g]\n", d[0], d[1], d[2], d[3]); /* [4.5 5; 10 11] */
    partile_free(ctx, da);
    partile_free(ctx, db);
    partile_free(ctx, dc);
    partile_free(ctx, dd);
    partile_context_destroy(ctx);
    return bad || d[0] != 4.5 || d[1] != 5 || d[2] != 10 || d[3] != 11;
}
