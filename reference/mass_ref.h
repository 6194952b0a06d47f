/* Reference mass-matrix assembly (the specification of include/partile/mass.h). */
#ifndef PARTILE_REFERENCE_MASS_REF_H
#define PARTILE_REFERENCE_MASS_REF_H

#include <stddef.h>
#include <stdint.h>

#include "partile/mass.h"
#include "partile/apply.h"

int partile_mass_assemble_ref(const partile_mass_params_t *p, size_t n,
                              const partile_vectors_t *pos, const int64_t *off, const double *q,
                              const partile_vectors_t *omega, double *storage, int64_t *bad);

int partile_mass_omega_ref(const partile_mass_params_t *p, size_t n,
                           const partile_vectors_t *pos, const partile_vectors_t *omega,
                           double *w, int64_t *bad);
int partile_mass_apply_matfree_ref(const partile_mass_params_t *p, size_t n,
                                   const partile_vectors_t *pos, const int64_t *off,
                                   const double *q, const partile_vectors_t *omega,
                                   const double *x, double *y, int64_t *bad);
int partile_mass_apply_assembled_ref(const partile_mass_params_t *p, const double *storage,
                                     const double *x, double *y);

#endif
