/* Reference binning and stable counting sort by cell, and the movers-only
 * re-sort. Serial where order matters, OpenMP where it cannot change the
 * result (independent per-particle work; the first bad particle is the
 * minimum index over threads). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/binning.h"
#include "common/error.h"
#include "reference/sort_ref.h"

static int bin_status(int code)
{
    return code == PARTILE_BIN_NOT_FINITE ? PARTILE_ERROR_NOT_FINITE
           : code == PARTILE_BIN_NOT_SORTED ? PARTILE_ERROR_NOT_SORTED
                                            : PARTILE_ERROR_OUT_OF_DOMAIN;
}

/* cell[p] for all p; on failure the lowest bad particle and its kind. */
static int bin_all(const partile_grid_t *g, size_t n, const partile_vectors_t *pos,
                   int64_t *cell, int64_t *bad)
{
    int64_t first = INT64_MAX;
    int first_code = 0;
#pragma omp parallel
    {
        int64_t my = INT64_MAX;
        int my_code = 0;
#pragma omp for schedule(static)
        for (int64_t p = 0; p < (int64_t)n; p++) {
            double x[3];
            for (int a = 0; a < g->dim; a++)
                x[a] = partile_vector_at(pos, a, p);
            int code = partile_cell_of(g, x, &cell[p]);
            if (code && p < my) {
                my = p;
                my_code = code;
            }
        }
#pragma omp critical
        if (my < first) {
            first = my;
            first_code = my_code;
        }
    }
    if (first == INT64_MAX)
        return 0;
    *bad = first;
    return bin_status(first_code);
}

int partile_bin_ref(const partile_grid_t *g, size_t n, const partile_vectors_t *pos,
                    int64_t *cell, int64_t *bad)
{
    int64_t *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "binning scratch");
    int st = bin_all(g, n, pos, tmp, bad);
    if (st == 0)
        memcpy(cell, tmp, n * sizeof *tmp);
    free(tmp);
    return st;
}

/* Stable counting sort of keys[0..n) into ncells buckets. */
void partile_counting_sort_ref(int64_t ncells, size_t n, const int64_t *keys, int64_t *offsets,
                          int64_t *perm, int64_t *sorted_cell)
{
    memset(offsets, 0, (size_t)(ncells + 1) * sizeof *offsets);
    for (size_t p = 0; p < n; p++)
        offsets[keys[p] + 1]++;
    for (int64_t c = 0; c < ncells; c++)
        offsets[c + 1] += offsets[c];
    /* offsets[c] is used as the cursor of cell c, then restored */
    for (size_t p = 0; p < n; p++)
        perm[offsets[keys[p]]++] = (int64_t)p;
    for (int64_t c = ncells; c > 0; c--)
        offsets[c] = offsets[c - 1];
    offsets[0] = 0;
    if (sorted_cell)
        for (size_t i = 0; i < n; i++)
            sorted_cell[i] = keys[perm[i]];
}

int partile_sort_ref(const partile_grid_t *g, int64_t ncells, size_t n,
                     const partile_vectors_t *pos, int64_t *offsets, int64_t *perm,
                     int64_t *sorted_cell, int64_t *bad)
{
    int64_t *keys = malloc(n * sizeof *keys);
    if (!keys)
        return partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "sort scratch");
    int st = bin_all(g, n, pos, keys, bad);
    if (st == 0)
        partile_counting_sort_ref(ncells, n, keys, offsets, perm, sorted_cell);
    free(keys);
    return st;
}

/* A cell list (offsets) must run from 0 to n without going back, and place
 * every particle (cell[p]) inside its own cell's range; NOT_SORTED names
 * the first particle that is not, or particle 0 for a malformed list. */
int partile_check_cell_list_ref(int64_t ncells, size_t n, const int64_t *off,
                                const int64_t *cell, int64_t *bad)
{
    if (off[0] != 0 || off[ncells] != (int64_t)n) {
        *bad = 0;
        return PARTILE_ERROR_NOT_SORTED;
    }
    for (int64_t c = 0; c < ncells; c++)
        if (off[c] > off[c + 1]) {
            *bad = 0;
            return PARTILE_ERROR_NOT_SORTED;
        }
    for (size_t p = 0; p < n; p++) {
        int64_t c = cell[p];
        if (c < 0 || c >= ncells || off[c] > (int64_t)p || (int64_t)p >= off[c + 1]) {
            *bad = (int64_t)p;
            return PARTILE_ERROR_NOT_SORTED;
        }
    }
    return 0;
}

/* Movers-only re-sort. A stayer p of cell c lands at
 *   offsets[c] + (movers into c before c's old block) + (its rank among c's stayers);
 * the r-th mover into c (by index) at
 *   offsets[c] + r + (c's stayers if the mover comes after c's old block, else 0).
 * Only the movers are sorted (by new cell, stably). */
int partile_resort_ref(const partile_grid_t *g, int64_t ncells, size_t n,
                       const partile_vectors_t *pos, const int64_t *old_off,
                       const int64_t *old_cell, int64_t *offsets, int64_t *perm,
                       int64_t *sorted_cell, int64_t *bad)
{
    int st = partile_check_cell_list_ref(ncells, n, old_off, old_cell, bad);
    if (st)
        return st;
    int64_t *keys = malloc(n * sizeof *keys);
    int64_t *moved_in = calloc((size_t)ncells + 1, sizeof *moved_in);
    int64_t *moved_out = calloc((size_t)ncells, sizeof *moved_out);
    int64_t *before_run = calloc((size_t)ncells, sizeof *before_run);
    int64_t *movers = NULL;
    if (!keys || !moved_in || !moved_out || !before_run) {
        st = partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "re-sort scratch");
        goto done;
    }
    if ((st = bin_all(g, n, pos, keys, bad)) != 0)
        goto done;
    int64_t nmovers = 0;
    for (size_t p = 0; p < n; p++)
        if (keys[p] != old_cell[p]) {
            moved_out[old_cell[p]]++;
            moved_in[keys[p] + 1]++;
            nmovers++;
        }
    /* new offsets: stayers + movers in */
    offsets[0] = 0;
    for (int64_t c = 0; c < ncells; c++)
        offsets[c + 1] = offsets[c] + (old_off[c + 1] - old_off[c]) - moved_out[c] +
                         moved_in[c + 1];
    /* movers grouped by new cell, in index order (stable) */
    for (int64_t c = 0; c < ncells; c++)
        moved_in[c + 1] += moved_in[c];
    movers = malloc(((size_t)nmovers + 1) * sizeof *movers);
    if (!movers) {
        st = partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "re-sort movers");
        goto done;
    }
    for (size_t p = 0; p < n; p++)
        if (keys[p] != old_cell[p]) {
            int64_t c = keys[p];
            int64_t at = moved_in[c]++;
            movers[at] = (int64_t)p;
            if ((int64_t)p < old_off[c])
                before_run[c]++;
        }
    for (int64_t c = ncells; c > 0; c--) /* restore moved_in to segment starts */
        moved_in[c] = moved_in[c - 1];
    moved_in[0] = 0;
    /* stayers: rank among the stayers of their cell, in index order */
    int64_t stayer_rank = 0, current = -1;
    for (size_t p = 0; p < n; p++) {
        int64_t c = old_cell[p];
        if (c != current) {
            current = c;
            stayer_rank = 0;
        }
        if (keys[p] != c)
            continue;
        perm[offsets[c] + before_run[c] + stayer_rank++] = (int64_t)p;
    }
    for (int64_t c = 0; c < ncells; c++) {
        int64_t stayers = (old_off[c + 1] - old_off[c]) - moved_out[c];
        for (int64_t j = moved_in[c]; j < moved_in[c + 1]; j++) {
            int64_t q = movers[j], r = j - moved_in[c];
            perm[offsets[c] + r + (q < old_off[c] ? 0 : stayers)] = q;
        }
    }
    if (sorted_cell)
        for (size_t i = 0; i < n; i++)
            sorted_cell[i] = keys[perm[i]];
done:
    free(keys);
    free(moved_in);
    free(moved_out);
    free(before_run);
    free(movers);
    return st;
}

int partile_check_permutation_ref(size_t n, const int64_t *perm, int64_t *bad)
{
    unsigned char *seen = calloc(n, 1);
    if (!seen)
        return partile_fail(PARTILE_ERROR_OUT_OF_MEMORY, "permutation check");
    int st = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t v = perm[i];
        if (v < 0 || v >= (int64_t)n || seen[v]++) {
            *bad = (int64_t)i;
            st = PARTILE_ERROR_INVALID_ARGUMENT;
            break;
        }
    }
    free(seen);
    return st;
}

int partile_permute_ref(size_t n, const int64_t *perm, int count, const partile_array_t *arrays,
                        void *scratch)
{
    for (int a = 0; a < count; a++) {
        size_t sz = partile_dtype_size(arrays[a].type);
        const unsigned char *src = arrays[a].data;
        unsigned char *tmp = scratch;
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < (int64_t)n; i++)
            memcpy(tmp + (size_t)i * sz, src + (size_t)perm[i] * sz, sz);
        memcpy(arrays[a].data, scratch, n * sz);
    }
    return 0;
}
