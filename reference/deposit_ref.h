/* Reference deposit and gather (the specification of include/partile/deposit.h). */
#ifndef PARTILE_REFERENCE_DEPOSIT_REF_H
#define PARTILE_REFERENCE_DEPOSIT_REF_H

#include <stddef.h>
#include <stdint.h>

#include "partile/deposit.h"

int partile_deposit_ref(const partile_transfer_t *t, size_t n, const partile_vectors_t *pos,
                        const double *values, const int64_t *cell_offsets, double *field,
                        int64_t *bad);
int partile_gather_ref(const partile_transfer_t *t, size_t n, const partile_vectors_t *pos,
                       const double *field, double *values, int64_t *bad);

#endif
