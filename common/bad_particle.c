/* The detail of an error that names one particle (common/bad_particle.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/bad_particle.h"
#include "common/binning.h"
#include "common/error.h"

static const char *axis_name(int a) { return a == 0 ? "x" : a == 1 ? "y" : "z"; }

int partile_read_value(partile_context_t *ctx, const void *array, partile_dtype_t type, int64_t i,
                       double *value)
{
    if (!array || i < 0)
        return -1;
    if (type == PARTILE_DTYPE_FLOAT32) {
        float f;
        if (partile_memcpy(ctx, &f, (const float *)array + i, sizeof f,
                           PARTILE_COPY_DEVICE_TO_HOST) < 0)
            return -1;
        *value = (double)f;
        return 0;
    }
    if (type != PARTILE_DTYPE_FLOAT64)
        return -1;
    return partile_memcpy(ctx, value, (const double *)array + i, sizeof *value,
                          PARTILE_COPY_DEVICE_TO_HOST) < 0
               ? -1
               : 0;
}

/* Appends to buf (size bytes, NUL-terminated, truncated if full). */
static void append(char *buf, size_t size, const char *fmt, ...)
{
    const size_t used = strlen(buf);
    if (used + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, size - used, fmt, ap);
    va_end(ap);
}

/* What the position says about status, appended; 1 if it explains it
 * (*noted: something was appended that does not). */
static int explain(char *buf, size_t size, int status, const partile_grid_t *g, const double x[3],
                   int *noted)
{
    for (int a = 0; a < g->dim; a++) {
        int64_t cell;
        const int code =
            partile_axis_cell(x[a], g->lower[a], g->spacing[a], g->cells[a], g->periodic[a], &cell);
        const double upper = g->lower[a] + (double)g->cells[a] * g->spacing[a];
        if (status == PARTILE_ERROR_NOT_FINITE && code == PARTILE_BIN_NOT_FINITE) {
            append(buf, size, ": its %s coordinate is %s", axis_name(a),
                   isnan(x[a]) ? "NaN" : x[a] > 0 ? "+infinity" : "-infinity");
            return 1;
        }
        if (status == PARTILE_ERROR_OUT_OF_DOMAIN && code == PARTILE_BIN_OUT_OF_DOMAIN) {
            if (g->periodic[a])
                append(buf, size,
                       ": %s = %.17g is 2^52 or more cells (of %.17g) away from the periodic %s "
                       "axis [%.17g, %.17g)",
                       axis_name(a), x[a], g->spacing[a], axis_name(a), g->lower[a], upper);
            else
                append(buf, size,
                       ": %s = %.17g is outside [%.17g, %.17g), the non-periodic %s axis",
                       axis_name(a), x[a], g->lower[a], upper, axis_name(a));
            return 1;
        }
    }
    if (status == PARTILE_ERROR_NOT_SORTED) {
        int64_t cell;
        if (partile_cell_of(g, x, &cell) == PARTILE_BIN_OK) {
            append(buf, size, ": it bins to cell %lld", (long long)cell);
            *noted = 1; /* where it is listed instead is the caller's cause */
        }
    }
    return 0;
}

int partile_fail_particle(partile_context_t *ctx, int status, int64_t bad,
                          const partile_grid_t *grid, const partile_vectors_t *pos,
                          const char *cause)
{
    char buf[512];
    snprintf(buf, sizeof buf, "particle %lld", (long long)bad);
    double x[3] = { 0.0, 0.0, 0.0 };
    int have = grid && pos && grid->dim >= 1 && grid->dim <= 3 && bad >= 0;
    for (int a = 0; have && a < grid->dim; a++)
        have = partile_read_value(ctx, pos->axis[a], pos->type, bad, &x[a]) == 0;
    int explained = 0, noted = 0;
    if (have) {
        append(buf, sizeof buf, " at (");
        for (int a = 0; a < grid->dim; a++)
            append(buf, sizeof buf, a ? ", %.17g" : "%.17g", x[a]);
        append(buf, sizeof buf, ")");
        explained = explain(buf, sizeof buf, status, grid, x, &noted);
    }
    if (!(cause && cause[0]) && status == PARTILE_ERROR_NOT_SORTED)
        cause = "cell_offsets lists it in another cell's range (particles not sorted by that "
                "cell list)";
    if (!explained)
        append(buf, sizeof buf, "%s%s", noted ? "; " : ": ",
               cause && cause[0] ? cause : partile_status_string(status));
    return partile_fail(status, "%s", buf);
}

int partile_report_particle(partile_context_t *ctx, int status, int64_t bad,
                            const partile_grid_t *grid, const partile_vectors_t *pos,
                            const char *cause, int64_t *bad_particle)
{
    if (status >= 0 || bad < 0)
        return status;
    if (bad_particle)
        *bad_particle = bad;
    if (status == PARTILE_ERROR_OUT_OF_DOMAIN || status == PARTILE_ERROR_NOT_FINITE ||
        status == PARTILE_ERROR_NOT_SORTED || (cause && cause[0]))
        return partile_fail_particle(ctx, status, bad, grid, pos, cause);
    return partile_fail(status, "particle %lld: %s", (long long)bad, partile_status_string(status));
}
