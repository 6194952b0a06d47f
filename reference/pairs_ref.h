/* Reference pair interactions (the specification of include/partile/pairs.h). */
#ifndef PARTILE_REFERENCE_PAIRS_REF_H
#define PARTILE_REFERENCE_PAIRS_REF_H

#include <stddef.h>
#include <stdint.h>

#include "partile/pairs.h"

int partile_pairs_ref(const partile_grid_t *g, const partile_pair_params_t *pp, size_t n,
                      const partile_vectors_t *pos, const int64_t *off, partile_vectors_t *force,
                      void *scalar, int64_t *bad);

#endif
