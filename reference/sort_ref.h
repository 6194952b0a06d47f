/* Reference binning and sorting (the specification of include/partile/sort.h). */
#ifndef PARTILE_REFERENCE_SORT_REF_H
#define PARTILE_REFERENCE_SORT_REF_H

#include <stddef.h>
#include <stdint.h>

#include "partile/sort.h"

int partile_bin_ref(const partile_grid_t *g, size_t n, const partile_vectors_t *pos,
                    int64_t *cell, int64_t *bad);
int partile_sort_ref(const partile_grid_t *g, int64_t ncells, size_t n,
                     const partile_vectors_t *pos, int64_t *offsets, int64_t *perm,
                     int64_t *sorted_cell, int64_t *bad);
int partile_resort_ref(const partile_grid_t *g, int64_t ncells, size_t n,
                       const partile_vectors_t *pos, const int64_t *old_off,
                       const int64_t *old_cell, int64_t *offsets, int64_t *perm,
                       int64_t *sorted_cell, int64_t *bad);
void partile_counting_sort_ref(int64_t ncells, size_t n, const int64_t *keys, int64_t *offsets,
                               int64_t *perm, int64_t *sorted_cell);
int partile_check_cell_list_ref(int64_t ncells, size_t n, const int64_t *off,
                                const int64_t *cell, int64_t *bad);
int partile_check_permutation_ref(size_t n, const int64_t *perm, int64_t *bad);
int partile_permute_ref(size_t n, const int64_t *perm, int count, const partile_array_t *arrays,
                        void *scratch);

#endif
