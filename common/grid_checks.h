/* The grid checks behind partile_grid_cell_count and partile_field_shape,
 * for the library's own calls. The public functions forget the thread's
 * last failure detail first, as every API call does (status.h); a call made
 * inside another would forget that call's detail, so the library calls
 * these instead, which only record one on failure. */
#ifndef PARTILE_COMMON_GRID_CHECKS_H
#define PARTILE_COMMON_GRID_CHECKS_H

#include <stdint.h>

#include "partile/deposit.h"
#include "partile/sort.h"

#ifdef __cplusplus
extern "C" {
#endif

/* partile_grid_cell_count without clearing the detail. */
int partile_count_grid_cells(const partile_grid_t *grid, int64_t *count);

/* partile_field_shape without clearing the detail. */
int partile_count_field_points(const partile_grid_t *grid, partile_centering_t centering,
                               int64_t points[3], int64_t *total);

#ifdef __cplusplus
}
#endif
#endif
