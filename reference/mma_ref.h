/* The reference tile engine: the specification every other engine is
 * compared with. One entry of D is a forward chain of fma() over k, starting
 * from C, over the depth padded with zeros to a multiple of the tile's Kt. */
#ifndef PARTILE_REFERENCE_MMA_REF_H
#define PARTILE_REFERENCE_MMA_REF_H

#include <stddef.h>

#include "partile/mma.h"

int partile_mma_batched_ref(const partile_tile_t *tile, size_t batch, int rows,
                            int cols, int depth, const void *a, const void *b,
                            const void *c, void *d);

#endif
