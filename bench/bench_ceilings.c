/* The two ceilings every later benchmark divides by, measured by partile's
 * own microbenchmarks on the context's device:
 *   - device copy bandwidth: a large device-to-device copy, bytes read plus
 *     bytes written over the median time;
 *   - each tile shape's peak rate with operands in registers, and the plain
 *     FP64 fma rate beside it.
 * usage: bench_ceilings [--backend NAME] [--json FILE] [--mib N] */
#include <stdlib.h>

#include "bench/bench_util.h"

typedef struct copy_arg {
    void *dst, *src;
    size_t bytes;
} copy_arg;

static int do_copy(partile_context_t *ctx, void *arg)
{
    copy_arg *c = (copy_arg *)arg;
    return partile_memcpy(ctx, c->dst, c->src, c->bytes, PARTILE_COPY_DEVICE_TO_DEVICE);
}

static int fail(const char *what, int st)
{
    fprintf(stderr, "bench_ceilings: %s: %s: %s\n", what, partile_status_string(st),
            partile_last_error_detail());
    return 1;
}

int main(int argc, char **argv)
{
    const char *backend = "auto", *json_path = NULL;
    size_t mib = 2048;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--backend") && i + 1 < argc)
            backend = argv[++i];
        else if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json_path = argv[++i];
        else if (!strcmp(argv[i], "--mib") && i + 1 < argc)
            mib = strtoul(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: bench_ceilings [--backend NAME] [--json FILE] [--mib N]\n");
            return 2;
        }
    }
    partile_context_t *ctx = NULL;
    int st = partile_context_create(backend, 0, &ctx);
    if (st < 0)
        return fail(backend, st);
    FILE *jf = json_path ? fopen(json_path, "w") : NULL;
    if (json_path && !jf) {
        perror(json_path);
        return 1;
    }
    bench_json j = { NULL, 1 };
    if (jf)
        bench_json_open(&j, jf, "ceilings", ctx);
    printf("device: %s (%s)\n", partile_context_device(ctx), partile_context_backend(ctx));

    copy_arg c = { NULL, NULL, mib << 20 };
    if ((st = partile_malloc(ctx, c.bytes, &c.src)) < 0 ||
        (st = partile_malloc(ctx, c.bytes, &c.dst)) < 0 ||
        (st = partile_memset(ctx, c.src, 0x5a, c.bytes)) < 0)
        return fail("copy buffers", st);
    partile_timing_t t;
    if ((st = partile_time(ctx, do_copy, &c, 3, 20, &t)) < 0)
        return fail("copy", st);
    double bw = 2.0 * (double)c.bytes / t.median_s;
    printf("%-28s %10.1f GB/s  (median of %d, %zu MiB, read + write)\n", "copy bandwidth",
           bw * 1e-9, t.repeats, mib);
    if (jf)
        bench_json_row(&j, "copy_bandwidth", bw, "B/s", -1, "");
    partile_free(ctx, c.src);
    partile_free(ctx, c.dst);

    double fma = 0;
    st = partile_fma_peak(ctx, &fma);
    if (st == 0) {
        printf("%-28s %10.2f TFLOP/s\n", "fp64 fma peak", fma * 1e-12);
        if (jf)
            bench_json_row(&j, "fp64_fma_peak", fma, "flop/s", -1, "");
    } else if (st != PARTILE_ERROR_UNSUPPORTED)
        return fail("fma peak", st);
    int n = 0;
    partile_mma_shape_count(ctx, &n);
    for (int i = 0; i < n; i++) {
        partile_mma_shape_t s;
        partile_mma_shape_get(ctx, i, &s);
        if (!s.available)
            continue;
        double rate;
        st = partile_mma_peak(ctx, &s.tile, &rate);
        if (st == PARTILE_ERROR_UNSUPPORTED)
            continue;
        if (st < 0)
            return fail(s.name, st);
        char name[64];
        snprintf(name, sizeof name, "tile_peak.%s", s.name);
        printf("%-28s %10.2f TFLOP/s  %5.2fx fp64 fma\n", name, rate * 1e-12,
               fma > 0 ? rate / fma : 0.0);
        if (jf)
            bench_json_row(&j, name, rate, "flop/s", fma > 0 ? rate / fma : -1, "fp64_fma_peak");
    }
    if (jf) {
        bench_json_close(&j);
        fclose(jf);
    }
    partile_context_destroy(ctx);
    return 0;
}
