/* Shared helpers for partile's benchmark drivers: a tiny JSON writer and
 * argument parsing. Timing itself is partile_time() (events on GPUs,
 * warm-up, median of repeats). */
#ifndef PARTILE_BENCH_UTIL_H
#define PARTILE_BENCH_UTIL_H

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "partile/partile.h"

typedef struct bench_json {
    FILE *f;
    int first; /* no comma before the next member */
} bench_json;

static inline void bench_json_open(bench_json *j, FILE *f, const char *bench,
                                   partile_context_t *ctx)
{
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    j->f = f;
    fprintf(f, "{\n  \"benchmark\": \"%s\",\n  \"partile\": \"%s\",\n  \"date\": \"%s\",\n"
               "  \"backend\": \"%s\",\n  \"device\": \"%s\",\n  \"results\": [",
            bench, partile_version(), date, partile_context_backend(ctx),
            partile_context_device(ctx));
    j->first = 1;
}

/* One result row: name, value, unit, and a ratio against a ceiling
 * (pass ratio < 0 when there is none). */
static inline void bench_json_row(bench_json *j, const char *name, double value,
                                  const char *unit, double ratio, const char *ratio_of)
{
    fprintf(j->f, "%s\n    {\"name\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"",
            j->first ? "" : ",", name, value, unit);
    if (ratio >= 0)
        fprintf(j->f, ", \"ratio\": %.4f, \"ratio_of\": \"%s\"", ratio, ratio_of);
    fprintf(j->f, "}");
    j->first = 0;
}

/* The periodic unit box of dimension dim, `side` cells an axis (one cell,
 * of width 1, along the axes past dim). */
static inline partile_grid_t bench_unit_box(int dim, int side)
{
    partile_grid_t grid;
    memset(&grid, 0, sizeof grid);
    grid.dim = dim;
    for (int d = 0; d < 3; d++) {
        grid.cells[d] = d < dim ? side : 1;
        grid.spacing[d] = d < dim ? 1.0 / side : 1.0;
        grid.periodic[d] = 1;
    }
    return grid;
}

/* The benchmarks' grid: side³ cells of the unit cube, every axis periodic. */
static inline partile_grid_t bench_unit_cube(int side) { return bench_unit_box(3, side); }

static inline void bench_json_close(bench_json *j) { fprintf(j->f, "\n  ]\n}\n"); }

static inline int bench_copy_2gib(partile_context_t *ctx, void *arg)
{
    void **p = (void **)arg;
    return partile_memcpy(ctx, p[0], p[1], (size_t)1 << 31, PARTILE_COPY_DEVICE_TO_DEVICE);
}

/* Device copy bandwidth measured now (bytes read + written per second), the
 * memory ceiling of the roofline columns; negative status on failure. */
static inline int bench_copy_bandwidth(partile_context_t *ctx, double *bytes_per_second)
{
    void *bw[2] = { NULL, NULL };
    partile_timing_t t;
    int st = partile_malloc(ctx, (size_t)1 << 31, &bw[0]);
    if (st >= 0)
        st = partile_malloc(ctx, (size_t)1 << 31, &bw[1]);
    if (st >= 0)
        st = partile_memset(ctx, bw[1], 1, (size_t)1 << 31);
    if (st >= 0)
        st = partile_time(ctx, bench_copy_2gib, bw, 2, 10, &t);
    if (st >= 0)
        *bytes_per_second = 2.0 * (double)((size_t)1 << 31) / t.median_s;
    partile_free(ctx, bw[0]);
    partile_free(ctx, bw[1]);
    return st;
}

#endif
