/* Reference deposit and gather (the specification of include/partile/deposit.h). */
#ifndef PARTILE_REFERENCE_DEPOSIT_REF_H
#define PARTILE_REFERENCE_DEPOSIT_REF_H

#include <stddef.h>
#include <stdint.h>

#include "partile/deposit.h"

int partile_deposit_ref(const partile_transfer_t *t, size_t n, const partile_vectors_t *pos,
                        const double *values, const int64_t *cell_offsets, double *field,
                        int64_t *bad);
/* Particle p's stencil entries (positions already checked) in the
 * specified order (z outermost, x innermost, each axis from its lowest point
 * up): each one's stored point and weight (w_x · w_y) · w_z. Returns their
 * count (at most 27). */
int partile_stencil_entries_ref(const partile_transfer_t *t, const partile_vectors_t *pos,
                                int64_t p, int64_t point[27], double weight[27]);
int partile_gather_ref(const partile_transfer_t *t, size_t n, const partile_vectors_t *pos,
                       const double *field, double *values, int64_t *bad);

#endif
