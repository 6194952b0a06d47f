/* Reference FP32 matrix-free mass-matrix application (the specification
 * of partile_mass_apply_matfree_f32, include/partile/apply.h). */
#ifndef PARTILE_REFERENCE_APPLY_REF_H
#define PARTILE_REFERENCE_APPLY_REF_H

#include <stddef.h>
#include <stdint.h>

#include "partile/apply.h"

int partile_mass_apply_matfree_f32_ref(const partile_mass_params_t *p, size_t n,
                                       const partile_vectors_t *pos, const int64_t *off,
                                       const float *q, const partile_vectors_t *omega,
                                       const float *x, float *y, int64_t *bad);

#endif
