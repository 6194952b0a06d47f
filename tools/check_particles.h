/* `partile check` for the particle operations: binning and sorting
 * (sort, re-sort), deposit/gather, the mass matrix and its apply run on a backend and
 * on the reference with the same fresh random particles; integer results
 * and FP64 values of the bitwise paths must be equal to the bit, the
 * unsorted (atomic) deposit within 1e-12 of the sum of |W·v|, the relaxed
 * mass matrix within 1e-12 of its largest entry. */
#ifndef PARTILE_TOOLS_CHECK_PARTICLES_H
#define PARTILE_TOOLS_CHECK_PARTICLES_H

#include <stdint.h>
#include <stdio.h>

#include "partile/partile.h"

typedef struct partile_particle_check {
    int cases;      /* cases run */
    int mismatches; /* cases whose result differs */
} partile_particle_check_t;

/* Runs the sort group ("sort"), the transfer group ("deposit"), the
 * mass-matrix group ("mass") or the apply group ("apply": y = M x,
 * matrix-free by point and by cell, assembled, FP32) on ctx.
 * Mismatches are described on log. Returns a partile status. */
int partile_check_sort(partile_context_t *ctx, uint64_t seed, FILE *log,
                       partile_particle_check_t *result);
int partile_check_transfer(partile_context_t *ctx, uint64_t seed, FILE *log,
                           partile_particle_check_t *result);
int partile_check_mass(partile_context_t *ctx, uint64_t seed, FILE *log,
                       partile_particle_check_t *result);
int partile_check_apply(partile_context_t *ctx, uint64_t seed, FILE *log,
                        partile_particle_check_t *result);

#endif
