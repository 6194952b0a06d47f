/* The detail of an error that names one particle (partile_last_error_detail):
 * where the particle is and what is wrong with it, so that a caller who
 * reads "particle 17" also reads which coordinate and which bound. Shared by
 * the front ends of sort, deposit/gather, the mass matrix, its apply and
 * the pair interactions. */
#ifndef PARTILE_COMMON_BAD_PARTICLE_H
#define PARTILE_COMMON_BAD_PARTICLE_H

#include <stdint.h>

#include "partile/context.h"
#include "partile/sort.h"

/* Records the detail of status for particle bad and returns status. The
 * particle's coordinates are read back from pos (context memory: one small
 * copy per axis, on the error path only). The detail names the particle, its
 * position, and:
 *  - NOT_FINITE: the first coordinate that is NaN or infinite;
 *  - OUT_OF_DOMAIN: the first coordinate outside its axis (the bounds of a
 *    non-periodic axis, or 2^52 cells from a periodic one);
 *  - NOT_SORTED: the cell the position bins to;
 * and where the position does not explain the status, `cause` (what only
 * the caller knows: "its omega (…) is not finite"), or if cause is NULL or
 * "": for NOT_SORTED that cell_offsets lists it in another cell's range,
 * else the status's own text. A copy that fails leaves the position out. */
int partile_fail_particle(partile_context_t *ctx, int status, int64_t bad,
                          const partile_grid_t *grid, const partile_vectors_t *pos,
                          const char *cause);

/* A call's error naming its first bad particle, as every front end reports
 * it: status as it is where it is no error or names no particle (bad < 0);
 * else *bad_particle = bad (where bad_particle is given) and the detail of
 * partile_fail_particle for the particle statuses (OUT_OF_DOMAIN,
 * NOT_FINITE, NOT_SORTED) and wherever the caller gives a cause, else
 * "particle N: <status>". */
int partile_report_particle(partile_context_t *ctx, int status, int64_t bad,
                            const partile_grid_t *grid, const partile_vectors_t *pos,
                            const char *cause, int64_t *bad_particle);

/* Reads value i of a FLOAT64 or FLOAT32 array in context memory as a double;
 * 0 on success. For the callers' causes (ω, OVERLAP sizes). */
int partile_read_value(partile_context_t *ctx, const void *array, partile_dtype_t type, int64_t i,
                       double *value);

#endif
