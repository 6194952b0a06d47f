/* Argument checks shared by mass-matrix assembly and its matrix-free
 * application (common/mass.c, common/apply.c). */
#ifndef PARTILE_COMMON_MASS_CHECKS_H
#define PARTILE_COMMON_MASS_CHECKS_H

#include <stddef.h>
#include <stdint.h>

#include "partile/mass.h"

/* Positions (FLOAT64/FLOAT32, one array per axis) and, for the tensor kind,
 * ω (three FLOAT64 arrays) or a B field with a finite β/c. */
int partile_mass_check_particles(const partile_mass_params_t *p, size_t n,
                                 const partile_vectors_t *pos, const partile_vectors_t *omega);

/* A backend's status: names the bad particle (detail and *bad_particle):
 * where it is, and which of its position, cell or ω is wrong. omega as the
 * call had it (FLOAT64, or FLOAT32 for the FP32 apply; NULL: from
 * p->bfield, or scalar). */
int partile_mass_report(partile_context_t *ctx, const partile_mass_params_t *p,
                        const partile_vectors_t *pos, const partile_vectors_t *omega, int status,
                        int64_t bad, int64_t *bad_particle);

#endif
